// Requests Node's HTTP parser refuses before any Koa middleware sees them: a request line (the URL) and headers
// over its 16 KB limit, or a malformed request. Node would answer them with a bare status and no body; they are
// answered here in the error format of the surface the request line names, as Kiln answers everything else.
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { describeError, reasonPhrase, RequestHeadersTooLargeError, BadRequestError, type ErrorDescription } from '../core/errors.ts';
import { errorBody, surfaceOf } from './surface.ts';

/** The path of the request line, as far as it was read (a URL over the limit is cut short, its start is enough). */
function pathOf(rawPacket: Buffer | undefined): string {
  const line = rawPacket?.subarray(0, 64).toString('latin1') ?? '';
  return /^[A-Z]+ (\/[^\s?]*)/.exec(line)?.[1] ?? '/';
}

function describe(error: NodeJS.ErrnoException): ErrorDescription {
  if (error.code === 'HPE_HEADER_OVERFLOW') return describeError(new RequestHeadersTooLargeError('The request line and headers exceed 16 KB'));
  return describeError(new BadRequestError('The request is not valid HTTP'));
}

/** Installs the answer on an API or gateway server (control-plane/server.ts, gateway/server.ts). */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex & { _httpMessage?: { headersSent?: boolean } }) => {
    // A connection reset, or one whose answer has started, has nobody to tell (Node's own handling does the same).
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const described = describe(error);
    const body = JSON.stringify(errorBody(surfaceOf(pathOf(error.rawPacket)), described));
    socket.end(`HTTP/1.1 ${described.status} ${reasonPhrase(described.status)}\r\n`
      + 'Content-Type: application/json; charset=utf-8\r\n'
      + `Content-Length: ${Buffer.byteLength(body)}\r\n`
      + 'Connection: close\r\n\r\n'
      + body);
  });
}
