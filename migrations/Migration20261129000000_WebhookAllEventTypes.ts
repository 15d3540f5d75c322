import { Migration } from '@mikro-orm/migrations';

/**
 * An endpoint may want every event type, present and future: `*` among its `event_types` (docs/webhooks.md). The
 * outbox trigger keeps an event when an enabled endpoint of its organization names its type or `*`.
 */
export class Migration20261129000000_WebhookAllEventTypes extends Migration {
  override up(): void {
    this.addSql(outboxTrigger(`w."event_types" && array[new."type", '*']`));
  }

  override down(): void {
    this.addSql(outboxTrigger(`new."type" = any(w."event_types")`));
  }
}

/** The trigger function of migrations/Migration20261127025111_Webhooks.ts, with `wants` saying which endpoints want the event. */
function outboxTrigger(wants: string): string {
  return `create or replace function "webhook_outbox_add"() returns trigger language plpgsql as $$
      begin
        -- Only an event some endpoint wants: an organization without webhooks pays no outbox row and no wake-up.
        if exists (select 1 from "webhook_endpoint" w where w."organization_id" = new."organization_id" and w."enabled" and ${wants}) then
          insert into "webhook_outbox" ("event_id", "sequence") values (new."id", new."sequence");
          perform pg_notify('listings_gateway_events', '{"topic":"webhooks.pending","payload":{}}');
        end if;
        return null;
      end $$;`;
}
