// The log of one simulated vLLM server, one file per pod, in the CRI format the kubelet keeps container logs
// in (`<RFC 3339 time> stdout F <line>`), so kwok can serve it as the pod's log. The lines look like vLLM's
// own: its logger (`INFO 10-02 12:34:56 [file.py:line] message`) and uvicorn's access lines.
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { STATUS_CODES } from 'node:http';

export interface ServerLog {
  /** A line from vLLM's logger; `source` is the `file.py:line` it names. */
  info(source: string, message: string): void;
  warning(source: string, message: string): void;
  error(source: string, message: string): void;
  /** uvicorn's access line for a request. */
  access(remote: { address?: string; port?: number }, method: string, path: string, status: number): void;
  /** A line as it is (uvicorn's own startup lines). */
  raw(line: string): void;
  close(): Promise<void>;
}

const pad = (n: number) => String(n).padStart(2, '0');
/** vLLM's timestamp: month-day hour:minute:second, local time. */
const vllmTime = (d: Date) => `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;

export async function openServerLog(file: string): Promise<ServerLog> {
  await mkdir(dirname(file), { recursive: true });
  const out: WriteStream = createWriteStream(file, { flags: 'a' });
  out.on('error', () => { /* a log that cannot be written must not take the server down */ });
  const raw = (line: string) => { if (!out.writableEnded) out.write(`${new Date().toISOString()} stdout F ${line}\n`); };
  const logger = (level: string) => (source: string, message: string) => raw(`${level} ${vllmTime(new Date())} [${source}] ${message}`);
  return {
    info: logger('INFO'),
    warning: logger('WARNING'),
    error: logger('ERROR'),
    access: (remote, method, path, status) =>
      raw(`INFO:     ${remote.address ?? '-'}:${remote.port ?? 0} - "${method} ${path} HTTP/1.1" ${status} ${STATUS_CODES[status] ?? ''}`),
    raw,
    close: () => new Promise<void>((resolve) => out.end(resolve)),
  };
}
