// Deployments' optimization policies (targets, cost ceiling, auto-apply): an organization table, with the
// row-level security policy every organization table has.
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

export class Migration20261124050000OptimizationPolicy extends Migration {
  override name = 'Migration20261124050000OptimizationPolicy';

  override up(): void {
    this.addSql(`create table "optimization_policy" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "deployment_id" varchar(255) not null, "target_p95_ttft_ms" int null, "max_hourly_cents" int null, "auto_apply" boolean not null default false, "updated_at" timestamptz(3) not null, primary key ("id"), constraint "optimization_policy_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"), constraint "optimization_policy_deployment_id_foreign" foreign key ("deployment_id") references "deployment" ("id"));`);
    this.addSql(`alter table "optimization_policy" add constraint "optimization_policy_deployment_id_unique" unique ("deployment_id");`);
    this.addSql(`alter table "optimization_policy" enable row level security;`);
    this.addSql(`create policy "organization_isolation" on "optimization_policy" to kiln_tenant using (${OWN}) with check (${OWN});`);
  }

  override down(): void {
    this.addSql(`drop table "optimization_policy";`);
  }
}
