// Service role keys: platform credentials (no organization column), stored as hashes.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261123010000ServiceKeys extends Migration {
  override name = 'Migration20261123010000ServiceKeys';

  override up(): void {
    this.addSql(`create table "service_key" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "name" varchar(255) not null, "created_by_id" varchar(255) not null, "prefix" varchar(255) not null, "key_hash" varchar(255) not null, "last_used_at" timestamptz null, "rotated_at" timestamptz null, "revoked_at" timestamptz null, primary key ("id"), constraint "service_key_created_by_id_foreign" foreign key ("created_by_id") references "user" ("id"));`);
    this.addSql(`alter table "service_key" add constraint "service_key_key_hash_unique" unique ("key_hash");`);
  }
}
