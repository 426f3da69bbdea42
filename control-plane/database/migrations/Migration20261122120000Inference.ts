// Inference: audit records carry details (an inference's token counts, for billing), and a GPU cluster
// whose pod network Kiln cannot reach names the gateway that relays to its deployments.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122120000Inference extends Migration {
  override name = 'Migration20261122120000Inference';

  override up(): void {
    this.addSql(`alter table "audit_log" add column "details" jsonb null;`);
    this.addSql(`alter table "gpu_cluster" add column "gateway_url" text null;`);
  }
}
