import { Migration } from '@mikro-orm/migrations';

/**
 * Streams of activity events (`eventStream`, docs/webhooks.md, "Developing locally"): while a stream of an
 * organization listens, it keeps a row here (refreshed, expiring), and a trigger on `activity_event` announces each
 * event of that organization on the event bus's NOTIFY channel (the `activity.recorded` topic of src/events/topics.ts)
 * at commit. Every write path records events through this table's insert, so none is missed; an organization nobody
 * listens to pays one primary-key lookup per event and no notification.
 */
export class Migration20261130000100_EventStreams extends Migration {
  override up(): void {
    this.addSql(`create table "activity_listener" ("organization_id" uuid not null, "listening_until" timestamptz not null, constraint "activity_listener_pkey" primary key ("organization_id"));`);
    this.addSql(`create function "activity_event_announce"() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from "activity_listener" l where l."organization_id" = new."organization_id" and l."listening_until" > now()) then
          perform pg_notify('listings_gateway_events', json_build_object('topic', 'activity.recorded', 'payload',
            json_build_object('id', new."id", 'organizationId', new."organization_id", 'accountId', new."account_id", 'type', new."type"))::text);
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger "activity_event_announce" after insert on "activity_event" for each row execute function "activity_event_announce"();`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists "activity_event_announce" on "activity_event";`);
    this.addSql(`drop function if exists "activity_event_announce"();`);
    this.addSql(`drop table if exists "activity_listener";`);
  }
}
