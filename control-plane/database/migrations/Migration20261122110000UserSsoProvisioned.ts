// Users created by SSO just-in-time provisioning are marked: they never count as platform administrators.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122110000UserSsoProvisioned extends Migration {
  override name = 'Migration20261122110000UserSsoProvisioned';

  override up(): void {
    this.addSql(`alter table "user" add column "sso_provisioned" boolean not null default false;`);
  }
}
