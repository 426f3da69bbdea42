// The Stripe subscription paying for an organization's plan: a later plan change updates it in place instead
// of starting a second one.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261124104000StripeSubscription extends Migration {
  override name = 'Migration20261124104000StripeSubscription';

  override up(): void {
    this.addSql(`alter table "organization" add column "stripe_subscription_id" varchar(255) null;`);
  }

  override down(): void {
    this.addSql(`alter table "organization" drop column "stripe_subscription_id";`);
  }
}
