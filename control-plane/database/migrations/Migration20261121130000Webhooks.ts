// Webhook subscriptions (secret sealed) and the record of every delivery attempt.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261121130000Webhooks extends Migration {
  override name = 'Migration20261121130000Webhooks';

  override up(): void {
    this.addSql(`create table "webhook_subscription" ("id" varchar(255) not null, "created_at" timestamptz not null, "organization_id" varchar(255) not null references "organization" ("id"), "url" text not null, "events" jsonb not null, "sealed_secret" text not null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "webhook_subscription_organization_id_created_at_index" on "webhook_subscription" ("organization_id", "created_at");`);
    this.addSql(`create table "webhook_attempt" ("id" varchar(255) not null, "created_at" timestamptz not null, "subscription_id" varchar(255) not null, "delivery_id" varchar(255) not null, "event_id" varchar(255) not null, "attempt" int not null, "status_code" int null, "error" text null, "duration_ms" int not null, primary key ("id"));`);
    this.addSql(`create index "webhook_attempt_subscription_id_created_at_index" on "webhook_attempt" ("subscription_id", "created_at");`);
  }
}
