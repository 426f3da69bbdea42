// Organizations' secrets; deployments mount them (deployments/), the worker opens them for the vLLM stack.
import { organizationSecretsKeyRing } from '../../lib/keys.ts';
import { bypassingRowLevelSecurity } from '../core/row-level-security.ts';
import { defineModule } from '../module.ts';
import { secretRoutes } from './routes.ts';
import { createSecretService, type SecretService } from './service.ts';
import { createCredentialTester } from './tester.ts';

declare module '../module.ts' {
  interface Services {
    /** `resealed`: the start-up pass that re-seals secrets under the current key after a rotation (how many; 0 until the module starts). */
    secrets: SecretService & { resealed: Promise<number> };
  }
}

export const secretsModule = defineModule({
  name: 'secrets',
  services: ({ config, cursors }) => {
    const secrets = createSecretService({
      ring: organizationSecretsKeyRing(config.secretsKeys.current, config.secretsKeys.previous),
      cursors,
      tester: createCredentialTester({ hubEndpoint: config.hub.endpoint, timeoutMs: config.hub.timeoutMs, allowPrivateUrls: config.env !== 'production' }),
    });
    return { secrets: Object.assign(secrets, { resealed: Promise.resolve(0) }) };
  },
  routes: ({ services }) => secretRoutes(services.secrets),
  // In the background, not awaited: requests open old values under the previous keys meanwhile, so a rotation
  // needs no downtime.
  start: ({ services: { secrets }, orm, log }) => {
    secrets.resealed = bypassingRowLevelSecurity(() => secrets.resealAll(orm.em.fork())).then((count) => {
      if (count) log.info({ resealed: count }, 'secrets re-sealed under the current key');
      return count;
    }, (error: unknown) => {
      log.error({ message: error instanceof Error ? error.message : 'unknown' }, 're-sealing secrets failed; the previous keys still open them');
      return 0;
    });
  },
  close: async ({ secrets }) => {
    await secrets.resealed;
  },
});
