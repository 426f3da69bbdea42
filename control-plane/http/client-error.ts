// Requests Node's HTTP server refuses before any Koa middleware sees them: a request line (the URL) and headers
// over its 16 KB limit, headers that do not arrive in time, or a malformed request. Node would answer them with a
// bare status and no body; they are answered here with the same status in the error format of the surface the
// request line names, as Kiln answers everything else.
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { BadRequestError, describeError, PayloadTooLargeError, reasonPhrase, RequestHeadersTooLargeError, RequestTimeoutError, type ErrorDescription } from '../core/errors.ts';
import { errorBody, surfaceOf } from './surface.ts';

/** The path of the request line, as far as it was read (a URL over the limit is cut short, its start is enough). */
function pathOf(rawPacket: Buffer | undefined): string {
  const line = rawPacket?.subarray(0, 64).toString('latin1') ?? '';
  return /^[A-Z]+ (\/[^\s?]*)/.exec(line)?.[1] ?? '/';
}

/** The status Node itself would answer (431, 413, 408, else 400), with Kiln's code and message. */
function describe(error: NodeJS.ErrnoException): ErrorDescription {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW': return describeError(new RequestHeadersTooLargeError('The request line and headers exceed 16 KB'));
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW': return describeError(new PayloadTooLargeError('Chunk extensions exceed the limit'));
    case 'ERR_HTTP_REQUEST_TIMEOUT': return describeError(new RequestTimeoutError('The request did not arrive in time'));
    default: return describeError(new BadRequestError('The request is not valid HTTP'));
  }
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
