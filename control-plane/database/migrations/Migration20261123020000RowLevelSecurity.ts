// Row-level security (core/row-level-security.ts): the role tenant requests run as, its privileges, and a
// policy on every organization table holding that role to the organization the request names. Roles belong
// to the whole server, so several databases (one per test file) share kiln_tenant and may create it at once.
// The connecting user owns the tables and, without FORCE ROW LEVEL SECURITY, keeps seeing every row: that is
// the explicit bypass of platform administration, the service role key and the worker.
import { Migration } from '@mikro-orm/migrations';

/** Organization tables and the condition a row of theirs meets when it belongs to the request's organization. */
const OWNED_BY_ORGANIZATION: Readonly<Record<string, string>> = {
  organization: 'id = current_setting(\'app.organization_id\', true)',
  membership: 'organization_id = current_setting(\'app.organization_id\', true)',
  refresh_token: 'organization_id = current_setting(\'app.organization_id\', true)',
  api_key: 'organization_id = current_setting(\'app.organization_id\', true)',
  audit_log: 'organization_id = current_setting(\'app.organization_id\', true)',
  deployment: 'organization_id = current_setting(\'app.organization_id\', true)',
  deployment_event: 'organization_id = current_setting(\'app.organization_id\', true)',
  webhook_subscription: 'organization_id = current_setting(\'app.organization_id\', true)',
  // Through its subscription.
  webhook_attempt: 'subscription_id in (select id from webhook_subscription where organization_id = current_setting(\'app.organization_id\', true))',
  custom_role: 'organization_id = current_setting(\'app.organization_id\', true)',
  invitation: 'organization_id = current_setting(\'app.organization_id\', true)',
  sso_configuration: 'organization_id = current_setting(\'app.organization_id\', true)',
  sso_login: 'organization_id = current_setting(\'app.organization_id\', true)',
};

export class Migration20261123020000RowLevelSecurity extends Migration {
  override name = 'Migration20261123020000RowLevelSecurity';

  override up(): void {
    this.addSql(`do $$
begin
  if not exists (select from pg_roles where rolname = 'kiln_tenant') then
    begin
      create role kiln_tenant nologin nosuperuser nobypassrls;
    exception
      -- Created meanwhile by the migration of another database on the same server.
      when duplicate_object or unique_violation then null;
      when insufficient_privilege then
        raise exception 'row-level security: database user % may not create the role kiln_tenant', current_user
          using hint = format('Give it CREATEROLE (ALTER ROLE %I CREATEROLE), or have an administrator run: CREATE ROLE kiln_tenant NOLOGIN NOBYPASSRLS; GRANT kiln_tenant TO %I;', current_user, current_user);
    end;
  end if;
  -- The API switches to kiln_tenant with SET ROLE, which a superuser may always do (and before PostgreSQL 16,
  -- any member).
  if not pg_has_role(current_user, 'kiln_tenant', case when current_setting('server_version_num')::int >= 160000 then 'SET' else 'MEMBER' end) then
    begin
      execute format('grant kiln_tenant to %I', current_user);
    exception when insufficient_privilege or invalid_grant_operation then
      raise exception 'row-level security: database user % may not take the role kiln_tenant', current_user
        using hint = format('Have an administrator run: GRANT kiln_tenant TO %I;', current_user);
    end;
  end if;
end $$;`);
    this.addSql(`grant usage on schema public to kiln_tenant;`);
    this.addSql(`grant select, insert, update, delete on all tables in schema public to kiln_tenant;`);
    this.addSql(`grant usage, select on all sequences in schema public to kiln_tenant;`);
    this.addSql(`revoke all on "mikro_orm_migrations" from kiln_tenant;`);
    // Tables of later migrations: the test of row-level security fails for an organization table without a policy.
    this.addSql(`alter default privileges in schema public grant select, insert, update, delete on tables to kiln_tenant;`);
    this.addSql(`alter default privileges in schema public grant usage, select on sequences to kiln_tenant;`);
    for (const [table, condition] of Object.entries(OWNED_BY_ORGANIZATION)) {
      this.addSql(`alter table "${table}" enable row level security;`);
      this.addSql(`create policy "organization_isolation" on "${table}" to kiln_tenant using (${condition}) with check (${condition});`);
    }
  }

  override down(): void {
    for (const table of Object.keys(OWNED_BY_ORGANIZATION)) {
      this.addSql(`drop policy "organization_isolation" on "${table}";`);
      this.addSql(`alter table "${table}" disable row level security;`);
    }
    this.addSql(`alter default privileges in schema public revoke all on tables from kiln_tenant;`);
    this.addSql(`alter default privileges in schema public revoke all on sequences from kiln_tenant;`);
    this.addSql(`revoke all on all tables in schema public from kiln_tenant;`);
    this.addSql(`revoke all on all sequences in schema public from kiln_tenant;`);
    this.addSql(`revoke usage on schema public from kiln_tenant;`);
  }
}
