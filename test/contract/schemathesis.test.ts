// The contract suite: Schemathesis, a property-based API fuzzer nobody here wrote, reads the OpenAPI document
// each surface serves and sends what it derives from it to a real API on its own database: documented
// examples, boundary and invalid values (coverage), random inputs (fuzzing), then chains of calls that create
// resources and read, change and delete them through the links the document declares (stateful).
// Every answer must be no 5xx, a status the operation documents, with a documented content type and a body
// its schema describes. Any failure fails the test with Schemathesis' own report (each with a curl command
// that reproduces it).
//
// Run alone: node infra/with-test-servers.ts npx ava test/contract/schemathesis.test.ts
// (KILN_CONTRACT_MAX_EXAMPLES and KILN_CONTRACT_SEED change the cases generated; the report and JUnit files
// are kept under the test data folder, .data/test/contract/).
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pythonToolBinary } from '../../infra/tools/paths.ts';
import { PYTHON_TOOLS } from '../../infra/tools/versions.ts';
import { signupAdmin } from '../support/admin.ts';
import { signup, type TestApi } from '../support/control-plane.ts';
import { startHubRecordings } from '../support/hub-recordings.ts';
import { startPrometheus } from '../../infra/servers/prometheus.ts';
import { freePort } from '../../infra/servers/process.ts';
import { inviteByMail, startMailingApi, type TestSmtp } from '../support/smtp.ts';
import { testStripeSettings } from '../support/stripe.ts';

const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance'];
/** Cases per operation and phase: enough to reach every documented status, small enough for `npm test`'s budget. */
const MAX_EXAMPLES = Number(process.env.KILN_CONTRACT_MAX_EXAMPLES ?? 8);
/** Scenarios of the stateful phase (chains of up to STATEFUL_STEPS calls along the links between operations). */
const STATEFUL_SCENARIOS = Number(process.env.KILN_CONTRACT_STATEFUL_SCENARIOS ?? 200);
const STATEFUL_STEPS = 8;
/** A fixed seed: a run that fails fails the same way again, and the same cases run on every machine. */
const SEED = process.env.KILN_CONTRACT_SEED ?? '20261123';
// Absolute: Schemathesis runs in the report folder and reads its configuration from there.
const reportRoot = resolve(process.env.KILN_TEST_DATA_DIR ?? '.data/test', 'contract');

let api: TestApi;
let smtp: TestSmtp;
let close: () => Promise<void>;
// The test API raises every plan's rate limit to 10,000 requests a minute, so no case is cut short by a 429.
// Models outside the catalog are looked up on a Hub: the stand-in serving recorded answers (one it has no
// recording of is 404, as on the Hub), since this machine cannot reach the real one.
// The metric routes read a real Prometheus of this file's own (nothing to scrape: their series are empty).
// The payment routes talk to the shared local Stripe stand-in (stripe-mock); no case carries a valid webhook signature.
test.before(async () => {
  const hub = await startHubRecordings();
  const prometheus = await startPrometheus({ dataDir: join(reportRoot, 'prometheus'), port: await freePort(), kubeconfigs: [] });
  const mailing = await startMailingApi(import.meta.filename, { config: { ...hub.hubConfig(), prometheusUrl: prometheus.url, stripe: testStripeSettings() } });
  ({ api, smtp } = mailing);
  close = async () => {
    await mailing.close();
    await hub.close();
    await prometheus.stop();
  };
});
test.after.always(() => close?.());

/**
 * An invitation's token reaches only the invitee, by mail: no answer carries it, so no link can lead to the
 * invitee's operations. One real token is handed to them instead (the first accept or decline uses it).
 */
async function invitationToken(token: string): Promise<string> {
  return (await inviteByMail(api, smtp, token, `contract-invitee-${Date.now()}@example.com`)).token;
}

interface Outcome { code: number; output: string; seconds: number }

/**
 * Schemathesis' configuration for one run. `orgId`, the organization a reference call acts in, is the
 * caller's own: a generated one names an organization the caller is not in, and every such call is a 403
 * that reaches nothing (that refusal is tested in test/control-plane/). Invalid values of it are still sent
 * by the coverage phase's negative cases.
 */
