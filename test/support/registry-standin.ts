// A STAND-IN for a Docker registry, not one: GET /v2/ with HTTP basic authentication answers 200 for the one
// user and password it knows and 401 with a Basic challenge otherwise, as a registry does (the v2 API's base check).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const STANDIN_REGISTRY_USER = 'kiln-bot';
export const STANDIN_REGISTRY_PASSWORD = 'registry-standin-password-7x9q';

export async function startRegistryStandin(): Promise<{ url: string; close(): Promise<void> }> {
  const expected = `Basic ${Buffer.from(`${STANDIN_REGISTRY_USER}:${STANDIN_REGISTRY_PASSWORD}`).toString('base64')}`;
  const server = createServer((req, res) => {
    if (req.url !== '/v2/') return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"code":"NOT_FOUND"}]}');
    if (req.headers.authorization === expected) return void res.writeHead(200, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0' }).end('{}');
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="Registry Realm"', 'docker-distribution-api-version': 'registry/2.0' })
      .end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}');
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', () => listening()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => { server.closeAllConnections(); await new Promise<void>((done) => server.close(() => done())); },
  };
}
