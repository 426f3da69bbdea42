// The floor under any gateway, for bench:inference: a process that does nothing but relay a POST to one model
// server and stream its answer back (Node's http server and a kept-alive client, no checks, no accounting).
// What it adds to the first token is what a hop through a Node process costs on this machine; what Kiln's
// gateway adds beyond it is Kiln's own work. Run as `node bench/support/bare-proxy.ts <upstream origin> <port>`,
// or started with startBareProxy.
import http from 'node:http';
import { join } from 'node:path';
import { freePort, startProcess, waitUntilReady } from '../../infra/servers/process.ts';

export interface BareProxy {
  readonly url: string;
  stop(): Promise<void>;
}

export async function startBareProxy(upstreamOrigin: string): Promise<BareProxy> {
  const port = await freePort();
  const proxy = await startProcess('bare proxy', process.execPath, [import.meta.filename, upstreamOrigin, String(port)], {
    logFile: join(process.env.DATA_DIR ?? '.data', 'bench', 'logs', `bare-proxy-${port}.log`),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(proxy, async () => (await fetch(`${url}/ready`)).ok, 30_000);
  return { url, stop: proxy.stop };
}

function serve(upstreamOrigin: string, port: number): void {
  const upstream = new URL(upstreamOrigin);
  const agent = new http.Agent({ keepAlive: true });
  http.createServer((req, res) => {
    if (req.url === '/ready') return void res.end('ok');
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forwarded = http.request({
        host: upstream.hostname, port: upstream.port, path: req.url, method: 'POST', agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/json' });
        answer.pipe(res);
      });
      forwarded.on('error', () => res.destroy());
      forwarded.end(body);
    });
  }).listen(port, '127.0.0.1');
}

if (process.argv[1] === import.meta.filename) serve(process.argv[2]!, Number(process.argv[3]));
