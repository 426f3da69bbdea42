// KilnOnKubernetes's arguments, with Pulumi's engine mocked: what Kiln's processes would refuse at start-up (and
// crash-loop on) fails the component's construction, or its up for values known only then, with a message that
// never holds a secret value; and what an absent optional secret leaves out.
import test from 'ava';
import * as pulumi from '@pulumi/pulumi';
import { mockPulumi } from './mocks.ts';

const mocks = await mockPulumi();
const { KilnOnKubernetes, StackArgsError } = await import('../../stacks/kiln-on-kubernetes/index.ts');
const { checkSecretValue } = await import('../../stacks/kiln-on-kubernetes/args.ts');

const ARGS = {
  image: 'registry.example.com/kiln:0.1.0',
  replicas: { api: 2, worker: 2, gateway: 2 },
  databaseUrl: pulumi.secret('postgres://kiln:pw@db:5432/kiln'),
  temporalAddress: 'temporal:7233',
  signingKey: pulumi.secret('k'.repeat(32)),
  pulumiPassphrase: pulumi.secret('passphrase'),
  smtpUrl: pulumi.secret('smtp://mail:587'),
};
const rejects = (message: string | RegExp) => ({ instanceOf: StackArgsError, message });

test('production needs outgoing mail, as the API does; development does not', (t) => {
  const { smtpUrl: _, ...withoutMail } = ARGS;
  t.throws(() => new KilnOnKubernetes('no-mail', withoutMail), rejects(/^smtpUrl is required in production/));
  t.notThrows(() => new KilnOnKubernetes('dev', { ...withoutMail, environment: 'development' }));
});

test('replicas are whole numbers of pods, 0 or more', (t) => {
  t.throws(() => new KilnOnKubernetes('half', { ...ARGS, replicas: { api: 1.5, worker: 1, gateway: 1 } }), rejects('replicas.api must be a whole number of pods, 0 or more, got 1.5'));
  t.throws(() => new KilnOnKubernetes('less', { ...ARGS, replicas: { api: 1, worker: -1, gateway: 1 } }), rejects('replicas.worker must be a whole number of pods, 0 or more, got -1'));
  t.notThrows(() => new KilnOnKubernetes('paused', { ...ARGS, replicas: { api: 1, worker: 0, gateway: 0 } }));
});

test('the name makes DNS labels of every object\'s name; the Temporal address is host:port', (t) => {
  t.throws(() => new KilnOnKubernetes('Kiln', ARGS), rejects(/^name "Kiln" must be a DNS label of at most 55 characters/));
  t.throws(() => new KilnOnKubernetes('k'.repeat(56), ARGS), rejects(/must be a DNS label of at most 55 characters/));
  t.throws(() => new KilnOnKubernetes('bad-temporal', { ...ARGS, temporalAddress: 'temporal' }), rejects('temporalAddress must be host:port, got "temporal"'));
});

test('env takes plain settings only: a secret one belongs in secretEnv, and the component\'s own are its arguments\'', (t) => {
  t.throws(() => new KilnOnKubernetes('a', { ...ARGS, env: { KILN_SECRETS_KEY: 'x'.repeat(32) } }), rejects('KILN_SECRETS_KEY holds a secret: give it in secretEnv, which keeps it in the Secret'));
  t.throws(() => new KilnOnKubernetes('b', { ...ARGS, env: { DATABASE_URL: 'postgres://x' } }), rejects('DATABASE_URL is set by databaseUrl, not through env or secretEnv'));
  t.throws(() => new KilnOnKubernetes('c', { ...ARGS, secretEnv: { PORT: '9000' } }), rejects('PORT is set by the component (the container port), not through env or secretEnv'));
  t.throws(() => new KilnOnKubernetes('d', { ...ARGS, env: { 'KILN-X': '1' } }), rejects(/^"KILN-X" must be an environment variable name/));
  t.notThrows(() => new KilnOnKubernetes('e', { ...ARGS, env: { PROMETHEUS_URL: 'http://prometheus:9090' }, secretEnv: { KILN_SECRETS_KEY: pulumi.secret('x'.repeat(32)) } }));
});

test('a secret value the processes would refuse fails the up, with a message that does not hold it', (t) => {
  t.throws(() => checkSecretValue('signingKey', 'short-key'), rejects('signingKey must be at least 32 characters'));
  t.throws(() => checkSecretValue('metricsToken', 'short-token'), rejects('metricsToken must be at least 32 characters'));
  t.throws(() => checkSecretValue('databaseUrl', 'mysql://kiln:pw@db/kiln'), rejects('databaseUrl must be a postgres:// URL'));
  t.throws(() => checkSecretValue('smtpUrl', 'http://mail'), rejects('smtpUrl must be an smtp:// or smtps:// URL'));
  t.is(checkSecretValue('databaseUrl', 'postgresql://kiln:pw@db/kiln'), 'postgresql://kiln:pw@db/kiln');
});

test('without a metrics token the Secret holds none, no process reads one and the worker opens no port', async (t) => {
  new KilnOnKubernetes('quiet', ARGS);
  const secret = await mocks.resource('kubernetes:core/v1:Secret', 'quiet-secrets');
  t.deepEqual(Object.keys(secret.inputs.stringData.value).sort(), ['DATABASE_URL', 'KILN_SIGNING_KEY', 'PULUMI_CONFIG_PASSPHRASE', 'SMTP_URL']);
  const worker = (await mocks.resource('kubernetes:apps/v1:Deployment', 'quiet-worker')).inputs.spec.template.spec.containers[0];
  t.is(worker.ports, undefined);
  t.false(worker.env.some((e: { name: string }) => e.name === 'KILN_METRICS_TOKEN' || e.name === 'KILN_WORKER_METRICS_PORT'));
});
