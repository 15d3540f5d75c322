import { defineQueue } from '../jobs/queue';

/** Send one SENDING webhook delivery; the receiver's failures are the delivery's to retry (docs/webhooks.md). */
export const deliverQueue = defineQueue({
  name: 'webhook-deliver',
  payload: { deliveryId: 'string' },
  // Deliveries are not work a client follows in the async-work view: they have their own log.
  work: null,
});
