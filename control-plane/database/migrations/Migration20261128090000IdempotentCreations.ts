// A creating request's resource, recorded under its Idempotency-Key in the transaction that creates it
// (idempotency/middleware.ts): a process that dies after that commit but before storing its answer leaves
// enough for a retry to answer with the resource instead of creating it twice.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128090000IdempotentCreations extends Migration {
  override name = 'Migration20261128090000IdempotentCreations';

  override up(): void {
    this.addSql(`alter table "idempotency_record" add column "resource_id" varchar(255) null;`);
  }

  override down(): void {
    this.addSql(`alter table "idempotency_record" drop column "resource_id";`);
  }
}
