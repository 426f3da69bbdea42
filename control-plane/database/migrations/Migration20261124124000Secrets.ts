// Organizations' secrets (secrets/organization-secret.entity.ts), sealed; names unique per organization.
// Row-level security: a row is its organization's.
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

export class Migration20261124124000Secrets extends Migration {
  override name = 'Migration20261124124000Secrets';

  override up(): void {
    this.addSql(`create table "organization_secret" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "name" varchar(255) not null, "type" varchar(255) not null, "sealed_value" text not null, "last_four" varchar(255) not null, "details" jsonb not null, "created_by" varchar(255) null, "last_used_at" timestamptz(3) null, primary key ("id"), constraint "organization_secret_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`alter table "organization_secret" add constraint "organization_secret_organization_id_name_unique" unique ("organization_id", "name");`);
    this.addSql(`create index "organization_secret_organization_id_created_at_index" on "organization_secret" ("organization_id", "created_at");`);
    this.addSql(`alter table "organization_secret" enable row level security;`);
    // The secrets a deployment mounts as environment variables: [{name, secretId}], null for none.
    this.addSql(`alter table "deployment" add column "secrets" jsonb null;`);
    this.addSql(`create policy "organization_isolation" on "organization_secret" to kiln_tenant using (${OWN}) with check (${OWN});`);
  }

  override down(): void {
    this.addSql(`alter table "deployment" drop column "secrets";`);
    this.addSql(`drop table "organization_secret";`);
  }
}
