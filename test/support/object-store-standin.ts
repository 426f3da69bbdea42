// A STAND-IN for an S3-compatible object store, not one: a small HTTP server answering ListObjectsV2
// (GET /<bucket>?list-type=2, path-style) the way S3 does, for the secrets test route. It checks the request's
// SigV4 signature against the one key pair it knows (re-signed with the aws4 library over the same request),
// and answers like S3: 403 InvalidAccessKeyId for an unknown key, 403 SignatureDoesNotMatch for a wrong
// secret, 404 NoSuchBucket for a bucket it lacks, and a recorded ListBucketResult for its one bucket.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import aws4 from 'aws4';

export const STANDIN_BUCKET = 'kiln-models';
export const STANDIN_ACCESS_KEY_ID = 'AKIASTANDIN000000001';
export const STANDIN_SECRET_ACCESS_KEY = 'standinSecretAccessKey0000000000000000wxyz';

const LISTING = `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${STANDIN_BUCKET}</Name><Prefix></Prefix><KeyCount>1</KeyCount><MaxKeys>1</MaxKeys><IsTruncated>true</IsTruncated><Contents><Key>llama/config.json</Key><LastModified>2026-11-01T00:00:00.000Z</LastModified><ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>654</Size><StorageClass>STANDARD</StorageClass></Contents><NextContinuationToken>1ueGcxLPRx1Tr</NextContinuationToken></ListBucketResult>`;

function error(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/xml' })
    .end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>STANDIN</RequestId></Error>`);
}

function answer(req: IncomingMessage, res: ServerResponse): void {
  const authorization = String(req.headers.authorization ?? '');
  const credential = /Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request/.exec(authorization);
  if (!credential) return error(res, 403, 'AccessDenied', 'Access Denied');
  const [, accessKeyId, , region] = credential as unknown as [string, string, string, string];
  if (accessKeyId !== STANDIN_ACCESS_KEY_ID) return error(res, 403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  // Re-sign the same request (same date) with the secret it knows: a different signature means a different secret.
  const expected = aws4.sign({
    host: req.headers.host, path: req.url, method: req.method, service: 's3', region,
    headers: { 'X-Amz-Date': String(req.headers['x-amz-date']), 'X-Amz-Content-Sha256': String(req.headers['x-amz-content-sha256']) },
  }, { accessKeyId: STANDIN_ACCESS_KEY_ID, secretAccessKey: STANDIN_SECRET_ACCESS_KEY });
  const signature = (s: string) => /Signature=([0-9a-f]+)/.exec(s)?.[1];
  if (signature(String(expected.headers?.Authorization ?? '')) !== signature(authorization)) {
    return error(res, 403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
  }
  const url = new URL(req.url ?? '/', 'http://store');
  if (url.pathname !== `/${STANDIN_BUCKET}` || url.searchParams.get('list-type') !== '2') return error(res, 404, 'NoSuchBucket', 'The specified bucket does not exist');
  res.writeHead(200, { 'content-type': 'application/xml' }).end(LISTING);
}

export async function startObjectStoreStandin(): Promise<{ url: string; requests: number; close(): Promise<void> }> {
  const state = { url: '', requests: 0, close: async () => { server.closeAllConnections(); await new Promise<void>((done) => server.close(() => done())); } };
  const server = createServer((req, res) => {
    state.requests += 1;
    answer(req, res);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', () => listening()));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
