// Alerts and cost controls: alert rules and budgets, the alerts they fire, and their delivery channels. The
// evaluation runs in the worker (workflows/alerts/); the API stores rules, reads their state, and refuses
// what a reached budget forbids (budgets.assertAllows, which the deployments area calls).
import { defineModule } from '../module.ts';
import { createAlertService } from './alerts.ts';
import { createBudgetGuard, type BudgetGuard } from './budget-guard.ts';
import { createAlertChannelService } from './channels.ts';
import { alertRoutes } from './routes.ts';
import { createAlertRuleService } from './rules.ts';

declare module '../module.ts' {
  interface Services {
    /** Refuses new deployments and scale-ups while a budget that acts is reached (402 BUDGET_EXCEEDED). */
    budgets: BudgetGuard;
  }
}

export const alertsModule = defineModule({
  name: 'alerts',
  services: () => ({ budgets: createBudgetGuard() }),
  routes: ({ services }) => alertRoutes(createAlertRuleService(), createAlertService(), createAlertChannelService(services.webhooks)),
});
