// The table of the worker's default Pulumi state backend (the CLI's PostgreSQL backend, PULUMI_BACKEND_URL unset),
// made here with the CLI's own schema (pkg backend/diy/postgres/schema.sql; the CLI's `create ... if not exists`
// then finds it), so that it is made once rather than by CLI processes racing, and so that kiln_tenant, which
// the default privileges give every new table, keeps no grant on it: stacks hold every organization's objects.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127010000PulumiState extends Migration {
  override name = 'Migration20261127010000PulumiState';

  override up(): void {
    this.addSql(`create table if not exists "pulumi_state" ("key" text primary key, "data" json not null, "updated_at" timestamp with time zone not null default now());`);
    this.addSql(`create index if not exists "pulumi_state_key_prefix_idx" on "pulumi_state" ("key" text_pattern_ops);`);
    this.addSql(`revoke all on "pulumi_state" from kiln_tenant;`);
  }

  // No down: the rows are the stacks' state, which going back to an older Kiln (file backend) must not lose.
}
