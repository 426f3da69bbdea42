// The activity feed's audited actions on deployments (Kiln's own, and the stops, starts, restarts, scales and
// configuration changes users asked for) are a few rows among an organization's audit trail, which holds every
// inference call too: a partial index keeps the feed from walking the whole trail to find them.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261125010000ActivityDeploymentActions extends Migration {
  override name = 'Migration20261125010000ActivityDeploymentActions';

  override up(): void {
    this.addSql(`create index "audit_log_deployment_actions_index" on "audit_log" ("organization_id", "created_at")
      where "resource_type" = 'deployment' and ("user_id" like 'system:%' or "action" in ('deploymentActionV1', 'updateDeployment', 'replaceDeployment'));`);
  }

  override down(): void {
    this.addSql(`drop index "audit_log_deployment_actions_index";`);
  }
}
