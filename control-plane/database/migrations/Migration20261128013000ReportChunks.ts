// A generated report's CSV kept in PostgreSQL (reports/report.entity.ts ReportChunkSchema) rather than under
// the worker's data folder, which an API on another host cannot read. The rows hold every organization's
// data, read only by platform administrators (who bypass row-level security): kiln_tenant, which the default
// privileges give every new table, keeps no grant on it.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128013000ReportChunks extends Migration {
  override name = 'Migration20261128013000ReportChunks';

  override up(): void {
    this.addSql(`create table "report_chunk" ("report_id" varchar(255) not null, "sequence" int not null, "data" bytea not null, primary key ("report_id", "sequence"), constraint "report_chunk_report_id_foreign" foreign key ("report_id") references "report" ("id") on delete cascade);`);
    this.addSql(`revoke all on "report_chunk" from kiln_tenant;`);
    // Reports written before as files: not moved (they are on whichever host's worker wrote them), so they say
    // why they cannot be downloaded rather than serving an empty CSV.
    this.addSql(`update "report" set "status" = 'failed', "error" = 'written to the worker''s data folder by an earlier Kiln: generate it again' where "status" = 'ready';`);
  }

  override down(): void {
    this.addSql(`drop table "report_chunk";`);
  }
}
