// Every migration, one a line, in the order they run. Listed by hand because Node runs the TypeScript sources
// as they are and the ORM discovers no files. The ORM takes each export of this file (orm.ts `Object.values`),
// so it holds migrations only; a module's exports come in the order of their names (ECMAScript sorts them),
// and each name is `Migration` and its timestamp, so that order is the timestamps'.
export { Migration20261121000000Initial } from './Migration20261121000000Initial.ts';
export { Migration20261121120000Workflows } from './Migration20261121120000Workflows.ts';
export { Migration20261121130000Webhooks } from './Migration20261121130000Webhooks.ts';
export { Migration20261121140000Recovery } from './Migration20261121140000Recovery.ts';
export { Migration20261122010000Clusters } from './Migration20261122010000Clusters.ts';
export { Migration20261122020000Roles } from './Migration20261122020000Roles.ts';
export { Migration20261122030000Team } from './Migration20261122030000Team.ts';
export { Migration20261122040000Audit } from './Migration20261122040000Audit.ts';
export { Migration20261122050000Sso } from './Migration20261122050000Sso.ts';
export { Migration20261122060000Admin } from './Migration20261122060000Admin.ts';
export { Migration20261122080000DesiredStateDelivery } from './Migration20261122080000DesiredStateDelivery.ts';
export { Migration20261122090000AdminNotifications } from './Migration20261122090000AdminNotifications.ts';
export { Migration20261122100000RateLimitKeyText } from './Migration20261122100000RateLimitKeyText.ts';
export { Migration20261122110000UserSsoProvisioned } from './Migration20261122110000UserSsoProvisioned.ts';
export { Migration20261122120000Inference } from './Migration20261122120000Inference.ts';
export { Migration20261123010000ServiceKeys } from './Migration20261123010000ServiceKeys.ts';
export { Migration20261123020000RowLevelSecurity } from './Migration20261123020000RowLevelSecurity.ts';
export { Migration20261124010000DeploymentServing } from './Migration20261124010000DeploymentServing.ts';
export { Migration20261124020000OrganizationModels } from './Migration20261124020000OrganizationModels.ts';
export { Migration20261124030000Templates } from './Migration20261124030000Templates.ts';
export { Migration20261124040000Alerts } from './Migration20261124040000Alerts.ts';
export { Migration20261124050000OptimizationPolicy } from './Migration20261124050000OptimizationPolicy.ts';
export { Migration20261124060000Autoscaling } from './Migration20261124060000Autoscaling.ts';
export { Migration20261124070000OptimizationAutoApply } from './Migration20261124070000OptimizationAutoApply.ts';
export { Migration20261124080000Billing } from './Migration20261124080000Billing.ts';
export { Migration20261124090000Payments } from './Migration20261124090000Payments.ts';
export { Migration20261124100000Invoices } from './Migration20261124100000Invoices.ts';
export { Migration20261124104000StripeSubscription } from './Migration20261124104000StripeSubscription.ts';
export { Migration20261124110000Notifications } from './Migration20261124110000Notifications.ts';
export { Migration20261124121000NotificationMail } from './Migration20261124121000NotificationMail.ts';
export { Migration20261124122000LiveUpdates } from './Migration20261124122000LiveUpdates.ts';
export { Migration20261124124000Secrets } from './Migration20261124124000Secrets.ts';
export { Migration20261124125000Onboarding } from './Migration20261124125000Onboarding.ts';
export { Migration20261124126000Assistant } from './Migration20261124126000Assistant.ts';
export { Migration20261125010000ActivityDeploymentActions } from './Migration20261125010000ActivityDeploymentActions.ts';
export { Migration20261125020000ReportsList } from './Migration20261125020000ReportsList.ts';
export { Migration20261127010000PulumiState } from './Migration20261127010000PulumiState.ts';
export { Migration20261128013000ReportChunks } from './Migration20261128013000ReportChunks.ts';
export { Migration20261128090000IdempotentCreations } from './Migration20261128090000IdempotentCreations.ts';
export { Migration20261128100000ClusterEvents } from './Migration20261128100000ClusterEvents.ts';
export { Migration20261128110000ClusterDesiredStateDelivery } from './Migration20261128110000ClusterDesiredStateDelivery.ts';
export { Migration20261128110100ReportWorkflowStart } from './Migration20261128110100ReportWorkflowStart.ts';
export { Migration20261128110200UnverifiedModels } from './Migration20261128110200UnverifiedModels.ts';
