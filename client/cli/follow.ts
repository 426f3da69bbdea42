// Following a deployment until it runs, as deploy, apply and recover do, and what is shown when it does.
import { setTimeout as sleep } from 'node:timers/promises';
import { openLiveEvents, type LiveEvents } from '../sdk/live.ts';
import { CliError } from './errors.ts';
import { paint, printData, progress } from './output.ts';
import type { Deployment, Session } from './session.ts';

/** What a user sends a deployment: one call, ready to paste (the key stays in the environment). */
export const sampleCall = (server: string, id: string) => [
  `curl ${server}/v1/inference \\`,
  `  -H "Authorization: Bearer $KILN_API_KEY" -H 'Content-Type: application/json' \\`,
  `  -d '{"deployment":"${id}","messages":[{"role":"user","content":"Hello!"}]}'`,
].join('\n');

const pollMs = () => Number(process.env.KILN_CLI_POLL_MS ?? 2000);
/** With the live socket open, a read now and then all the same, in case an event was missed. */
const livePollMs = () => Number(process.env.KILN_CLI_LIVE_POLL_MS ?? 15_000);

/**
 * Follows a deployment until it runs, fails or stops, showing each lifecycle step; the endpoint or the failure
 * at the end. Each change arrives on the live-update socket (GET /v1/ws) where the server has one, and is then
 * read whole; without a socket the deployment is read every KILN_CLI_POLL_MS. With `changedAfter` (the
 * `updatedAt` of the answer to a request that restarts its rollout, e.g. a retry of a failed one), a status the
 * deployment had before the workflow took the request up is not its outcome: it counts once the deployment has
 * changed since (a different stamp: the worker's clock may differ from the API's, so not a later one).
 */
export async function waitForDeployment(session: Session, id: string, timeoutSeconds: number, changedAfter?: string): Promise<Deployment> {
  const describe = (d: Deployment) => `${d.name}: ${d.status} (${d.state}, ${d.currentReplicas}/${d.maxReplicas} replicas)`;
  let wake: (() => void) | undefined;
  // Opened before the first read, so no change between the two is missed.
  const live: LiveEvents | undefined = await openLiveEvents({
    baseUrl: session.server, token: session.token, orgId: session.orgId, deploymentIds: [id], types: ['deployment'], onEvent: () => wake?.(),
  }).catch(() => undefined);
  let socketOpen = Boolean(live);
  void live?.closed.then(() => { socketOpen = false; wake?.(); });
  try {
    let current = await session.deployment(id);
    const shown = progress(describe(current));
    const deadline = Date.now() + timeoutSeconds * 1000;
    const settled = (d: Deployment) => ['running', 'failed', 'stopped', 'deleted', 'scaled_to_zero'].includes(d.status)
      && (changedAfter === undefined || d.updatedAt !== changedAfter);
    while (!settled(current)) {
      const left = deadline - Date.now();
      if (left <= 0) {
        shown.fail(`${describe(current)}: still not running after ${timeoutSeconds} s`);
        throw new CliError('TIMEOUT', `Deployment ${id} is not running yet`, `It goes on in Kiln: \`kiln get ${id}\` or \`kiln logs -f ${id}\` shows how it is doing.`);
      }
      const woken = new Promise<void>((resolve) => { wake = resolve; });
      // The timer goes when the socket wakes the loop first: a pending one would keep the process alive.
      const timer = new AbortController();
      await Promise.race([sleep(Math.min(socketOpen ? livePollMs() : pollMs(), left), undefined, { signal: timer.signal }).catch(() => undefined), woken]);
      timer.abort();
      current = await session.deployment(id);
      shown.update(describe(current));
    }
    if (current.status === 'running' || current.status === 'scaled_to_zero') {
      shown.succeed(describe(current));
      return current;
    }
    shown.fail(describe(current));
    const reason = current.failureReason ?? `it is ${current.status}`;
    throw new CliError('DEPLOYMENT_FAILED', `Deployment ${current.name} did not come up: ${reason}`, `Retry it with \`kiln recover ${id}\` (see why first: \`kiln logs ${id}\`).`);
  } finally {
    live?.close();
  }
}

export function printReady(session: Session, d: Deployment): void {
  if (session.format !== 'table') return printData(session.format, d);
  process.stdout.write(`${paint('green', '✔')} ${d.name} is ${d.status}\nEndpoint: ${d.endpoint}\nTry it:\n${sampleCall(session.server, d.id)}\n`);
}
