// Which desired-state generation has reached a deployment's workflow, so a change saved while Temporal was
// unreachable is found and sent again.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122080000DesiredStateDelivery extends Migration {
  override name = 'Migration20261122080000DesiredStateDelivery';

  override up(): void {
    // Existing deployments were sent when they were saved (or are re-sent by their next change).
    this.addSql(`alter table "deployment" add column "sent_generation" int not null default 0;`);
    this.addSql(`update "deployment" set "sent_generation" = "generation";`);
    this.addSql(`create index "deployment_unsent_index" on "deployment" ("updated_at") where "generation" > "sent_generation" and "deleted_at" is null;`);
  }
}
