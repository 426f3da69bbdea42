// Kiln as deployed for availability: two APIs, two workers (DATA_DIRs of their own), two inference gateways,
// one PostgreSQL and one Temporal server. Under a steady load (deployment writes through both APIs, streamed
// inference through both gateways) each kind of process is killed with SIGKILL in turn and started again a few
// seconds later: an API, a worker, a gateway, PostgreSQL's postmaster, the Temporal server. Then: every
// deployment reaches the last state a write asked for and accepted, with one set of Kubernetes objects and no
// stack left locked; the webhooks and the metering caught up, each interval charged once; and the only inference
// requests that failed were in flight on (or sent to) a killed gateway, each answered on a retry.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import anyTest, { type TestFn } from 'ava';
import pg from 'pg';
import { USAGE_UNITS_PER_CENT } from '../../catalog/billing.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { eventually } from '../support/eventually.ts';
import { deploymentWhen, newTenant, startKiln, type Kiln } from '../support/kiln.ts';

interface Context { kiln: Kiln; tenant: Awaited<ReturnType<typeof newTenant>>; hooks: { type: string; deploymentId: string }[]; receiver: Server }
const test = anyTest as TestFn<Context>;

/** The deployment inference is sent to: the load's writes leave it alone, so every failure is the topology's. */
const CHAT = 'chat';
/** A kill's outage: long enough that requests meet it, short enough for a modest wall time. */
const DOWN_MS = 3_000;
/** The load that runs between one kill's restart and the next kill. */
const BETWEEN_KILLS_MS = 8_000;
/** The pace of the deployment writes: each starts a Pulumi operation, on 2 cores. */
const WRITE_EVERY_MS = 2_000;
/** How long after a request is sent its process is killed: it has reached the process, which has not answered. */
const MID_REQUEST_MS = 30;
/** A write retried this long without an answer is reported lost (its process never came back). */
const WRITE_DEADLINE_MS = 90_000;

