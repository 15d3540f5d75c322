import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../shared/ids';
import { WebhookDeliveryStatus } from './webhook.enums';

/** Deliveries as rows: their insert, for the dispatcher's fan-out, pings and redeliveries. */

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
