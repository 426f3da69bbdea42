// A stand-in for Prometheus's instant-query API (POST /api/v1/query), for HTTP tests of routes that read
// measured load: each query is answered by `answer` (the series it returns, by deployment), or refused while
// `down` is set. Every query asked is kept in `queries`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PrometheusStandIn {
  readonly url: string;
  readonly queries: string[];
  down: boolean;
  close(): Promise<void>;
}

export async function startPrometheusStandIn(answer: (query: string) => ReadonlyArray<{ deployment: string; value: number }>): Promise<PrometheusStandIn> {
  const queries: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    req.on('end', () => {
      const query = new URLSearchParams(body).get('query') ?? '';
      queries.push(query);
      res.setHeader('content-type', 'application/json');
      if (standIn.down) return res.end(JSON.stringify({ status: 'error', error: 'stand-in down' }));
      const result = answer(query).map((s) => ({ metric: { deployment: s.deployment }, value: [Date.now() / 1000, String(s.value)] }));
      res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const standIn: PrometheusStandIn = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    queries,
    down: false,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return standIn;
}
