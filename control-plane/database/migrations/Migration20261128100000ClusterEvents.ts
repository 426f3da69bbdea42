// The capacity decisions about a local cluster's node pools (control-plane/clusters/cluster-event.entity.ts): a
// pool grown for a deployment, a pool shrunk after idle time. Platform records, read only by platform
// administrators (who bypass row-level security): kiln_tenant, which the default privileges would grant them to,
// has no grant on them.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128100000ClusterEvents extends Migration {
  override name = 'Migration20261128100000ClusterEvents';

  override up(): void {
    this.addSql(`create table "cluster_event" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "cluster_id" varchar(255) not null, "type" varchar(255) not null, "request_id" varchar(255) not null, "deployment_id" varchar(255) null, "payload" jsonb not null, primary key ("id"));`);
    this.addSql(`alter table "cluster_event" add constraint "cluster_event_cluster_id_request_id_unique" unique ("cluster_id", "request_id");`);
    this.addSql(`create index "cluster_event_cluster_id_created_at_index" on "cluster_event" ("cluster_id", "created_at");`);
    this.addSql(`revoke all on "cluster_event" from kiln_tenant;`);
  }

  override down(): void {
    this.addSql(`drop table if exists "cluster_event" cascade;`);
  }
}
