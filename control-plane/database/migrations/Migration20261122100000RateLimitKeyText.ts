// Rate-limit keys name what they count, e.g. `signin_failures:<email>`: an e-mail address of up to 254
// characters plus its prefix does not fit varchar(255). (No rewrite: text and varchar share a layout.)
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122100000RateLimitKeyText extends Migration {
  override name = 'Migration20261122100000RateLimitKeyText';

  override up(): void {
    this.addSql(`alter table "rate_limit" alter column "key" type text;`);
  }
}
