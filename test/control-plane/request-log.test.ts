// One log line per request, at info, but for probes and scrapes answered well: those repeat every few seconds
// and are logged at debug, so an idle API's log stays quiet.
import test from 'ava';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startTestApi, type TestApi } from '../support/control-plane.ts';

const lines: { msg: string; path?: string; status?: number }[] = [];
let api: TestApi;

test.before(async () => {
  const log = pino({ level: 'info' }, new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } }));
  api = await startTestApi(import.meta.filename, { log });
});
test.after.always(() => api?.close());

const logged = (path: string) => lines.filter((line) => line.msg === 'request' && line.path === path);

test('a health check answered 200 writes no info line; an ordinary request and a refused scrape each write one', async (t) => {
  for (let i = 0; i < 3; i++) t.is((await api.request('GET', '/v1/health')).status, 200);
  t.is((await api.request('GET', '/api/health')).status, 200);
  t.is((await api.request('GET', '/api/deployments')).status, 401);
  t.is((await api.request('GET', '/metrics/internal')).status >= 400, true);
  t.deepEqual(logged('/v1/health'), []);
  t.deepEqual(logged('/api/health'), []);
  t.like(logged('/api/deployments'), [{ status: 401 }]);
  t.is(logged('/metrics/internal').length, 1);
});
