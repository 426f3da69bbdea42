// MikroORM on PostgreSQL: every entity listed explicitly, migrations listed explicitly (no file
// discovery: Node runs the TypeScript sources directly).
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { MembershipSchema } from '../organizations/membership.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import { RefreshTokenSchema } from '../auth/refresh-token.entity.ts';
import { ApiKeySchema } from '../api-keys/api-key.entity.ts';
import { AuditLogSchema } from '../audit/audit-log.entity.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import { DeploymentEventSchema } from '../deployments/deployment-event.entity.ts';
import { WebhookSubscriptionSchema } from '../webhooks/webhook-subscription.entity.ts';
import { WebhookAttemptSchema } from '../webhooks/webhook-attempt.entity.ts';
import { IdempotencyRecordSchema } from '../idempotency/idempotency-record.entity.ts';
import { FeatureFlagSchema } from '../feature-flags/feature-flag.entity.ts';
import { NotificationSchema } from '../notifications/notification.entity.ts';
import { ErrorIssueSchema } from '../error-tracker/error-issue.entity.ts';
import { ReportSchema } from '../reports/report.entity.ts';
import { GpuClusterSchema } from '../clusters/gpu-cluster.entity.ts';
import { CircuitSchema } from '../recovery/circuit.entity.ts';
import { SsoConfigurationSchema } from '../sso/sso-configuration.entity.ts';
import { SsoLoginSchema } from '../sso/sso-login.entity.ts';
import { InvitationSchema } from '../team/invitation.entity.ts';
import { EmailVerificationSchema } from '../settings/email-verification.entity.ts';
import { CustomRoleSchema } from '../roles/custom-role.entity.ts';
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

export const ENTITIES = [
  BaseSchema,
  OrganizationSchema,
  MembershipSchema,
  UserSchema,
  RefreshTokenSchema,
  ApiKeySchema,
  AuditLogSchema,
  DeploymentSchema,
  DeploymentEventSchema,
  WebhookSubscriptionSchema,
  WebhookAttemptSchema,
  IdempotencyRecordSchema,
  FeatureFlagSchema,
  ErrorIssueSchema,
  ReportSchema,
  GpuClusterSchema,
  CircuitSchema,
  SsoConfigurationSchema,
  SsoLoginSchema,
  InvitationSchema,
  EmailVerificationSchema,
  CustomRoleSchema,
  NotificationSchema,
];

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
      ],
      snapshot: false,
      silent: true,
    },
    // Request handlers use a forked EntityManager each (see http/database.ts); the global one is off limits.
    allowGlobalContext: false,
    pool: { max: 10 },
  });
  if (options.migrate ?? true) await orm.migrator.up();
  return orm;
}
