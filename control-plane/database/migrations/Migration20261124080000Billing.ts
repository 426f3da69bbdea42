// Billing: the replica history metering reads, the closed usage intervals with their per-deployment charges,
// and the credit ledger every change of balance goes through. Existing organizations open their ledger with
// their balance as a grant; deployments already holding GPUs start their history now.
// Row-level security: all four are their organization's.
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;
const TABLES = ['replica_record', 'usage_interval', 'usage_charge', 'credit_entry'];

export class Migration20261124080000Billing extends Migration {
  override name = 'Migration20261124080000Billing';

  override up(): void {
    this.addSql(`create table "replica_record" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "deployment_id" varchar(255) not null, "status" varchar(255) not null, "replicas" int not null, "gpu" varchar(255) not null, "gpus_per_replica" int not null, "observed_at" timestamptz(3) not null, primary key ("id"), constraint "replica_record_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`alter table "replica_record" add constraint "replica_record_deployment_id_observed_at_unique" unique ("deployment_id", "observed_at");`);
    this.addSql(`create index "replica_record_organization_id_observed_at_index" on "replica_record" ("organization_id", "observed_at");`);

    this.addSql(`create table "usage_interval" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "starts_at" timestamptz(3) not null, "ends_at" timestamptz(3) not null, "usage_units" bigint not null, "debit_cents" int not null, primary key ("id"), constraint "usage_interval_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`alter table "usage_interval" add constraint "usage_interval_organization_id_starts_at_unique" unique ("organization_id", "starts_at");`);

    this.addSql(`create table "usage_charge" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "interval_id" varchar(255) not null, "starts_at" timestamptz(3) not null, "deployment_id" varchar(255) not null, "deployment_name" varchar(255) not null, "gpu" varchar(255) not null, "gpu_ms" bigint not null, "rate_cents_per_hour" int not null, "usage_units" bigint not null, primary key ("id"), constraint "usage_charge_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"), constraint "usage_charge_interval_id_foreign" foreign key ("interval_id") references "usage_interval" ("id"));`);
    this.addSql(`create index "usage_charge_organization_id_starts_at_index" on "usage_charge" ("organization_id", "starts_at");`);

    this.addSql(`create table "credit_entry" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "kind" varchar(255) not null, "amount_cents" int not null, "balance_after_cents" int not null, "description" text not null, "reference" varchar(255) not null, primary key ("id"), constraint "credit_entry_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`alter table "credit_entry" add constraint "credit_entry_organization_id_reference_unique" unique ("organization_id", "reference");`);
    this.addSql(`create index "credit_entry_organization_id_created_at_id_index" on "credit_entry" ("organization_id", "created_at", "id");`);

    this.addSql(`alter table "organization" add column "metered_units" bigint not null default 0, add column "metered_until" timestamptz(3) null, add column "last_top_up_cents" int not null default 0, add column "low_balance_percent" int null, add column "credits_exhausted_at" timestamptz(3) null, add column "credits_stopped_at" timestamptz(3) null;`);

    this.addSql(`insert into "credit_entry" ("id", "created_at", "organization_id", "kind", "amount_cents", "balance_after_cents", "description", "reference") select 'cre_' || md5(random()::text || id), now(), id, 'grant', credits_cents, credits_cents, 'Opening balance', 'opening-balance' from "organization";`);
    this.addSql(`update "organization" set "last_top_up_cents" = greatest("credits_cents", 0);`);
    this.addSql(`insert into "replica_record" ("id", "created_at", "organization_id", "deployment_id", "status", "replicas", "gpu", "gpus_per_replica", "observed_at") select 'rep_' || md5(random()::text || id), now(), organization_id, id, status, case when status in ('running', 'scaling', 'updating') then current_replicas else 0 end, gpu, gpus_per_replica, now() from "deployment" where status in ('running', 'scaling', 'updating');`);

    for (const table of TABLES) {
      this.addSql(`alter table "${table}" enable row level security;`);
      this.addSql(`create policy "organization_isolation" on "${table}" to kiln_tenant using (${OWN}) with check (${OWN});`);
    }
  }

  override down(): void {
    this.addSql(`alter table "organization" drop column "metered_units", drop column "metered_until", drop column "last_top_up_cents", drop column "low_balance_percent", drop column "credits_exhausted_at", drop column "credits_stopped_at";`);
    for (const table of ['credit_entry', 'usage_charge', 'usage_interval', 'replica_record']) this.addSql(`drop table "${table}";`);
  }
}
