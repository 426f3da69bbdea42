// Alert rules (budgets among them), the alerts they fire (or raised by hand) and the events each firing and
// resolution records once. Row-level security: all three are their organization's.
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

export class Migration20261124040000Alerts extends Migration {
  override name = 'Migration20261124040000Alerts';

  override up(): void {
    this.addSql(`create table "alert_rule" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "name" varchar(255) not null, "metric" varchar(255) not null, "deployment_id" varchar(255) null, "quantile" varchar(255) not null, "comparison" varchar(255) not null, "threshold" double precision not null, "for_seconds" int not null, "period" varchar(255) not null, "basis" varchar(255) not null, "action" varchar(255) not null, "enabled" boolean not null, "state" varchar(255) not null, "since" timestamptz(3) null, "last_value" double precision null, "evaluated_at" timestamptz(3) null, "firings" int not null, "silenced_until" timestamptz(3) null, "updated_at" timestamptz(3) not null, "deleted_at" timestamptz(3) null, primary key ("id"), constraint "alert_rule_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`create index "alert_rule_organization_id_created_at_index" on "alert_rule" ("organization_id", "created_at");`);
    // What the evaluation reads each pass.
    this.addSql(`create index "alert_rule_live_index" on "alert_rule" ("organization_id") where "deleted_at" is null and "enabled";`);

    this.addSql(`create table "alert" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "rule_id" varchar(255) null, "sequence" int not null, "name" varchar(255) not null, "metric" varchar(255) not null, "message" text not null, "state" varchar(255) not null, "value" double precision null, "threshold" double precision null, "started_at" timestamptz(3) not null, "fired_at" timestamptz(3) not null, "resolved_at" timestamptz(3) null, "acknowledged_at" timestamptz(3) null, "acknowledged_by" varchar(255) null, "silenced_until" timestamptz(3) null, primary key ("id"), constraint "alert_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`alter table "alert" add constraint "alert_rule_id_sequence_unique" unique ("rule_id", "sequence");`);
    this.addSql(`create index "alert_organization_id_created_at_index" on "alert" ("organization_id", "created_at");`);

    this.addSql(`create table "alert_event" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "alert_id" varchar(255) not null, "type" varchar(255) not null, "payload" jsonb not null, "dispatched_at" timestamptz(3) null, primary key ("id"), constraint "alert_event_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"), constraint "alert_event_alert_id_foreign" foreign key ("alert_id") references "alert" ("id"));`);
    this.addSql(`alter table "alert_event" add constraint "alert_event_alert_id_type_unique" unique ("alert_id", "type");`);
    this.addSql(`create index "alert_event_undispatched_index" on "alert_event" ("created_at") where "dispatched_at" is null;`);

    for (const table of ['alert_rule', 'alert', 'alert_event']) {
      this.addSql(`alter table "${table}" enable row level security;`);
      this.addSql(`create policy "organization_isolation" on "${table}" to kiln_tenant using (${OWN}) with check (${OWN});`);
    }
  }

  override down(): void {
    for (const table of ['alert_event', 'alert', 'alert_rule']) this.addSql(`drop table "${table}";`);
  }
}
