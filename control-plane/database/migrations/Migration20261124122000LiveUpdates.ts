// Live updates (control-plane/live-updates/): a bounded log of what the organization's sockets are told,
// appended by triggers on the tables the API and the worker already write (deployment status, deployment and
// alert events, user notifications), so neither side changes; each appended row is announced with
// pg_notify('kiln_live') and every API replica's LISTEN connection fans it out. Also the browsers' single-use
// socket tickets and the replicas' heartbeat rows. Row-level security: an event and a ticket are their
// organization's; the replica rows belong to no organization.
import { Migration } from '@mikro-orm/migrations';

const OWN = `organization_id = current_setting('app.organization_id', true)`;

/**
 * The triggers run as the tables' owner (SECURITY DEFINER) with the schema fixed at creation: a row written by
 * a tenant-scoped request, or by one organization's request for another's user (a template's followers), is
 * logged whatever role wrote it.
 */
const definer = `language plpgsql security definer set search_path from current`;

export class Migration20261124122000LiveUpdates extends Migration {
  override name = 'Migration20261124122000LiveUpdates';

  override up(): void {
    this.addSql(`create table "live_event" ("id" bigserial not null, "created_at" timestamptz(3) not null default clock_timestamp(), "organization_id" varchar(255) not null, "user_id" varchar(255) null, "type" varchar(64) not null, "deployment_id" varchar(255) null, "payload" jsonb not null, primary key ("id"), constraint "live_event_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on delete cascade);`);
    // Replays read an organization's events after an id; pruning reads by age.
    this.addSql(`create index "live_event_organization_id_id_index" on "live_event" ("organization_id", "id");`);
    this.addSql(`create index "live_event_created_at_index" on "live_event" ("created_at");`);
    this.addSql(`alter table "live_event" enable row level security;`);
    this.addSql(`create policy "organization_isolation" on "live_event" to kiln_tenant using (${OWN}) with check (${OWN});`);

    this.addSql(`create table "live_ticket" ("id" varchar(255) not null, "created_at" timestamptz(3) not null, "organization_id" varchar(255) not null, "user_id" varchar(255) not null, "principal" jsonb not null, "expires_at" timestamptz(3) not null, "used_at" timestamptz(3) null, primary key ("id"), constraint "live_ticket_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on delete cascade);`);
    this.addSql(`create index "live_ticket_expires_at_index" on "live_ticket" ("expires_at");`);
    this.addSql(`alter table "live_ticket" enable row level security;`);
    this.addSql(`create policy "organization_isolation" on "live_ticket" to kiln_tenant using (${OWN}) with check (${OWN});`);

    this.addSql(`create table "live_replica" ("id" varchar(255) not null, "started_at" timestamptz(3) not null, "seen_at" timestamptz(3) not null, "connections" integer not null default 0, "organizations" jsonb not null default '{}', primary key ("id"));`);

    // The whole event rides in the notification when it fits (NOTIFY payloads stop at 8000 bytes); otherwise
    // its id, and the replicas read the row.
    this.addSql(`create function live_event_announce() returns trigger ${definer} as $$
      declare message text;
      begin
        message := json_build_object('id', new.id::text, 'o', new.organization_id, 'u', new.user_id, 't', new.type, 'd', new.deployment_id, 'p', new.payload, 'c', new.created_at)::text;
        if octet_length(message) > 7900 then message := json_build_object('id', new.id::text)::text; end if;
        perform pg_notify('kiln_live', message);
        return null;
      end $$;`);
    this.addSql(`create trigger live_event_announce after insert on "live_event" for each row execute function live_event_announce();`);

    this.addSql(`create function live_event_from_deployment() returns trigger ${definer} as $$
      begin
        insert into live_event (organization_id, type, deployment_id, payload)
        values (new.organization_id, 'deployment.status', new.id, jsonb_build_object('id', new.id, 'name', new.name, 'status', new.status, 'previousStatus', old.status, 'replicas', new.current_replicas));
        return null;
      end $$;`);
    this.addSql(`create trigger live_event_from_deployment after update of "status" on "deployment" for each row when (old.status is distinct from new.status) execute function live_event_from_deployment();`);

    this.addSql(`create function live_event_from_deployment_event() returns trigger ${definer} as $$
      begin
        insert into live_event (organization_id, type, deployment_id, payload) values (new.organization_id, new.type, new.deployment_id, new.payload);
        return null;
      end $$;`);
    this.addSql(`create trigger live_event_from_deployment_event after insert on "deployment_event" for each row execute function live_event_from_deployment_event();`);

    this.addSql(`create function live_event_from_alert_event() returns trigger ${definer} as $$
      begin
        insert into live_event (organization_id, type, payload) values (new.organization_id, new.type, new.payload);
        return null;
      end $$;`);
    this.addSql(`create trigger live_event_from_alert_event after insert on "alert_event" for each row execute function live_event_from_alert_event();`);

    this.addSql(`create function live_event_from_user_notification() returns trigger ${definer} as $$
      begin
        insert into live_event (organization_id, user_id, type, deployment_id, payload)
        values (new.organization_id, new.user_id, 'notification.created', new.payload->>'deploymentId', jsonb_build_object('id', new.id, 'kind', new.kind, 'data', new.payload));
        return null;
      end $$;`);
    this.addSql(`create trigger live_event_from_user_notification after insert on "user_notification" for each row execute function live_event_from_user_notification();`);
  }

  override down(): void {
    this.addSql(`drop trigger live_event_from_user_notification on "user_notification";`);
    this.addSql(`drop trigger live_event_from_alert_event on "alert_event";`);
    this.addSql(`drop trigger live_event_from_deployment_event on "deployment_event";`);
    this.addSql(`drop trigger live_event_from_deployment on "deployment";`);
    this.addSql(`drop function live_event_from_user_notification, live_event_from_alert_event, live_event_from_deployment_event, live_event_from_deployment;`);
    this.addSql(`drop table "live_event", "live_ticket", "live_replica";`);
    this.addSql(`drop function live_event_announce;`);
  }
}
