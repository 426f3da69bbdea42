// Indexes for the audit filters that pick few rows out of many: by user, by API key and by resource id,
// each walked in creation order from (organization_id, ...). Action and resource type alone select large
// shares of a trail and ride on the existing (organization_id, created_at) index. Kept to three: each
// one is a write on every audited request.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122040000Audit extends Migration {
  override name = 'Migration20261122040000Audit';

  override up(): void {
    this.addSql(`create index "audit_log_organization_id_user_id_created_at_index" on "audit_log" ("organization_id", "user_id", "created_at");`);
    this.addSql(`create index "audit_log_organization_id_api_key_id_created_at_index" on "audit_log" ("organization_id", "api_key_id", "created_at") where "api_key_id" is not null;`);
    this.addSql(`create index "audit_log_organization_id_resource_id_created_at_index" on "audit_log" ("organization_id", "resource_id", "created_at") where "resource_id" is not null;`);
  }
}
