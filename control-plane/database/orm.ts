// MikroORM on PostgreSQL: the entities the API modules declare, migrations listed explicitly (no file
// discovery: Node runs the TypeScript sources directly).
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { API_MODULES } from '../modules.ts';
import { BaseSchema } from './base.entity.ts';
import { Migration20261121000000Initial } from './migrations/Migration20261121000000Initial.ts';
import { Migration20261121120000Workflows } from './migrations/Migration20261121120000Workflows.ts';
import { Migration20261121130000Webhooks } from './migrations/Migration20261121130000Webhooks.ts';
import { Migration20261121140000Recovery } from './migrations/Migration20261121140000Recovery.ts';
import { Migration20261122060000Admin } from './migrations/Migration20261122060000Admin.ts';
import { Migration20261122010000Clusters } from './migrations/Migration20261122010000Clusters.ts';
import { Migration20261122080000DesiredStateDelivery } from './migrations/Migration20261122080000DesiredStateDelivery.ts';
import { Migration20261122050000Sso } from './migrations/Migration20261122050000Sso.ts';
import { Migration20261122030000Team } from './migrations/Migration20261122030000Team.ts';
import { Migration20261122020000Roles } from './migrations/Migration20261122020000Roles.ts';
import { Migration20261122040000Audit } from './migrations/Migration20261122040000Audit.ts';
import { Migration20261122090000AdminNotifications } from './migrations/Migration20261122090000AdminNotifications.ts';
import { Migration20261122100000RateLimitKeyText } from './migrations/Migration20261122100000RateLimitKeyText.ts';
import { Migration20261122110000UserSsoProvisioned } from './migrations/Migration20261122110000UserSsoProvisioned.ts';
import { Migration20261122120000Inference } from './migrations/Migration20261122120000Inference.ts';
import { Migration20261123010000ServiceKeys } from './migrations/Migration20261123010000ServiceKeys.ts';
import { Migration20261123020000RowLevelSecurity } from './migrations/Migration20261123020000RowLevelSecurity.ts';
import { Migration20261124010000DeploymentServing } from './migrations/Migration20261124010000DeploymentServing.ts';
import { Migration20261124060000Autoscaling } from './migrations/Migration20261124060000Autoscaling.ts';
import { Migration20261124020000OrganizationModels } from './migrations/Migration20261124020000OrganizationModels.ts';
import { Migration20261124030000Templates } from './migrations/Migration20261124030000Templates.ts';
import { Migration20261124040000Alerts } from './migrations/Migration20261124040000Alerts.ts';
import { Migration20261124050000OptimizationPolicy } from './migrations/Migration20261124050000OptimizationPolicy.ts';
import { Migration20261124124000Secrets } from './migrations/Migration20261124124000Secrets.ts';
import { Migration20261124070000OptimizationAutoApply } from './migrations/Migration20261124070000OptimizationAutoApply.ts';
import { Migration20261124080000Billing } from './migrations/Migration20261124080000Billing.ts';
import { Migration20261124090000Payments } from './migrations/Migration20261124090000Payments.ts';
import { Migration20261124100000Invoices } from './migrations/Migration20261124100000Invoices.ts';
import { Migration20261124104000StripeSubscription } from './migrations/Migration20261124104000StripeSubscription.ts';
import { Migration20261124110000Notifications } from './migrations/Migration20261124110000Notifications.ts';
import { Migration20261124121000NotificationMail } from './migrations/Migration20261124121000NotificationMail.ts';
import { Migration20261124122000LiveUpdates } from './migrations/Migration20261124122000LiveUpdates.ts';
import { Migration20261124125000Onboarding } from './migrations/Migration20261124125000Onboarding.ts';
import { Migration20261124126000Assistant } from './migrations/Migration20261124126000Assistant.ts';
import { Migration20261125010000ActivityDeploymentActions } from './migrations/Migration20261125010000ActivityDeploymentActions.ts';
import { Migration20261125020000ReportsList } from './migrations/Migration20261125020000ReportsList.ts';
import { applyScope } from '../core/row-level-security.ts';

/** The entities of every API module (modules.ts), the worker's included, on their shared base. */
export const ENTITIES = [BaseSchema, ...API_MODULES.flatMap((module) => module.entities ?? [])];

export type Orm = MikroORM;

export async function openDatabase(databaseUrl: string, options: { migrate?: boolean } = {}): Promise<Orm> {
  const orm = await MikroORM.init({
    clientUrl: databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    migrations: {
      // In timestamp order, one a line.
      migrationsList: [
        Migration20261121000000Initial,
        Migration20261121120000Workflows,
        Migration20261121130000Webhooks,
        Migration20261121140000Recovery,
        Migration20261122010000Clusters,
        Migration20261122020000Roles,
        Migration20261122030000Team,
        Migration20261122040000Audit,
        Migration20261122050000Sso,
        Migration20261122060000Admin,
        Migration20261122080000DesiredStateDelivery,
        Migration20261122090000AdminNotifications,
        Migration20261122100000RateLimitKeyText,
        Migration20261122110000UserSsoProvisioned,
        Migration20261122120000Inference,
        Migration20261123010000ServiceKeys,
        Migration20261123020000RowLevelSecurity,
        Migration20261124010000DeploymentServing,
        Migration20261124020000OrganizationModels,
        Migration20261124030000Templates,
        Migration20261124040000Alerts,
        Migration20261124050000OptimizationPolicy,
        Migration20261124060000Autoscaling,
        Migration20261124070000OptimizationAutoApply,
        Migration20261124080000Billing,
        Migration20261124090000Payments,
        Migration20261124100000Invoices,
        Migration20261124104000StripeSubscription,
        Migration20261124110000Notifications,
        Migration20261124121000NotificationMail,
        Migration20261124122000LiveUpdates,
        Migration20261124124000Secrets,
        Migration20261124125000Onboarding,
        Migration20261124126000Assistant,
        Migration20261125010000ActivityDeploymentActions,
        Migration20261125020000ReportsList,
      ],
      snapshot: false,
      silent: true,
    },
    // Request handlers use a forked EntityManager each (http/request-context.ts); the global one is off limits.
    allowGlobalContext: false,
    pool: { max: 10 },
    // Each checkout takes the role and organization of the work it serves (core/row-level-security.ts).
    onReserveConnection: (connection) => applyScope(connection as Parameters<typeof applyScope>[0]),
  });
  if (options.migrate ?? true) await orm.migrator.up();
  return orm;
}
