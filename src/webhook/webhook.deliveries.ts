import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../shared/ids';
import { WebhookDeliveryStatus } from './webhook.enums';

/**
 * Deliveries as rows: the body of an event (one definition, for the dispatcher and redeliveries) and their insert.
 */

/** An activity event as its row reads (src/activity/activity-event.entity.ts). */
export interface EventRow {
  id: string;
  type: string;
  occurred_at: Date | string;
  organization_id: string;
  account_id: string | null;
  record_type: string;
  record_id: string;
  sequence: string;
  record: unknown;
}

/** The JSON body of an event's delivery (docs/webhooks.md, Payloads): the activity log's event, snake_case. */
export function eventBody(event: EventRow): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: new Date(event.occurred_at).toISOString(),
    organization_id: event.organization_id,
    account_id: event.account_id,
    record_type: event.record_type,
    record_id: event.record_id,
    sequence: String(event.sequence),
    record: event.record,
  });
}

export interface NewDelivery {
  endpointId: string;
  organizationId: string;
  eventId: string;
  eventType: string;
  /** Deliveries of one key go one at a time, in sequence order. */
  recordKey: string;
  sequence: string;
  body: string;
  redelivery: boolean;
}

/** Inserts PENDING deliveries due at `now`, in the transaction of `em`; answers their ids in order. */
export async function insertDeliveries(em: EntityManager, deliveries: readonly NewDelivery[], now: Date): Promise<string[]> {
  if (deliveries.length === 0) return [];
  const ids = deliveries.map(() => newId());
  const values: unknown[] = [];
  for (const [index, delivery] of deliveries.entries()) {
    values.push(ids[index], delivery.endpointId, delivery.organizationId, delivery.eventId, delivery.eventType, delivery.recordKey, delivery.sequence, delivery.body, delivery.redelivery, WebhookDeliveryStatus.PENDING, now, now);
  }
  await em.getConnection().execute(
    `insert into webhook_delivery (id, endpoint_id, organization_id, event_id, event_type, record_key, sequence, body, redelivery, status, next_attempt_at, created_at)
     values ${deliveries.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
    values,
    'run',
    em.getTransactionContext(),
  );
  return ids;
}
