// How vLLM serves a deployment: GPUs per replica, context length, dtype and extra server flags. Rows older
// than these columns ran on one GPU with vLLM's own defaults, which is what the defaults say.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261124010000DeploymentServing extends Migration {
  override name = 'Migration20261124010000DeploymentServing';

  override up(): void {
    this.addSql(`alter table "deployment" add column "gpus_per_replica" int not null default 1, add column "context_length" int null, add column "dtype" varchar(255) not null default 'auto', add column "vllm_args" jsonb not null default '[]';`);
  }
}
