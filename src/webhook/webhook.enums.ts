import { registerEnumType } from 'type-graphql';

/** Where a delivery is (docs/webhooks.md): PENDING waits for its time and its turn, SENDING has a job on it. */
export enum WebhookDeliveryStatus {
  PENDING = 'PENDING',
  SENDING = 'SENDING',
  /** The receiver answered 2xx. */
  SUCCEEDED = 'SUCCEEDED',
  /** Retried for a day without a 2xx: given up (redeliver it when the receiver is back). */
  FAILED = 'FAILED',
}

registerEnumType(WebhookDeliveryStatus, { name: 'WebhookDeliveryStatus' });

/** The type of the test event `pingWebhookEndpoint` sends; every other type is an activity event's (EventType). */
export const PING_EVENT_TYPE = 'ping';
