// Organizations' model registries (models/organization-model.entity.ts): an organization table, so it gets the
// row-level security policy every organization table has (Migration20261123020000RowLevelSecurity).
import { Migration } from '@mikro-orm/migrations';

const OWN_ORGANIZATION = 'organization_id = current_setting(\'app.organization_id\', true)';

export class Migration20261124020000OrganizationModels extends Migration {
  override name = 'Migration20261124020000OrganizationModels';

  override up(): void {
    this.addSql(`create table "organization_model" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null references "organization" ("id"), "reference" varchar(255) not null, "reference_key" varchar(255) not null, "display_name" varchar(255) null, "description" text null, "default_vllm_args" jsonb not null, "default_context_length" int null, "facts" jsonb null, "facts_fetched_at" timestamptz(3) null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "organization_model" add constraint "organization_model_organization_id_reference_key_unique" unique ("organization_id", "reference_key");`);
    this.addSql(`alter table "organization_model" enable row level security;`);
    this.addSql(`create policy "organization_isolation" on "organization_model" to kiln_tenant using (${OWN_ORGANIZATION}) with check (${OWN_ORGANIZATION});`);
  }

  override down(): void {
    this.addSql(`drop table "organization_model";`);
  }
}
