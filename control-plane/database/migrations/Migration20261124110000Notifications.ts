// Notifications: per-user reads of platform announcements, and each user's preferences (which kinds in the app
// and by e-mail) per organization. Row-level security: both are their organization's.
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

export class Migration20261124110000Notifications extends Migration {
  override name = 'Migration20261124110000Notifications';

  override up(): void {
    this.addSql(`create table "notification_read" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "user_id" varchar(255) not null, "organization_id" varchar(255) not null, "notification_id" varchar(255) not null, primary key ("id"), constraint "notification_read_user_id_foreign" foreign key ("user_id") references "user" ("id"), constraint "notification_read_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"), constraint "notification_read_notification_id_foreign" foreign key ("notification_id") references "notification" ("id") on delete cascade);`);
    this.addSql(`alter table "notification_read" add constraint "notification_read_user_id_organization_id_notification_id_unique" unique ("user_id", "organization_id", "notification_id");`);
    this.addSql(`create index "notification_read_notification_id_index" on "notification_read" ("notification_id");`);

    this.addSql(`create table "notification_preference" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "user_id" varchar(255) not null, "organization_id" varchar(255) not null, "in_app" jsonb not null, "email" jsonb not null, "updated_at" timestamptz(3) not null, primary key ("id"), constraint "notification_preference_user_id_foreign" foreign key ("user_id") references "user" ("id"), constraint "notification_preference_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`alter table "notification_preference" add constraint "notification_preference_user_id_organization_id_unique" unique ("user_id", "organization_id");`);

    // A user's unread list filters on read_at is null.
    this.addSql(`create index "user_notification_unread_index" on "user_notification" ("user_id", "organization_id") where "read_at" is null;`);

    for (const table of ['notification_read', 'notification_preference']) {
      this.addSql(`alter table "${table}" enable row level security;`);
      this.addSql(`create policy "organization_isolation" on "${table}" to kiln_tenant using (${OWN}) with check (${OWN});`);
    }
  }

  override down(): void {
    this.addSql(`drop index "user_notification_unread_index";`);
    for (const table of ['notification_preference', 'notification_read']) this.addSql(`drop table "${table}";`);
  }
}
