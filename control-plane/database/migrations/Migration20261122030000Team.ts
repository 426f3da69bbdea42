// Organization settings (slug, contact e-mail, default region), team invitations and e-mail address
// confirmations. Existing organizations get the slug `org-<id suffix>`, unique by construction.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122030000Team extends Migration {
  override name = 'Migration20261122030000Team';

  override up(): void {
    this.addSql(`alter table "organization" add column "slug" varchar(255) null, add column "contact_email" varchar(255) null, add column "default_region" varchar(255) not null default 'us-east-1';`);
    this.addSql(`update "organization" set "slug" = replace("id", '_', '-');`);
    this.addSql(`alter table "organization" alter column "slug" set not null, alter column "default_region" drop default;`);
    this.addSql(`alter table "organization" add constraint "organization_slug_unique" unique ("slug");`);

    this.addSql(`create table "invitation" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null references "organization" ("id"), "email" varchar(255) not null, "role" varchar(255) not null, "invited_by_id" varchar(255) not null references "user" ("id"), "token_hash" varchar(255) not null, "expires_at" timestamptz not null, "state" varchar(255) not null, "answered_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "invitation" add constraint "invitation_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "invitation_organization_id_created_at_index" on "invitation" ("organization_id", "created_at");`);

    this.addSql(`create table "email_verification" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "user_id" varchar(255) not null references "user" ("id"), "email" varchar(255) not null, "token_hash" varchar(255) not null, "expires_at" timestamptz not null, "closed_at" timestamptz null, "confirmed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "email_verification" add constraint "email_verification_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "email_verification_user_id_index" on "email_verification" ("user_id");`);
  }
}
