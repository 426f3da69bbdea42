// Payments through Stripe: the checkout sessions Kiln created (the webhook acts only on these rows), each Stripe
// event once (unique by its id and endpoint), and on the organization its Stripe customer and a plan change that waits for
// the billing period's end. Row-level security: both tables are their organization's (a payment event matched
// to none keeps a null organization, which no tenant sees; the webhooks, public routes, bypass it).
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

export class Migration20261124090000Payments extends Migration {
  override name = 'Migration20261124090000Payments';

  override up(): void {
    this.addSql(`create table "checkout" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "stripe_session_id" varchar(255) not null, "kind" varchar(255) not null, "amount_cents" int null, "plan" varchar(255) null, "status" varchar(255) not null, "url" text not null, "completed_at" timestamptz(3) null, primary key ("id"), constraint "checkout_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    this.addSql(`alter table "checkout" add constraint "checkout_stripe_session_id_unique" unique ("stripe_session_id");`);
    this.addSql(`create index "checkout_organization_id_created_at_index" on "checkout" ("organization_id", "created_at");`);

    this.addSql(`create table "payment_event" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "stripe_event_id" varchar(255) not null, "webhook" varchar(255) not null, "type" varchar(255) not null, "organization_id" varchar(255) null, "outcome" text not null, primary key ("id"), constraint "payment_event_organization_id_foreign" foreign key ("organization_id") references "organization" ("id"));`);
    // Per endpoint: Stripe sends an event to each endpoint subscribed to it, and each acts on its own types.
    this.addSql(`alter table "payment_event" add constraint "payment_event_stripe_event_id_webhook_unique" unique ("stripe_event_id", "webhook");`);

    this.addSql(`alter table "organization" add column "stripe_customer_id" varchar(255) null, add column "pending_plan" varchar(255) null, add column "pending_plan_at" timestamptz(3) null;`);
    // One organization per Stripe customer: the subscription events find their organization by it.
    this.addSql(`create unique index "organization_stripe_customer_id_unique" on "organization" ("stripe_customer_id") where "stripe_customer_id" is not null;`);
    // What the monthly close reads: the plan changes due by the period's end.
    this.addSql(`create index "organization_pending_plan_at_index" on "organization" ("pending_plan_at") where "pending_plan_at" is not null;`);

    for (const table of ['checkout', 'payment_event']) {
      this.addSql(`alter table "${table}" enable row level security;`);
      this.addSql(`create policy "organization_isolation" on "${table}" to kiln_tenant using (${OWN}) with check (${OWN});`);
    }
  }

  override down(): void {
    this.addSql(`alter table "organization" drop column "stripe_customer_id", drop column "pending_plan", drop column "pending_plan_at";`);
    for (const table of ['payment_event', 'checkout']) this.addSql(`drop table "${table}";`);
  }
}
