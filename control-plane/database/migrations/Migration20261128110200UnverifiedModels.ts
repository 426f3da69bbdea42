// Whether an organization's new deployments may use a model whose check could not run (the Hugging Face Hub
// unreachable): allowed, reported unverified, unless the organization refuses them.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128110200UnverifiedModels extends Migration {
  override name = 'Migration20261128110200UnverifiedModels';

  override up(): void {
    this.addSql(`alter table "organization" add column "unverified_models" varchar(255) not null default 'allow';`);
  }
}
