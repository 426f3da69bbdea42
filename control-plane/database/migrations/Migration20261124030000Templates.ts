// Deployment templates (versions, stars, update subscriptions), the per-user notifications their updates
// create, and the template a deployment was created from. Row-level security: a template and its versions
// are their organization's, but every tenant may read public ones (a select-only policy beside the
// organization's); subscriptions and user notifications are their organization's; stars are the user's
// (a platform table: counts add up every organization's users).
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

export class Migration20261124030000Templates extends Migration {
  override name = 'Migration20261124030000Templates';

  override up(): void {
    this.addSql(`create table "template" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "name" varchar(255) not null, "description" text not null, "visibility" varchar(255) not null, "latest_version" int not null, "created_by" varchar(255) not null, "updated_at" timestamptz(3) not null, primary key ("id"), constraint "template_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`alter table "template" add constraint "template_organization_id_name_unique" unique ("organization_id", "name");`);
    this.addSql(`create index "template_visibility_name_index" on "template" ("visibility", "name", "id");`);

    this.addSql(`create table "template_version" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "template_id" varchar(255) not null, "organization_id" varchar(255) not null, "version" int not null, "model" varchar(255) not null, "gpu" varchar(255) not null, "gpus_per_replica" int not null, "replicas" int not null, "min_replicas" int not null, "max_replicas" int not null, "context_length" int null, "dtype" varchar(255) not null, "vllm_args" jsonb not null, "notes" text null, "created_by" varchar(255) not null, primary key ("id"), constraint "template_version_template_id_foreign" foreign key ("template_id") references "template" ("id"), constraint "template_version_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`alter table "template_version" add constraint "template_version_template_id_version_unique" unique ("template_id", "version");`);

    this.addSql(`create table "template_star" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "template_id" varchar(255) not null, "user_id" varchar(255) not null, primary key ("id"), constraint "template_star_user_id_foreign" foreign key ("user_id") references "user" ("id"));`);
    this.addSql(`alter table "template_star" add constraint "template_star_template_id_user_id_unique" unique ("template_id", "user_id");`);
    this.addSql(`create index "template_star_user_id_index" on "template_star" ("user_id");`);

    this.addSql(`create table "template_subscription" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "user_id" varchar(255) not null, "organization_id" varchar(255) not null, "template_id" varchar(255) not null, "reason" varchar(255) not null, primary key ("id"), constraint "template_subscription_user_id_foreign" foreign key ("user_id") references "user" ("id"), constraint "template_subscription_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"), constraint "template_subscription_template_id_foreign" foreign key ("template_id") references "template" ("id"));`);
    this.addSql(`alter table "template_subscription" add constraint "template_subscription_user_org_template_unique" unique ("user_id", "organization_id", "template_id");`);
    this.addSql(`create index "template_subscription_template_id_index" on "template_subscription" ("template_id");`);

    this.addSql(`create table "user_notification" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "user_id" varchar(255) not null, "organization_id" varchar(255) not null, "kind" varchar(255) not null, "payload" jsonb not null, "read_at" timestamptz(3) null, primary key ("id"), constraint "user_notification_user_id_foreign" foreign key ("user_id") references "user" ("id"), constraint "user_notification_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`create index "user_notification_user_id_organization_id_created_at_id_index" on "user_notification" ("user_id", "organization_id", "created_at", "id");`);

    // Plain text, not foreign keys: a catalog preset has no row, and a public template may be another organization's.
    this.addSql(`alter table "deployment" add column "template_id" varchar(255) null, add column "template_version" int null;`);
    this.addSql(`create index "deployment_template_id_index" on "deployment" ("template_id") where "template_id" is not null;`);

    for (const table of ['template', 'template_version', 'template_subscription', 'user_notification']) {
      this.addSql(`alter table "${table}" enable row level security;`);
      this.addSql(`create policy "organization_isolation" on "${table}" to kiln_tenant using (${OWN}) with check (${OWN});`);
    }
    // Selecting only: writes stay with the owner organization's policy above.
    this.addSql(`create policy "public_read" on "template" for select to kiln_tenant using ("visibility" = 'public');`);
    this.addSql(`create policy "public_read" on "template_version" for select to kiln_tenant using (exists (select 1 from "template" t where t."id" = "template_id" and t."visibility" = 'public'));`);
  }

  override down(): void {
    this.addSql(`drop index "deployment_template_id_index";`);
    this.addSql(`alter table "deployment" drop column "template_id", drop column "template_version";`);
    for (const table of ['user_notification', 'template_subscription', 'template_star', 'template_version', 'template']) this.addSql(`drop table "${table}";`);
  }
}
