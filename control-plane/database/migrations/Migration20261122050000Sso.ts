// SSO: one identity-provider configuration per organization (client secret sealed) and the logins in
// progress (state hashed, single use, short-lived).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122050000Sso extends Migration {
  override name = 'Migration20261122050000Sso';

  override up(): void {
    this.addSql(`create table "sso_configuration" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null references "organization" ("id"), "provider" varchar(255) not null, "issuer" text not null, "client_id" varchar(255) not null, "sealed_client_secret" text not null, "allowed_domains" jsonb not null, "default_role" varchar(255) not null, "jit_provisioning" boolean not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "sso_configuration" add constraint "sso_configuration_organization_id_unique" unique ("organization_id");`);
    this.addSql(`create table "sso_login" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null references "organization" ("id"), "provider" varchar(255) not null, "state_hash" varchar(255) not null, "nonce" varchar(255) not null, "sealed_code_verifier" text not null, "redirect_uri" text not null, "expires_at" timestamptz not null, "used_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "sso_login" add constraint "sso_login_state_hash_unique" unique ("state_hash");`);
    this.addSql(`create index "sso_login_expires_at_index" on "sso_login" ("expires_at");`);
  }
}
