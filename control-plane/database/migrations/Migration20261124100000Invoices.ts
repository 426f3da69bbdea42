// Monthly invoices (workflows/invoicing/ issues them, control-plane/invoices/ serves them). Numbered 1, 2, 3...
// per organization, one per organization and period; an issued invoice is a record, never changed or removed:
// triggers refuse UPDATE, DELETE and TRUNCATE whoever asks (the worker and the API's own user included).
// Row-level security: the organization's.
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

export class Migration20261124100000Invoices extends Migration {
  override name = 'Migration20261124100000Invoices';

  override up(): void {
    this.addSql(`create table "invoice" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "number" int not null, "period_start" timestamptz(3) not null, "period_end" timestamptz(3) not null, "plan" varchar(255) not null, "plan_fee_cents" int not null, "usage_cents" int not null, "credits_applied_cents" int not null, "total_cents" int not null, "currency" varchar(3) not null default 'usd', "lines" jsonb not null, "issued_at" timestamptz(3) not null, primary key ("id"), constraint "invoice_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"), constraint "invoice_number_positive" check ("number" >= 1), constraint "invoice_amounts_whole" check ("plan_fee_cents" >= 0 and "usage_cents" >= 0 and "credits_applied_cents" >= 0 and "total_cents" >= 0));`);
    this.addSql(`alter table "invoice" add constraint "invoice_organization_id_number_unique" unique ("organization_id", "number");`);
    this.addSql(`alter table "invoice" add constraint "invoice_organization_id_period_start_unique" unique ("organization_id", "period_start");`);

    this.addSql(`create function "invoice_immutable"() returns trigger language plpgsql as $$
begin
  raise exception 'invoices are issued once and never changed or deleted (% refused)', tg_op using errcode = 'restrict_violation';
end $$;`);
    this.addSql(`create trigger "invoice_immutable" before update or delete on "invoice" for each row execute function "invoice_immutable"();`);
    this.addSql(`create trigger "invoice_not_truncated" before truncate on "invoice" for each statement execute function "invoice_immutable"();`);

    this.addSql(`alter table "invoice" enable row level security;`);
    this.addSql(`create policy "organization_isolation" on "invoice" to kiln_tenant using (${OWN}) with check (${OWN});`);
  }

  override down(): void {
    this.addSql(`drop table "invoice";`);
    this.addSql(`drop function "invoice_immutable"();`);
  }
}