test.before(async (t) => {
  const kiln = await startKiln(import.meta.filename, {
    nodePools: [{ gpuType: 'nvidia-l4', nodes: 10, gpusPerNode: 1 }], apis: 2, workers: 2, gateways: 2, ownPostgres: true,
  });
  t.context = { kiln } as Context; // stopped by the after hook even if the rest of this set-up fails
  const tenant = await newTenant(kiln, 'topology');
  const hooks: Context['hooks'] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      const event = JSON.parse(body) as { event: string; data: { id: string } };
      hooks.push({ type: event.event, deploymentId: event.data.id });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.context = { kiln, tenant, hooks, receiver };
  const subscribed = await kiln.request('POST', '/api/webhooks', {
    token: tenant.token,
    body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/kiln`, events: ['deployment.created', 'deployment.running', 'deployment.stopped', 'deployment.deleted'] },
  });
  if (subscribed.status !== 201) throw new Error(`webhook subscription: ${subscribed.status} ${JSON.stringify(subscribed.body)}`);
  const chat = await kiln.request('POST', '/api/deployments', { token: tenant.key, body: deploymentBody(CHAT) });
  if (chat.status !== 201) throw new Error(`create ${CHAT}: ${chat.status} ${JSON.stringify(chat.body)}`);
  await deploymentWhen(kiln, tenant.key, chat.body.data.id, (d) => d.status === 'running', `${CHAT} running`, 180_000);
});
test.after.always(async (t) => {
  t.context.receiver?.close();
  await t.context.kiln?.stop();
});

/**
 * One replica, bounds pinned to it and a day's scale-down delay: the autoscaler (no load on these) never moves
 * what a write asked for, so the last accepted write alone says what each deployment runs.
 */
function deploymentBody(name: string) {
  return { name, model: 'Qwen/Qwen2.5-1.5B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 1, minReplicas: 1, maxReplicas: 1, autoscaling: { scaleDownDelaySeconds: 86_400 } };
}

/** What the last accepted write asked of a deployment. */
interface Desired { id: string; name: string; deleted: boolean; running: boolean; replicas: number; vllmArgs: string[] }

interface Attempt { via: number; at: number; answeredAt: number; status?: number; error?: string }
interface Write {
  what: string;
  attempts: Attempt[];
  acceptedAt?: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answer's fields read freely
  answer?: any;
  rejected?: string;
  /** The deployment as this write, once accepted, asked it to be. */
  target?: Desired;
}

interface Inference { gateway: number; startedAt: number; endedAt: number; ok: boolean; why?: string; retry?: { gateway: number; ok: boolean; why?: string } }

/** When a process was killed and when it was serving again (its start returned). */
interface Outage { component: string; index?: number; killedAt: number; restartedAt: number }

/** A response, or the reason none came (the process is down, or the connection dropped mid-answer). */
async function send(base: string, method: string, path: string, options: { token: string; body?: unknown; headers?: Record<string, string> }) {
  try {
    const response = await fetch(base + path, {
      method, body: options.body === undefined ? undefined : JSON.stringify(options.body),
      headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json', ...options.headers },
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response fields read freely
    const body: any = response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
    return { status: response.status, body };
  } catch (error) {
    return { status: undefined, error: String((error as Error).cause ?? error) };
  }
}

/** Events a test can wait for, such as the next request sent through a given process: a kill then lands on it. */
function moments<T>() {
  let waiters: { matches: (event: T) => boolean; resolve: () => void }[] = [];
  return {
    next: (matches: (event: T) => boolean) => new Promise<void>((resolve) => waiters.push({ matches, resolve })),
    emit(event: T) {
      for (const waiter of waiters.filter((w) => w.matches(event))) waiter.resolve();
      waiters = waiters.filter((w) => !w.matches(event));
    },
  };
}

/** The deployment writes: each through the next API in turn, retried (on the next API) with its Idempotency-Key until answered. */
function writer(kiln: Kiln, key: string) {
  const writes: Write[] = [];
  const sent = moments<{ via: number; what: string }>();
  let next = 0;
  async function write(what: string, method: string, path: string, body?: unknown): Promise<Write> {
    const entry: Write = { what, attempts: [] };
    writes.push(entry);
    const idempotencyKey = `topology-${writes.length}`;
    const deadline = Date.now() + WRITE_DEADLINE_MS;
    for (;;) {
      const via = next++ % kiln.apiUrls.length;
      const at = Date.now();
      const answered = send(kiln.apiUrls[via]!, method, path, { token: key, body, headers: { 'idempotency-key': idempotencyKey } });
      sent.emit({ via, what });
      const res = await answered;
      entry.attempts.push({ via, at, answeredAt: Date.now(), status: res.status, error: res.error });
      // DELETE ignores Idempotency-Key: after an attempt that went unanswered, 404 means that attempt deleted it.
      const deletedBefore = method === 'DELETE' && res.status === 404 && entry.attempts.some((a) => !a.status || a.status >= 500);
      if ((res.status && res.status < 300) || deletedBefore) {
        entry.acceptedAt = Date.now();
        entry.answer = res.body;
        return entry;
      }
      const retry = !res.status || res.status >= 500 || res.status === 429 || (res.status === 409 && res.body?.code === 'IDEMPOTENCY_KEY_REUSED');
      if (!retry || Date.now() > deadline) {
        entry.rejected = `${res.status ?? res.error} ${JSON.stringify(res.body ?? '')}`;
        return entry;
      }
      await sleep(500);
    }
  }
  return { writes, write, sent: sent.next };
}

/** Streamed chat completions through the gateways in turn; one that fails is retried once on the other gateway. */
function inferenceLoad(kiln: Kiln, key: string, firstGateway: number) {
  const results: Inference[] = [];
  const sent = moments<number>();
  let stopped = false;
  const ask = async (gateway: number) => {
    const answered = send(kiln.gatewayUrls[gateway]!, 'POST', '/v1/inference', {
      token: key, body: { deployment: CHAT, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8, stream: true },
    });
    sent.emit(gateway);
    const res = await answered;
    const ok = res.status === 200 && typeof res.body === 'string' && res.body.includes('data: [DONE]');
    return { ok, why: ok ? undefined : `${res.status ?? res.error} ${String(typeof res.body === 'string' ? res.body : JSON.stringify(res.body)).slice(0, 200)}` };
  };
  const running = (async () => {
    for (let i = firstGateway; !stopped; i++) {
      const gateway = i % kiln.gatewayUrls.length;
      const startedAt = Date.now();
      const answer = await ask(gateway);
      const result: Inference = { gateway, startedAt, endedAt: Date.now(), ...answer };
      if (!answer.ok) {
        const other = (gateway + 1) % kiln.gatewayUrls.length;
        result.retry = { gateway: other, ...await ask(other) };
      }
      results.push(result);
      await sleep(150);
    }
  })();
  return { results, sent: sent.next, stop: async () => { stopped = true; await running; } };
}

/** The organization's deployments as the APIs list them, every half second: when each write's state was first reached. */
function watcher(kiln: Kiln, key: string) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const snapshots: { at: number; deployments: Map<string, any> }[] = [];
  let stopped = false;
  const running = (async () => {
    for (let i = 0; !stopped; i++) {
      const res = await send(kiln.apiUrls[i % kiln.apiUrls.length]!, 'GET', '/api/deployments?limit=50', { token: key });
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      if (res.status === 200) snapshots.push({ at: Date.now(), deployments: new Map(res.body.data.map((d: any) => [d.id, d])) });
      await sleep(500);
    }
  })();
  return { snapshots, stop: async () => { stopped = true; await running; } };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function matches(desired: Desired, deployment: any): boolean {
  if (desired.deleted) return deployment === undefined;
  if (!deployment) return false;
  return desired.running
    ? deployment.status === 'running' && deployment.replicas === desired.replicas && deployment.currentReplicas === desired.replicas
      && JSON.stringify(deployment.vllmArgs) === JSON.stringify(desired.vllmArgs)
    : deployment.status === 'stopped';
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

test('processes of every kind killed under load: writes, webhooks, metering and inference survive, and everything converges', async (t) => {
  const { kiln, tenant } = t.context;
  const { writes, write, sent } = writer(kiln, tenant.key);
  const desired = new Map<string, Desired>(); // by id
  const outages: Outage[] = [];
  let names = 0;

  /** Records what an accepted write asked of `d`. */
  const accepted = (entry: Write, d: Desired, change: Partial<Desired>) => {
    if (!entry.acceptedAt) return;
    Object.assign(d, change);
    entry.target = { ...d };
  };
  const create = async () => {
    const name = `d${++names}`;
    const entry = await write(`create ${name}`, 'POST', '/api/deployments', deploymentBody(name));
    if (!entry.acceptedAt) return;
    const d: Desired = { id: entry.answer.data.id, name, deleted: false, running: true, replicas: 1, vllmArgs: [] };
    desired.set(d.id, d);
    accepted(entry, d, {});
  };
  /** The next write to `d`: scale, update, stop or start, or delete it (and create another). */
  const change = async (d: Desired, step: number) => {
    const action = (what: string, body: unknown) => write(`${what} ${d.name}`, 'POST', `/v1/deployments/${d.id}/actions`, body);
    switch (step % 4) {
      case 0: {
        const replicas = d.replicas === 1 ? 2 : 1;
        return accepted(await action(`scale to ${replicas}`, { action: 'scale', replicas }), d, { replicas });
      }
      case 1: {
        const vllmArgs = d.vllmArgs.length ? [] : ['--enable-prefix-caching'];
        return accepted(await write(`update ${d.name}`, 'PATCH', `/api/deployments/${d.id}`, { vllmArgs }), d, { vllmArgs });
      }
      case 2:
        return accepted(await action(d.running ? 'stop' : 'start', { action: d.running ? 'stop' : 'start' }), d, { running: !d.running });
      default:
        accepted(await write(`delete ${d.name}`, 'DELETE', `/api/deployments/${d.id}`), d, { deleted: true });
        return create();
    }
  };

  // The load: three deployments changed in turn; inference streams through both gateways.
  const inference = [inferenceLoad(kiln, tenant.key, 0), inferenceLoad(kiln, tenant.key, 1)];
  const watch = watcher(kiln, tenant.key);
  let loading = true;
  const load = (async () => {
    for (let i = 0; i < 3; i++) await create();
    for (let step = 0; loading; step++) {
      const live = [...desired.values()].filter((d) => !d.deleted);
      await change(live[step % live.length]!, step);
      await sleep(WRITE_EVERY_MS);
    }
  })();

  /** Kills a process at a moment of the load, starts it again DOWN_MS later, and lets the load run on. */
  const kill = async (component: string, index: number | undefined, moment: Promise<unknown>, killIt: () => Promise<void>, startIt: () => Promise<void>) => {
    await Promise.race([moment, sleep(60_000).then(() => { throw new Error(`the moment to kill ${component} did not come within 60 s`); })]);
    const killedAt = Date.now();
    await killIt();
    await sleep(DOWN_MS);
    await startIt();
    outages.push({ component, index, killedAt, restartedAt: Date.now() });
    await sleep(BETWEEN_KILLS_MS);
  };
  /** A request just sent has reached its process, which has not answered yet (a create, a stream take longer). */
  const midRequest = (sent: Promise<void>) => sent.then(() => sleep(MID_REQUEST_MS));
  const database = new pg.Pool({ connectionString: kiln.databaseUrl, max: 1 });
  database.on('error', () => undefined); // its idle connection dies with the killed postmaster; the next query opens another
  t.teardown(() => database.end());
  const stackLocked = () => eventually('a pulumi operation under way', async () =>
    ((await database.query(`SELECT 1 FROM pulumi_state WHERE key LIKE '%/.pulumi/locks/%'`)).rowCount ?? 0) > 0, 60_000);

  await sleep(BETWEEN_KILLS_MS);
  await kill('api', 0, midRequest(sent((e) => e.via === 0 && e.what.startsWith('create'))), () => kiln.killApi(0), () => kiln.startApi(0));
  // Whichever worker holds the lock: the one killed, or the other, whose operation must not be disturbed.
  await kill('worker', 1, stackLocked(), () => kiln.killWorker(1), () => kiln.startWorker(1));
  await kill('gateway', 0, midRequest(Promise.race(inference.map((i) => i.sent((gateway) => gateway === 0)))), () => kiln.killGateway(0), () => kiln.startGateway(0));
  await kill('postgres', undefined, stackLocked(), () => kiln.killPostgres(), () => kiln.startPostgres());
  await kill('temporal', undefined, stackLocked(), () => kiln.killTemporal(), () => kiln.startTemporal());
  loading = false;
  await load;
  await Promise.all(inference.map((i) => i.stop()));
  const loadEndedAt = Date.now();

  // Every write was answered: none lost to a process that died while it ran, none refused.
  t.deepEqual(writes.filter((w) => !w.acceptedAt).map((w) => `${w.what}: ${w.rejected}`), [], 'every write accepted, on a retry at worst');

  // Every deployment reaches what its last accepted write asked for.
  const tracked = [...desired.values()];
  const convergedAt = await eventually('every deployment in its last desired state', async () => {
    const last = watch.snapshots.at(-1);
    return !!last && last.at > loadEndedAt && tracked.every((d) => matches(d, last.deployments.get(d.id))) && last.at;
  }, 180_000).catch(() => undefined);
  await watch.stop();
  const last = watch.snapshots.at(-1)!;
  const actual = (d: Desired) => {
    const now = last.deployments.get(d.id);
    return now && { status: now.status, replicas: now.replicas, currentReplicas: now.currentReplicas, vllmArgs: now.vllmArgs };
  };
  // A stopped deployment by its status alone: what it would run again is not running now.
  const expected = (d: Desired) => (d.deleted ? undefined : d.running
    ? { status: 'running', replicas: d.replicas, currentReplicas: d.replicas, vllmArgs: d.vllmArgs }
    : { ...actual(d), status: 'stopped' });
  t.deepEqual(Object.fromEntries(tracked.map((d) => [d.name, actual(d)])), Object.fromEntries(tracked.map((d) => [d.name, expected(d)])));
  t.truthy(convergedAt, 'converged');
  // Nothing else: no deployment made twice by a retried create.
  const chatId = [...last.deployments.values()].find((d) => d.name === CHAT)?.id;
  t.deepEqual([...last.deployments.keys()].filter((id) => id !== chatId).sort(), tracked.filter((d) => !d.deleted).map((d) => d.id).sort(), 'the deployments listed are those created and not deleted');

  // One set of objects per running deployment, none for stopped or deleted ones; no stack locked.
  const namespace = namespaceOf(tenant.organizationId);
  const instances = async (path: string) => (await kiln.cluster.api.get<{ items: { metadata: { labels?: Record<string, string> } }[] }>(`${path}?labelSelector=app.kubernetes.io/instance`))
    .items.map((item) => item.metadata.labels!['app.kubernetes.io/instance']!).sort();
  const runningNames = [CHAT, ...tracked.filter((d) => !d.deleted && d.running).map((d) => d.name)].sort();
  t.deepEqual(await instances(`/apis/apps/v1/namespaces/${namespace}/deployments`), runningNames, 'one Kubernetes Deployment per running deployment');
  t.deepEqual(await instances(`/api/v1/namespaces/${namespace}/services`), runningNames, 'one Service per running deployment');
  const locks = await database.query(`SELECT key FROM pulumi_state WHERE key LIKE '%/.pulumi/locks/%'`);
  t.deepEqual(locks.rows, [], 'no stack left locked');

  // Webhooks, at least once: created for each deployment, running for each seen running, deleted for each deleted.
  const seenRunning = new Set(watch.snapshots.flatMap((s) => [...s.deployments.values()].filter((d) => d.status === 'running').map((d) => d.id as string)));
  const owed = tracked.flatMap((d) => [
    `${d.name} deployment.created`,
    ...(seenRunning.has(d.id) ? [`${d.name} deployment.running`] : []),
    ...(d.deleted ? [`${d.name} deployment.deleted`] : []),
  ]);
  const delivered = () => new Set(t.context.hooks.map((h) => `${tracked.find((d) => d.id === h.deploymentId)?.name} ${h.type}`));
  await eventually('the webhooks owed', () => owed.every((hook) => delivered().has(hook)), 60_000).catch(() => undefined);
  t.deepEqual(owed.filter((hook) => !delivered().has(hook)), [], 'every webhook owed delivered');

  // Metering: past the last replica change (the deletions' included), each interval once, back to back (none
  // skipped, none twice), each deployment charged once per interval, and a deleted deployment charged exactly
  // the GPU time its replica history adds up to; whole cents drawn as the metered total says.
  const deleted = tracked.filter((d) => d.deleted).map((d) => d.id);
  const { rows: records } = await database.query<{ deployment_id: string; observed_at: Date; replicas: number; gpus_per_replica: number }>(
    'SELECT r.deployment_id, r.observed_at, r.replicas, d.gpus_per_replica FROM replica_record r JOIN deployment d ON d.id = r.deployment_id WHERE r.deployment_id = ANY($1) ORDER BY r.observed_at', [deleted]);
  const lastChange = Math.max(loadEndedAt, ...records.map((r) => r.observed_at.getTime()));
  await eventually('metering past the last replica change', async () => {
    const { rows: [org] } = await database.query<{ metered_until: Date | null }>('SELECT metered_until FROM organization WHERE id = $1', [tenant.organizationId]);
    return !!org?.metered_until && org.metered_until.getTime() >= lastChange;
  }, 60_000);
  const { rows: intervals } = await database.query<{ starts_at: Date; ends_at: Date }>('SELECT starts_at, ends_at FROM usage_interval WHERE organization_id = $1 ORDER BY starts_at', [tenant.organizationId]);
  t.deepEqual(intervals.slice(1).filter((interval, i) => interval.starts_at.getTime() !== intervals[i]!.ends_at.getTime()), [], 'each interval starts where the one before ended');
  const { rows: twice } = await database.query('SELECT interval_id, deployment_id FROM usage_charge WHERE organization_id = $1 GROUP BY 1, 2 HAVING count(*) > 1', [tenant.organizationId]);
  t.deepEqual(twice, [], 'no deployment charged twice for an interval');
  // Each record's replicas until the next one, walked here on its own.
  const ran = (id: string) => records.filter((r) => r.deployment_id === id)
    .reduce((gpuMs, r, i, mine) => gpuMs + (mine[i + 1] ? r.replicas * r.gpus_per_replica * (mine[i + 1]!.observed_at.getTime() - r.observed_at.getTime()) : 0), 0);
  const { rows: charged } = await database.query<{ deployment_id: string; gpu_ms: string }>(
    'SELECT deployment_id, sum(gpu_ms) AS gpu_ms FROM usage_charge WHERE deployment_id = ANY($1) GROUP BY 1', [deleted]);
  const chargedOf = (id: string) => Number(charged.find((c) => c.deployment_id === id)?.gpu_ms ?? 0);
  t.deepEqual(deleted.map(chargedOf), deleted.map(ran), 'each deleted deployment charged the GPU time it ran, once');
  const { rows: [org] } = await database.query<{ metered_units: string }>('SELECT metered_units FROM organization WHERE id = $1', [tenant.organizationId]);
  const { rows: debits } = await database.query<{ amount_cents: number; reference: string }>(`SELECT amount_cents, reference FROM credit_entry WHERE organization_id = $1 AND kind = 'debit'`, [tenant.organizationId]);
  t.is(new Set(debits.map((d) => d.reference)).size, debits.length, 'each debit once');
  t.is(-debits.reduce((sum, d) => sum + d.amount_cents, 0), Math.floor(Number(org!.metered_units) / USAGE_UNITS_PER_CENT));

  // Inference: a request failed only if its gateway was killed while it ran or was down when it was sent; each
  // failed one was answered on a retry through the other gateway.
  const requests = inference.flatMap((i) => i.results);
  const gatewayDown = (r: Inference) => outages.some((o) => o.component === 'gateway' && o.index === r.gateway && o.killedAt <= r.endedAt && r.startedAt <= o.restartedAt);
  const failed = requests.filter((r) => !r.ok);
  t.deepEqual(failed.filter((r) => !gatewayDown(r)).map((r) => `gateway ${r.gateway}: ${r.why}`), [], 'no request failed but on a killed gateway');
  t.deepEqual(failed.filter((r) => !r.retry?.ok).map((r) => `retry through gateway ${r.retry?.gateway}: ${r.retry?.why}`), [], 'every failed request answered on a retry');
  for (const component of ['postgres', 'temporal']) {
    const outage = outages.find((o) => o.component === component)!;
    const during = requests.filter((r) => r.startedAt >= outage.killedAt && r.endedAt <= outage.restartedAt);
    t.true(during.length > 0 && during.every((r) => r.ok), `inference answered while ${component} was down (${during.filter((r) => r.ok).length} of ${during.length})`);
  }

  // The figures: per kill, how long until each kind of work went through again after the restart, and what failed.
  const operationsCompleted = writes.flatMap((w) => {
    const done = w.target && watch.snapshots.find((s) => s.at >= w.acceptedAt! && matches(w.target!, s.deployments.get(w.target!.id)));
    return done ? [done.at] : [];
  });
  const attempts = writes.flatMap((w) => w.attempts);
  const failedIn = (outage: Outage) => failed.filter((r) => r.startedAt <= outage.restartedAt && r.endedAt >= outage.killedAt);
  for (const outage of outages) {
    const firstAfter = (times: number[]) => {
      const first = Math.min(...times.filter((time) => time >= outage.restartedAt));
      return Number.isFinite(first) ? `+${seconds(first - outage.restartedAt)}` : 'none';
    };
    const during = attempts.filter((a) => a.answeredAt >= outage.killedAt && a.at <= outage.restartedAt);
    // The writes the kill cut off, and how long their retries took to be answered.
    const cutOff = writes.filter((w) => w.attempts.some((a) => a.at < outage.killedAt && a.answeredAt >= outage.killedAt && (!a.status || a.status >= 300)))
      .map((w) => `${w.what}, accepted ${w.acceptedAt ? `${seconds(w.acceptedAt - outage.killedAt)} after the kill, attempt ${w.attempts.length}` : 'never'}`);
    const through = outage.component === 'api'
      ? `; first write through it ${firstAfter(attempts.filter((a) => a.via === outage.index && a.status && a.status < 300).map((a) => a.at))}`
      : outage.component === 'gateway'
        ? `; first inference through it ${firstAfter(requests.filter((r) => r.gateway === outage.index && r.ok).map((r) => r.startedAt))}`
        : '';
    t.log(`${outage.component}${outage.index === undefined ? '' : ` ${outage.index}`}: down ${seconds(outage.restartedAt - outage.killedAt)} (kill to serving again); after the restart: `
      + `first write accepted ${firstAfter(writes.filter((w) => w.acceptedAt).map((w) => w.acceptedAt!))}, first deployment operation completed ${firstAfter(operationsCompleted)}${through}; `
      + `failed while down: ${during.filter((a) => !a.status || a.status >= 300).length} of ${during.length} write attempts (in flight at the kill: ${cutOff.join('; ') || 'none'}), `
      + `${failedIn(outage).filter((r) => r.startedAt < outage.killedAt).length} inference requests in flight at the kill and ${failedIn(outage).filter((r) => r.startedAt >= outage.killedAt).length} sent while down`);
  }
  t.log(`load: ${writes.length} writes (${writes.filter((w) => w.attempts.length > 1).length} retried, ${attempts.length} attempts), `
    + `${requests.length} streamed inference requests (${failed.length} failed, each answered on a retry), ${tracked.length} deployments (${tracked.filter((d) => d.deleted).length} deleted); `
    + `converged ${convergedAt ? seconds(convergedAt - loadEndedAt) : 'never'} after the load stopped; `
    + `${intervals.length} metering intervals, ${debits.length} debits; ${t.context.hooks.length} webhook deliveries`);
});
