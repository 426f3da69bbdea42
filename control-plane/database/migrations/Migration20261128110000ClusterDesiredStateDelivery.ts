// Which desired-state generation has reached a cluster's workflow, so a change saved while Temporal was
// unreachable is found and sent again (clusters/delivery.ts), as deployments' are.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128110000ClusterDesiredStateDelivery extends Migration {
  override name = 'Migration20261128110000ClusterDesiredStateDelivery';

  override up(): void {
    // Existing clusters were sent when they were saved (or are re-sent by their next change).
    this.addSql(`alter table "gpu_cluster" add column "sent_generation" int not null default 0;`);
    this.addSql(`update "gpu_cluster" set "sent_generation" = "generation";`);
  }
}