function config(organizationId: string, invitation?: string): string {
  return [
    '[generation]',
    `max-examples = ${MAX_EXAMPLES}`,
    'database = "none"',
    '',
    '[parameters]',
    `"query.orgId" = "${organizationId}"`,
    ...(invitation ? [`"path.token" = "${invitation}"`] : []),
    '',
    '[phases.stateful]',
    `max-steps = ${STATEFUL_STEPS}`,
    '',
    '[phases.stateful.generation]',
    `max-examples = ${STATEFUL_SCENARIOS}`,
    '',
    // Signing in through SSO asks the organization's identity provider first; one that cannot be reached (as
    // every issuer is from this machine, which has no internet) is the documented 503 with Retry-After, not
    // a fault of Kiln's. Reading a deployment's logs asks its GPU cluster's API server, and the cluster every
    // deployment here is placed on has none (no cluster runs beside this suite): the documented 503 too. A 503
    // is accepted there, and only there. Kiln's internal metrics are off in this run (no KILN_METRICS_TOKEN): a
    // credential sent to them is the documented 503 as well.
    ...['/v1/auth/sso/login', '/v1/auth/sso/callback/{provider}', '/v1/deployments/{id}/logs', '/v1/metrics/internal'].flatMap((path) => [
      '[[operations]]',
      `include-path = "${path}"`,
      'checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", 503]',
      '',
    ]),
  ].join('\n');
}

function schemathesis(args: string[], reportDir: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(pythonToolBinary('schemathesis'), ['--config-file', join(reportDir, 'schemathesis.toml'), 'run', ...args], {
      cwd: reportDir,
      env: { ...process.env, NO_COLOR: '1', COLUMNS: '160', PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output, seconds: (performance.now() - started) / 1000 }));
  });
}

/**
 * Each surface from the document it serves, limited to its own paths (the document lists both), with a
 * credential of its own: the reference API as the platform administrator (who also owns an organization),
 * so platform administration is exercised too; the platform API as an ordinary organization owner. Both
 * organizations are enterprise customers with credits to spare, so the chains that create deployments are
 * not all cut short by 402.
 */
const SURFACES = [
  { name: 'platform API (/api, /api/v1)', document: '/api/openapi.json', paths: '^/api/', as: 'owner' },
  // Last: the administrator's run may delete the GPU cluster every deployment is placed on.
  { name: 'reference API (/v1)', document: '/v1/openapi', paths: '^/v1/', as: 'admin' },
] as const;

for (const surface of SURFACES) {
  test.serial(`Schemathesis finds no failure in the ${surface.name}: no 5xx, only documented statuses, content types and bodies`, async (t) => {
    t.timeout(10 * 60_000);
    const { token, organizationId } = surface.as === 'admin' ? await signupAdmin(api) : await signup(api, 'contract');
    await api.pool.query(`UPDATE organization SET plan = 'enterprise', credits_cents = 100000000 WHERE id = $1`, [organizationId]);
    const reportDir = join(reportRoot, surface.as);
    await rm(reportDir, { recursive: true, force: true });
    await mkdir(reportDir, { recursive: true });
    await writeFile(join(reportDir, 'schemathesis.toml'), config(organizationId, surface.as === 'admin' ? await invitationToken(token) : undefined));
    const { code, output, seconds } = await schemathesis([
      `${api.url}${surface.document}`,
      '--url', api.url,
      '--include-path-regex', surface.paths,
      '--header', `Authorization: Bearer ${token}`,
      '--checks', CHECKS.join(','),
      '--phases', 'examples,coverage,fuzzing,stateful',
      '--seed', SEED,
      '--request-timeout', '30',
      '--workers', '1',
      '--no-color',
      '--report', 'junit',
      '--report-dir', reportDir,
    ], reportDir);
    // Schemathesis' summary: operations tested, phases, failures, cases generated.
    const stateful = output.split('\n').filter((line) => /^\s*(Scenarios|API Links):/.test(line));
    const summary = [...stateful, ...output.slice(output.lastIndexOf('SUMMARY')).split('\n').slice(1)].filter((line) => line.trim()).join('\n');
    t.log(`Schemathesis ${PYTHON_TOOLS.schemathesis.version}, ${surface.name}, ${seconds.toFixed(0)} s:\n${summary}`);
    if (code !== 0) {
      t.log(output);
      t.fail(`schemathesis exited ${code}; its report is above and in ${reportDir}`);
    } else {
      t.pass();
    }
  });
}
