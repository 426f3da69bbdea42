// GET /v1/admin/reports lists every report newest first in keyset pages: an index in that order keeps a page
// from sorting the whole table.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261125020000ReportsList extends Migration {
  override name = 'Migration20261125020000ReportsList';

  override up(): void {
    this.addSql(`create index "report_created_at_id_index" on "report" ("created_at", "id");`);
  }

  override down(): void {
    this.addSql(`drop index "report_created_at_id_index";`);
  }
}
