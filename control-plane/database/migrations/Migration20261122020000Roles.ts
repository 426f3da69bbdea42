// Custom roles. A membership's `role` holds a built-in role's name or a custom role's id; the generated
// `custom_role_id` lets a foreign key keep the latter valid: it must name a role of the membership's own
// organization, and a role still held by a member cannot be deleted.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122020000Roles extends Migration {
  override name = 'Migration20261122020000Roles';

  override up(): void {
    this.addSql(`create table "custom_role" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null references "organization" ("id"), "name" varchar(255) not null, "description" text null, "permissions" jsonb not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "custom_role" add constraint "custom_role_id_organization_id_unique" unique ("id", "organization_id");`);
    // Names are unique per organization whatever their case, as people read them.
    this.addSql(`create unique index "custom_role_organization_id_name_unique" on "custom_role" ("organization_id", lower("name"));`);
    this.addSql(`alter table "membership" add column "custom_role_id" varchar(255) generated always as (case when starts_with("role", 'role_') then "role" end) stored;`);
    this.addSql(`alter table "membership" add constraint "membership_custom_role_fkey" foreign key ("custom_role_id", "organization_id") references "custom_role" ("id", "organization_id");`);
    this.addSql(`create index "membership_custom_role_id_index" on "membership" ("custom_role_id");`);
  }
}
