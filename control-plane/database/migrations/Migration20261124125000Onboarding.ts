// Onboarding: each user's onboarding state in an organization (dismissed, skipped steps; whether a step is
// done is read from the records it is about, never stored), and GPU clusters an organization brings itself.
// Row-level security: an onboarding row is its organization's; a shared cluster (no organization) is read by
// every tenant and changed by none, an organization's own cluster is seen and changed by it alone.
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

export class Migration20261124125000Onboarding extends Migration {
  override name = 'Migration20261124125000Onboarding';

  override up(): void {
    this.addSql(`create table "onboarding_state" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "user_id" varchar(255) not null, "organization_id" varchar(255) not null, "dismissed_at" timestamptz(3) null, "skipped" jsonb not null, "updated_at" timestamptz(3) not null, primary key ("id"), constraint "onboarding_state_user_id_foreign" foreign key ("user_id") references "user" ("id"), constraint "onboarding_state_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`alter table "onboarding_state" add constraint "onboarding_state_user_id_organization_id_unique" unique ("user_id", "organization_id");`);
    this.addSql(`alter table "onboarding_state" enable row level security;`);
    this.addSql(`create policy "organization_isolation" on "onboarding_state" to kiln_tenant using (${OWN}) with check (${OWN});`);

    this.addSql(`alter table "gpu_cluster" add column "organization_id" varchar(255) null references "organization" ("id");`);
    // Names are unique among the shared clusters, and within each organization's own.
    this.addSql(`drop index "gpu_cluster_live_name_unique";`);
    this.addSql(`create unique index "gpu_cluster_live_name_unique" on "gpu_cluster" (coalesce("organization_id", ''), "name") where "deleted_at" is null;`);
    this.addSql(`create index "gpu_cluster_organization_id_index" on "gpu_cluster" ("organization_id") where "organization_id" is not null;`);
    this.addSql(`alter table "gpu_cluster" enable row level security;`);
    this.addSql(`create policy "organization_isolation" on "gpu_cluster" to kiln_tenant using (${OWN}) with check (${OWN});`);
    // Selecting only: the shared clusters are written by platform administration and the worker, outside tenant scope.
    this.addSql(`create policy "shared_read" on "gpu_cluster" for select to kiln_tenant using ("organization_id" is null);`);
  }

  override down(): void {
    this.addSql(`drop policy "shared_read" on "gpu_cluster";`);
    this.addSql(`drop policy "organization_isolation" on "gpu_cluster";`);
    this.addSql(`alter table "gpu_cluster" disable row level security;`);
    this.addSql(`drop index "gpu_cluster_organization_id_index";`);
    this.addSql(`drop index "gpu_cluster_live_name_unique";`);
    this.addSql(`create unique index "gpu_cluster_live_name_unique" on "gpu_cluster" ("name") where "deleted_at" is null;`);
    this.addSql(`alter table "gpu_cluster" drop column "organization_id";`);
    this.addSql(`drop table "onboarding_state";`);
  }
}
