// GPU clusters (kubeconfig sealed), the cluster serving each deployment, and the provisioning circuits.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122010000Clusters extends Migration {
  override name = 'Migration20261122010000Clusters';

  override up(): void {
    this.addSql(`create table "gpu_cluster" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "name" varchar(255) not null, "provider" varchar(255) not null, "status" varchar(255) not null, "sealed_kubeconfig" text null, "gpus" jsonb not null, "spec" jsonb null, "generation" int not null default 1, "delete_requested" boolean not null default false, "failure_reason" text null, "updated_at" timestamptz(3) not null, "deleted_at" timestamptz null, primary key ("id"));`);
    // One live cluster per name; a deleted cluster's name is free again.
    this.addSql(`create unique index "gpu_cluster_live_name_unique" on "gpu_cluster" ("name") where "deleted_at" is null;`);
    this.addSql(`alter table "deployment" add column "cluster_id" varchar(255) null references "gpu_cluster" ("id");`);
    this.addSql(`create table "circuit" ("provider" varchar(255) not null, "gpu_type" varchar(255) not null, "failures" int not null default 0, "last_failure" text null, "opened_at" timestamptz(3) null, "half_opens_at" timestamptz(3) null, "trial_started_at" timestamptz(3) null, "updated_at" timestamptz(3) not null, primary key ("provider", "gpu_type"));`);
  }
}
