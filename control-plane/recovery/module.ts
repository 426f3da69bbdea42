// Recovery: a deployment's failure and what can be done about it, and the provisioning circuits that stop
// retrying a provider that keeps failing.
import { defineModule } from '../module.ts';
import { createCircuitService, type CircuitService } from './circuits.ts';
import { recoveryRoutes } from './routes.ts';

declare module '../module.ts' {
  interface Services { circuits: CircuitService }
}

export const recoveryModule = defineModule({
  name: 'recovery',
  services: () => ({ circuits: createCircuitService() }),
  routes: ({ services }) => recoveryRoutes(services.deployments, services.circuits),
});
