// When a report's workflow was started: a report asked for while Temporal was unreachable is recorded pending
// without one, and reports/delivery.ts starts it once Temporal answers.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128110100ReportWorkflowStart extends Migration {
  override name = 'Migration20261128110100ReportWorkflowStart';

  override up(): void {
    this.addSql(`alter table "report" add column "workflow_started_at" timestamptz(3) null;`);
    // Existing reports had their workflow started as they were asked for (or were failed when it could not be).
    this.addSql(`update "report" set "workflow_started_at" = "created_at";`);
  }
}
