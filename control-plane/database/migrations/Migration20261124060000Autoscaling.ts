// Kiln's autoscaler: each deployment's policy (catalog/autoscaling.ts; existing rows take the defaults), and
// events numbered within a generation, so each of the autoscaler's scales is a `deployment.scaled` of its own.
import { Migration } from '@mikro-orm/migrations';
import { DEFAULT_AUTOSCALING } from '../../../catalog/autoscaling.ts';

export class Migration20261124060000Autoscaling extends Migration {
  override name = 'Migration20261124060000Autoscaling';

  override up(): void {
    this.addSql(`alter table "deployment" add column "autoscaling" jsonb not null default '${JSON.stringify(DEFAULT_AUTOSCALING)}';`);
    this.addSql(`alter table "deployment" add column "replica_requests" int not null default 0;`);
    this.addSql(`alter table "deployment_event" add column "sequence" int not null default 0;`);
    this.addSql(`alter table "deployment_event" drop constraint "deployment_event_deployment_id_type_generation_unique";`);
    this.addSql(`alter table "deployment_event" add constraint "deployment_event_deployment_id_type_generation_sequence_unique" unique ("deployment_id", "type", "generation", "sequence");`);
  }
}
