// The assistant's conversations and their messages, per user and organization. Row-level security: both are
// their organization's.
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

export class Migration20261124126000Assistant extends Migration {
  override name = 'Migration20261124126000Assistant';

  override up(): void {
    this.addSql(`create table "assistant_conversation" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "user_id" varchar(255) not null, "organization_id" varchar(255) not null, "title" varchar(255) not null, "updated_at" timestamptz(3) not null, primary key ("id"), constraint "assistant_conversation_user_id_foreign" foreign key ("user_id") references "user" ("id"), constraint "assistant_conversation_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`create index "assistant_conversation_user_id_organization_id_updated_at_index" on "assistant_conversation" ("user_id", "organization_id", "updated_at");`);

    this.addSql(`create table "assistant_message" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "conversation_id" varchar(255) not null, "organization_id" varchar(255) not null, "role" varchar(255) not null, "content" text not null, "citations" jsonb not null, "model_deployment_id" varchar(255) null, primary key ("id"), constraint "assistant_message_conversation_id_foreign" foreign key ("conversation_id") references "assistant_conversation" ("id") on delete cascade, constraint "assistant_message_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`create index "assistant_message_conversation_id_created_at_index" on "assistant_message" ("conversation_id", "created_at");`);

    for (const table of ['assistant_conversation', 'assistant_message']) {
      this.addSql(`alter table "${table}" enable row level security;`);
      this.addSql(`create policy "organization_isolation" on "${table}" to kiln_tenant using (${OWN}) with check (${OWN});`);
    }
  }

  override down(): void {
    for (const table of ['assistant_message', 'assistant_conversation']) this.addSql(`drop table "${table}";`);
  }
}
