// The notification e-mail outbox (notifications/notification-mail.entity.ts): written by the API and the
// worker, sent by the API's replicas. Row-level security: a row is its organization's.
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

export class Migration20261124121000NotificationMail extends Migration {
  override name = 'Migration20261124121000NotificationMail';

  override up(): void {
    this.addSql(`create table "notification_mail" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "user_id" varchar(255) not null, "organization_id" varchar(255) not null, "kind" varchar(255) not null, "payload" jsonb not null, "sent_at" timestamptz(3) null, "attempts" integer not null default 0, "last_error" text null, primary key ("id"), constraint "notification_mail_user_id_foreign" foreign key ("user_id") references "user" ("id"), constraint "notification_mail_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    // The senders walk what is still owed, oldest first (5: notification-mail.entity.ts MAIL_ATTEMPTS).
    this.addSql(`create index "notification_mail_owed_index" on "notification_mail" ("created_at", "id") where "sent_at" is null and "attempts" < 5;`);
    this.addSql(`alter table "notification_mail" enable row level security;`);
    this.addSql(`create policy "organization_isolation" on "notification_mail" to kiln_tenant using (${OWN}) with check (${OWN});`);
  }

  override down(): void {
    this.addSql(`drop table "notification_mail";`);
  }
}
