// Recovery actions kept in the desired state: refresh-and-retry and force-delete.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261121140000Recovery extends Migration {
  override name = 'Migration20261121140000Recovery';

  override up(): void {
    this.addSql(`alter table "deployment" add column "refreshes" int not null default 0, add column "force_delete" boolean not null default false;`);
  }
}
