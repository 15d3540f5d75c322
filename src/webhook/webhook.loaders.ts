import DataLoader from 'dataloader';
import { defineLoader } from '../db/request-loaders';
import { WebhookDeliveryStatus } from './webhook.enums';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookDeliveryAttempt } from './webhook-delivery-attempt.entity';

/**
 * An endpoint's health as the operations dashboard reads it (docs/operations.md): one query per request for every
 * endpoint listed, not one per endpoint.
 */

/** Deliveries not ended (PENDING or SENDING) per endpoint: one grouped COUNT, on the open deliveries' partial index. */
export const webhookBacklog = defineLoader(
  (em) =>
    new DataLoader<string, number>(async (endpointIds) => {
      const rows = await em.getConnection().execute<{ endpoint_id: string; count: string }[]>(
        'select endpoint_id, count(*) as count from webhook_delivery where status in (?, ?) and endpoint_id in (?) group by endpoint_id',
        [WebhookDeliveryStatus.PENDING, WebhookDeliveryStatus.SENDING, [...endpointIds]],
      );
      const counts = new Map(rows.map((row) => [row.endpoint_id, Number(row.count)]));
      return endpointIds.map((id) => counts.get(id) ?? 0);
    }),
);

/**
 * The newest delivery of each endpoint (UUID v7 ids: the newest is the largest), found per endpoint on the
 * (endpoint_id, id) index by a lateral join, so an endpoint's long log is not scanned.
 */
export const lastWebhookDelivery = defineLoader(
  (em) =>
    new DataLoader<string, WebhookDelivery | null>(async (endpointIds) => {
      const rows = await em.getConnection().execute<{ id: string }[]>(
        `select d.id from webhook_endpoint e
           cross join lateral (select id from webhook_delivery where endpoint_id = e.id order by id desc limit 1) d
          where e.id in (?)`,
        [[...endpointIds]],
      );
      const deliveries = rows.length ? await em.find(WebhookDelivery, { id: { $in: rows.map((row) => row.id) } }) : [];
      const byEndpoint = new Map(deliveries.map((delivery) => [delivery.endpoint.id, delivery]));
      return endpointIds.map((id) => byEndpoint.get(id) ?? null);
    }),
);

/** The attempts of each delivery listed, oldest first: one query for every delivery of the request. */
export const webhookDeliveryAttempts = defineLoader(
  (em) =>
    new DataLoader<string, WebhookDeliveryAttempt[]>(async (deliveryIds) => {
      const attempts = await em.find(WebhookDeliveryAttempt, { delivery: { $in: [...deliveryIds] } }, { orderBy: { number: 'asc' } });
      const byDelivery = new Map<string, WebhookDeliveryAttempt[]>();
      for (const attempt of attempts) {
        const list = byDelivery.get(attempt.delivery.id);
        if (list) list.push(attempt);
        else byDelivery.set(attempt.delivery.id, [attempt]);
      }
      return deliveryIds.map((id) => byDelivery.get(id) ?? []);
    }),
);

/** The bytes each delivery listed sends (a lazy column, not read with the log): one query for all of them. */
export const webhookDeliveryBodies = defineLoader(
  (em) =>
    new DataLoader<string, string | null>(async (deliveryIds) => {
      const rows = await em.getConnection().execute<{ id: string; body: string }[]>('select id, body from webhook_delivery where id in (?)', [[...deliveryIds]]);
      const bodies = new Map(rows.map((row) => [row.id, row.body]));
      return deliveryIds.map((id) => bodies.get(id) ?? null);
    }),
);
