// Platform notifications (announcements administrators publish to users).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122090000AdminNotifications extends Migration {
  override name = 'Migration20261122090000AdminNotifications';

  override up(): void {
    this.addSql(`create table "notification" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "title" varchar(255) not null, "message" text not null, "severity" varchar(255) not null, "organization_ids" jsonb null, "starts_at" timestamptz(3) null, "ends_at" timestamptz(3) null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "notification_created_at_id_index" on "notification" ("created_at", "id");`);
  }
}
