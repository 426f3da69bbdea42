// Auto-apply of optimization recommendations (workflows/optimization/): when it last changed each deployment,
// so it changes one at most once per hour.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261124070000OptimizationAutoApply extends Migration {
  override name = 'Migration20261124070000OptimizationAutoApply';

  override up(): void {
    this.addSql(`alter table "optimization_policy" add column "auto_applied_at" timestamptz(3) null;`);
  }

  override down(): void {
    this.addSql(`alter table "optimization_policy" drop column "auto_applied_at";`);
  }
}
