// Generated from the entities (orm.schema.getCreateSchemaSQL()), plus what entities cannot say: the
// partial unique index on live deployment names and the rate limiter's table.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000000Initial extends Migration {
  override name = 'Migration20261121000000Initial';

  override up(): void {
    this.addSql(`create table "organization" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "name" varchar(255) not null, "plan" varchar(255) not null, "credits_cents" int not null, primary key ("id"));`);

    this.addSql(`create table "user" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "email" varchar(255) not null, "name" varchar(255) not null, "password_hash" varchar(255) not null, primary key ("id"));`);
    this.addSql(`alter table "user" add constraint "user_email_unique" unique ("email");`);

    this.addSql(`create table "membership" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null references "organization" ("id"), "user_id" varchar(255) not null references "user" ("id"), "role" varchar(255) not null, primary key ("id"));`);
    this.addSql(`alter table "membership" add constraint "membership_organization_id_user_id_unique" unique ("organization_id", "user_id");`);
    this.addSql(`create index "membership_user_id_index" on "membership" ("user_id");`);

    this.addSql(`create table "refresh_token" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "user_id" varchar(255) not null references "user" ("id"), "organization_id" varchar(255) not null references "organization" ("id"), "family_id" varchar(255) not null, "token_hash" varchar(255) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "revoked_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "refresh_token_family_id_index" on "refresh_token" ("family_id");`);
    this.addSql(`alter table "refresh_token" add constraint "refresh_token_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "api_key" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null references "organization" ("id"), "user_id" varchar(255) not null references "user" ("id"), "name" varchar(255) not null, "scope" varchar(255) not null, "prefix" varchar(255) not null, "key_hash" varchar(255) not null, "last_used_at" timestamptz null, "revoked_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "api_key" add constraint "api_key_key_hash_unique" unique ("key_hash");`);
    this.addSql(`create index "api_key_organization_id_index" on "api_key" ("organization_id");`);

    this.addSql(`create table "audit_log" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "action" varchar(255) not null, "resource_type" varchar(255) not null, "resource_id" varchar(255) null, "user_id" varchar(255) not null, "api_key_id" varchar(255) null, "ip_address" varchar(255) not null, "status_code" int not null, primary key ("id"));`);
    this.addSql(`create index "audit_log_organization_id_created_at_index" on "audit_log" ("organization_id", "created_at");`);

    this.addSql(`create table "deployment" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null references "organization" ("id"), "name" varchar(255) not null, "model" varchar(255) not null, "runtime" varchar(255) not null, "gpu" varchar(255) not null, "status" varchar(255) not null, "endpoint" varchar(255) not null, "replicas" int not null, "min_replicas" int not null, "max_replicas" int not null, "current_replicas" int not null, "updated_at" timestamptz(3) not null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "deployment_organization_id_created_at_id_index" on "deployment" ("organization_id", "created_at", "id");`);
    this.addSql(`create unique index "deployment_organization_id_live_name_unique" on "deployment" ("organization_id", "name") where "deleted_at" is null;`);

    this.addSql(`create table "idempotency_record" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "caller_key" varchar(255) not null, "key" varchar(255) not null, "request_hash" varchar(255) not null, "status_code" int not null, "response_body" jsonb not null, primary key ("id"));`);
    this.addSql(`alter table "idempotency_record" add constraint "idempotency_record_caller_key_key_unique" unique ("caller_key", "key");`);

    // rate-limiter-flexible's RateLimiterPostgres layout (created here so it needs no DDL rights at run
    // time). Unlogged: counters of a one-minute window need no WAL, and writing none keeps the limiter
    // cheap on every request; a crash merely resets them.
    this.addSql(`create unlogged table "rate_limit" ("key" varchar(255) primary key, "points" integer not null default 0, "expire" bigint);`);
  }
}
