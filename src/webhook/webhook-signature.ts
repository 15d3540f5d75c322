import { createHmac, timingSafeEqual } from 'node:crypto';

/** A delivery's signature, as the service writes it and as a client checks it: docs/webhooks.md, "The signature". */
export const SIGNATURE_HEADER = 'Listings-Signature';
export const EVENT_ID_HEADER = 'Listings-Event-Id';

function hmacHex(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${hmacHex(secret, timestamp, body)}`)].join(',');
}

/**
 * True when `header` signs `body` with `secret` and its time is within `toleranceSeconds` of `nowSeconds` (a replayed
 * old request fails). The comparison is constant-time. This is the verification docs/webhooks.md shows clients.
 */
export function verifySignature(header: string, body: string, secret: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = header.split(',').map((part) => part.trim().split('='));
  const timestamp = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, timestamp, body), 'hex');
  return parts
    .filter(([key, value]) => key === 'v1' && value !== undefined && /^[0-9a-f]{64}$/.test(value))
    .some(([, value]) => timingSafeEqual(Buffer.from(value!, 'hex'), expected));
}

const USER_AGENT = 'ListingsGateway-Webhooks/1';

/** What a delivery request says of itself besides its body. */
export interface DeliveryRequestOf {
  eventId: string;
  eventType: string;
  deliveryId: string;
}

/**
 * The headers of one request carrying `body` (docs/webhooks.md, "Bodies"), signed at `sentAt` with each of `secrets`:
 * the one writer of them, for the service's deliveries and for what `webhooks listen` forwards (src/cli/listen.ts).
 */
export function deliveryHeaders(delivery: DeliveryRequestOf, body: string, secrets: readonly string[], sentAt: Date): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    [EVENT_ID_HEADER]: delivery.eventId,
    'Listings-Event-Type': delivery.eventType,
    'Listings-Delivery-Id': delivery.deliveryId,
    [SIGNATURE_HEADER]: signatureHeader(secrets, Math.floor(sentAt.getTime() / 1000), body),
  };
}
