import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks (docs/webhooks.md): endpoints, deliveries, and the outbox of activity events not yet turned into
 * deliveries. A trigger on `activity_event` fills the outbox with the events an enabled endpoint of the organization
 * wants, in the transaction recording the event (so none is lost, whatever order transactions commit in) and wakes the dispatcher at commit through the event bus's NOTIFY
 * channel (the `webhooks.pending` topic of src/events/topics.ts; PostgreSQL folds a transaction's identical
 * notifications into one).
 */
export class Migration20261127025111_Webhooks extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "webhook_endpoint" ("id" uuid not null, "organization_id" uuid not null, "url" text not null, "description" text null, "event_types" text[] not null, "enabled" boolean not null default true, "disabled_reason" text null, "disabled_at" timestamptz null, "failing_since" timestamptz null, "secret" text not null, "previous_secret" text null, "previous_secret_expires_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "webhook_endpoint_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_endpoint_organization_id_index" on "webhook_endpoint" ("organization_id");`);

    this.addSql(`create table "webhook_delivery" ("id" uuid not null, "endpoint_id" uuid not null, "organization_id" uuid not null, "event_id" uuid not null, "event_type" text not null, "record_key" text not null, "sequence" bigint not null, "body" text not null, "redelivery" boolean not null default false, "status" text check ("status" in ('PENDING', 'SENDING', 'SUCCEEDED', 'FAILED')) not null, "attempts" int not null default 0, "next_attempt_at" timestamptz null, "last_attempt_at" timestamptz null, "last_status_code" int null, "last_latency_ms" int null, "last_response_excerpt" text null, "last_error" text null, "created_at" timestamptz not null, "delivered_at" timestamptz null, constraint "webhook_delivery_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_delivery_organization_id_index" on "webhook_delivery" ("organization_id");`);
    this.addSql(`create index "webhook_delivery_open_index" on "webhook_delivery" ("endpoint_id", "record_key", "sequence") where "status" in ('PENDING', 'SENDING');`);
    this.addSql(`create index "webhook_delivery_endpoint_id_id_index" on "webhook_delivery" ("endpoint_id", "id");`);

    this.addSql(`create table "webhook_outbox" ("event_id" uuid not null, "sequence" bigint not null, constraint "webhook_outbox_pkey" primary key ("event_id"));`);
    this.addSql(`create index "webhook_outbox_sequence_index" on "webhook_outbox" ("sequence");`);

    this.addSql(`alter table "webhook_endpoint" add constraint "webhook_endpoint_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "webhook_delivery" add constraint "webhook_delivery_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoint" ("id") on update cascade on delete cascade;`);

    this.addSql(`create function "webhook_outbox_add"() returns trigger language plpgsql as $$
      begin
        -- Only an event some endpoint wants: an organization without webhooks pays no outbox row and no wake-up.
        if exists (select 1 from "webhook_endpoint" w where w."organization_id" = new."organization_id" and w."enabled" and new."type" = any(w."event_types")) then
          insert into "webhook_outbox" ("event_id", "sequence") values (new."id", new."sequence");
          perform pg_notify('listings_gateway_events', '{"topic":"webhooks.pending","payload":{}}');
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger "activity_event_webhook_outbox" after insert on "activity_event" for each row execute function "webhook_outbox_add"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "activity_event_webhook_outbox" on "activity_event";`);
    this.addSql(`drop function if exists "webhook_outbox_add"();`);
    this.addSql(`alter table "webhook_delivery" drop constraint "webhook_delivery_endpoint_id_foreign";`);

    this.addSql(`drop table if exists "webhook_endpoint" cascade;`);

    this.addSql(`drop table if exists "webhook_delivery" cascade;`);

    this.addSql(`drop table if exists "webhook_outbox" cascade;`);
  }

}
