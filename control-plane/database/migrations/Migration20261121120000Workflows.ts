// Desired state the deployment workflow converges on, its failure reason, and the lifecycle events it emits.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261121120000Workflows extends Migration {
  override name = 'Migration20261121120000Workflows';

  override up(): void {
    this.addSql(`alter table "deployment" add column "generation" int not null default 1, add column "running" boolean not null default true, add column "restarts" int not null default 0, add column "delete_requested" boolean not null default false, add column "failure_reason" text null;`);
    this.addSql(`create table "deployment_event" ("id" varchar(255) not null, "created_at" timestamptz not null, "deployment_id" varchar(255) not null, "organization_id" varchar(255) not null, "type" varchar(255) not null, "generation" int not null, "payload" jsonb not null, primary key ("id"));`);
    this.addSql(`alter table "deployment_event" add constraint "deployment_event_deployment_id_type_generation_unique" unique ("deployment_id", "type", "generation");`);
    this.addSql(`create index "deployment_event_organization_id_created_at_index" on "deployment_event" ("organization_id", "created_at");`);
  }
}
