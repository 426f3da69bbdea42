// Platform administration: feature flags, the error tracker's issues, generated reports, API-key rotation
// time, and an index for the platform-wide audit listing (newest first across all organizations).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122060000Admin extends Migration {
  override name = 'Migration20261122060000Admin';

  override up(): void {
    this.addSql(`create table "feature_flag" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "key" varchar(255) not null, "description" text not null, "enabled" boolean not null, "rollout_percent" int not null, "overrides" jsonb not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "feature_flag" add constraint "feature_flag_key_unique" unique ("key");`);

    this.addSql(`create table "error_issue" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "fingerprint" varchar(255) not null, "name" varchar(255) not null, "message" text not null, "stack" text not null, "count" int not null, "last_seen_at" timestamptz(3) not null, "last_request" varchar(255) not null, primary key ("id"));`);
    this.addSql(`alter table "error_issue" add constraint "error_issue_fingerprint_unique" unique ("fingerprint");`);
    this.addSql(`create index "error_issue_last_seen_at_index" on "error_issue" ("last_seen_at");`);

    this.addSql(`create table "report" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "kind" varchar(255) not null, "from" timestamptz(3) null, "to" timestamptz(3) null, "status" varchar(255) not null, "requested_by" varchar(255) not null, "rows" int null, "bytes" bigint null, "error" text null, "completed_at" timestamptz(3) null, primary key ("id"));`);

    this.addSql(`alter table "api_key" add column "rotated_at" timestamptz null;`);

    this.addSql(`create index "audit_log_created_at_id_index" on "audit_log" ("created_at", "id");`);
  }
}
