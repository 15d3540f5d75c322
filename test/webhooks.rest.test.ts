import { verifySignature } from '../src/webhook/webhook-signature';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { http, type JsonResponse } from './support/http';
import { eventually } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * The /webhooks REST routes (docs/webhooks.md, "REST") as a client uses them: a real receiver on 127.0.0.1 (allowed by
 * WEBHOOK_ALLOW_PRIVATE_TARGETS, as in test/webhooks.test.ts), waited for by its requests, never by a fixed sleep.
 * Every answer is also checked against /openapi.json by the http helper.
 */

/** Fails a wait after `ms` (the receiver's waits have no deadline of their own). */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

let t: TestStack;
let org: OrganizationFixture;
const receiver = new WebhookReceiver();
const UNKNOWN_ID = '01a21af3-0305-7586-b3df-2c5267907cf7';

const api = (method: string, path: string, body?: unknown, token = org.token): Promise<JsonResponse> => http(t.url, method, path, { token, body });

async function createEndpoint(body: Record<string, unknown>): Promise<{ secret: string; endpoint: Record<string, any> }> {
  const created = await api('POST', '/webhooks', body);
  expect(created.status).toBe(201);
  return created.body.payload;
}

async function deliveryWhere(endpointId: string, wanted: (delivery: any) => boolean, what: string): Promise<any> {
  return eventually(async () => (await api('GET', `/webhooks/${endpointId}/deliveries?per_page=100`)).body.payload.deliveries.find(wanted), 20000, what);
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  await receiver.start();
  t = await startTestStack({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on', WEBHOOK_TIMEOUT_SECONDS: '2' });
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
}, 60000);

afterAll(async () => {
  await t?.close();
  await receiver.close();
});

describe('the /webhooks routes', () => {
  it('manage an endpoint from creation to deletion: secret once, paging, update, rotation, ping, deliveries, redelivery', async () => {
    const started = Date.now();
    const { secret, endpoint } = await createEndpoint({ url: receiver.url, event_types: ['POST_STATE_CHANGED'], description: 'orders' });
    expect(secret).toMatch(/^whsec_/);
    expect(endpoint).toMatchObject({ url: receiver.url, description: 'orders', event_types: ['post.state_changed'], enabled: true, disabled_reason: null, failing_since: null });
    expect(endpoint.created_at).toBeGreaterThanOrEqual(started - 1000);

    // The secret is shown once: neither the record nor the list carries it.
    const got = await api('GET', `/webhooks/${endpoint.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ success: true, payload: endpoint });
    expect(JSON.stringify(got.body)).not.toContain(secret);

    // Paging, oldest first: two more endpoints (disabled: they receive nothing).
    const others = [await createEndpoint({ url: `${receiver.url}/b`, event_types: ['LOCATION_CONNECTED'], enabled: false }), await createEndpoint({ url: `${receiver.url}/c`, event_types: ['ACCOUNT_CONNECTED'], enabled: false })];
    const first = await api('GET', '/webhooks?page=1&per_page=2');
    expect(first.status).toBe(200);
    expect(first.body.payload).toMatchObject({ found: 3, page: 1, per_page: 2 });
    expect(first.body.payload.endpoints.map((item: { id: string }) => item.id)).toEqual([endpoint.id, others[0]!.endpoint.id]);
    const second = await api('GET', '/webhooks?page=2&per_page=2');
    expect(second.body.payload.endpoints.map((item: { id: string }) => item.id)).toEqual([others[1]!.endpoint.id]);
    for (const text of [JSON.stringify(first.body), JSON.stringify(second.body)]) {
      for (const shown of [secret, ...others.map((other) => other.secret)]) expect(text).not.toContain(shown);
    }

    // Update: only what is sent changes.
    const updated = await api('PATCH', `/webhooks/${endpoint.id}`, { description: 'orders and shops', event_types: ['POST_STATE_CHANGED', 'LOCATION_CONNECTED'] });
    expect(updated.status).toBe(200);
    expect(updated.body.payload).toMatchObject({ url: receiver.url, description: 'orders and shops', event_types: ['post.state_changed', 'location.connected'], enabled: true });

    // Rotation: a new secret, once; the old one signs along for the grace period.
    const rotated = await api('POST', `/webhooks/${endpoint.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.payload.secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    expect(rotated.body.payload.endpoint.previous_secret_expires_at).toBeGreaterThan(Date.now() + 23 * 60 * 60 * 1000);
    expect(JSON.stringify((await api('GET', `/webhooks/${endpoint.id}`)).body)).not.toContain(newSecret);

    // A ping reaches the receiver, signed by both secrets, and is logged.
    const pinged = await api('POST', `/webhooks/${endpoint.id}/ping`);
    expect(pinged.status).toBe(202);
    expect(pinged.body.payload).toMatchObject({ endpoint_id: endpoint.id, event_type: 'ping', redelivery: false, attempts: 0 });
    const ping = await within(receiver.nth((request) => request.json.id === pinged.body.payload.event_id), 20000, 'the ping');
    expect(ping.json).toMatchObject({ type: 'ping', endpoint_id: endpoint.id });
    expect(ping.headers['listings-event-id']).toBe(pinged.body.payload.event_id);
    const signature = String(ping.headers['listings-signature']);
    expect(verifySignature(signature, ping.body, newSecret, nowSeconds())).toBe(true);
    expect(verifySignature(signature, ping.body, secret, nowSeconds())).toBe(true);
    const logged = await deliveryWhere(endpoint.id, (delivery) => delivery.id === pinged.body.payload.id && delivery.status === 'SUCCEEDED', 'the ping to be logged');
    expect(logged).toMatchObject({ attempts: 1, last_status_code: 200, last_response_excerpt: 'ok', last_error: null });
    expect(logged.delivered_at).toEqual(expect.any(Number));

    // A post's state changes are delivered; one of them is redelivered with the same event id.
    const account = org.accounts[0]!;
    const post = await http(t.url, 'POST', '/post', { token: account.token, body: { location_id: account.locations[0]!.id, params: { summary: 'Hooked over REST' } } });
    expect(post.status).toBe(202);
    const postId = post.body.payload.id as string;
    const delivered = await within(receiver.nth((request) => request.json.record_id === postId), 20000, 'the post’s first event');
    const eventId = delivered.json.id;
    const events = await api('GET', `/events?record_id=${postId}`);
    expect(events.body.payload.events.map((event: { id: string }) => event.id)).toContain(eventId);
    const again = await api('POST', `/webhooks/${endpoint.id}/redeliver`, { event_id: eventId });
    expect(again.status).toBe(202);
    expect(again.body.payload).toMatchObject({ endpoint_id: endpoint.id, event_id: eventId, event_type: 'post.state_changed', redelivery: true });
    const redelivered = await within(receiver.nth((request) => request.json.id === eventId, 2), 20000, 'the redelivery');
    expect(redelivered.body).toBe(delivered.body);
    expect(verifySignature(String(redelivered.headers['listings-signature']), redelivered.body, newSecret, nowSeconds())).toBe(true);

    // The delivery log: newest first, filtered by event and status, paged.
    const ofEvent = await eventually(async () => {
      const page = (await api('GET', `/webhooks/${endpoint.id}/deliveries?event_id=${eventId}&status=SUCCEEDED`)).body.payload;
      return page.found === 2 ? page : undefined;
    }, 20000, 'both deliveries of the event to succeed');
    expect(ofEvent.deliveries.map((delivery: { redelivery: boolean }) => delivery.redelivery)).toEqual([true, false]);
    // The post's second event (LIVE) makes a delivery of its own: paged below only once it is there, so no delivery
    // is added between the two reads compared (its first event, that event's redelivery, and LIVE: 3 requests).
    await within(receiver.nth((request) => request.json.record_id === postId, 3), 20000, 'the post’s LIVE event');
    const all = (await api('GET', `/webhooks/${endpoint.id}/deliveries`)).body.payload;
    expect(all.found).toBeGreaterThanOrEqual(3);
    const one = await api('GET', `/webhooks/${endpoint.id}/deliveries?page=2&per_page=1`);
    expect(one.body.payload).toMatchObject({ found: all.found, page: 2, per_page: 1 });
    expect(one.body.payload.deliveries.map((delivery: { id: string }) => delivery.id)).toEqual([all.deliveries[1].id]);

    // Deletion: the endpoint and its log are gone.
    const deleted = await api('DELETE', `/webhooks/${endpoint.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, payload: { id: endpoint.id, deleted: true } });
    expect((await api('GET', `/webhooks/${endpoint.id}`)).status).toBe(404);
    expect((await api('GET', `/webhooks/${endpoint.id}/deliveries`)).status).toBe(404);
    for (const other of others) expect((await api('DELETE', `/webhooks/${other.endpoint.id}`)).status).toBe(200);
    expect((await api('GET', '/webhooks')).body.payload).toEqual({ found: 0, page: 1, per_page: 20, endpoints: [] });
  }, 90000);

  it('refuse bad input with the documented 400 body, naming the REST field', async () => {
    const refusals: [Record<string, unknown>, string][] = [
      [{ url: 'not a url', event_types: ['POST_STATE_CHANGED'] }, 'url must be an absolute http(s) URL, such as https://example.com/path'],
      [{ url: 'ftp://hooks.example.com/in', event_types: ['POST_STATE_CHANGED'] }, 'url scheme must be http or https, not ftp'],
      [{ url: 'https://user:pass@hooks.example.com/in', event_types: ['POST_STATE_CHANGED'] }, 'url must not carry credentials (user:password@)'],
      [{ url: 'https://hooks.example.com/in', event_types: ['post.nothing'] }, 'event_types[0] must be one of POST_STATE_CHANGED,'],
      [{ url: 'https://hooks.example.com/in', event_types: 'POST_STATE_CHANGED' }, 'event_types must be a list'],
      [{ url: 'https://hooks.example.com/in', event_types: [] }, 'event_types must name at least one event type'],
      [{ event_types: ['POST_STATE_CHANGED'] }, 'url is required'],
      [{ url: 'https://hooks.example.com/in', event_types: ['POST_STATE_CHANGED'], enabled: 'yes' }, 'enabled must be true or false'],
    ];
    for (const [body, message] of refusals) {
      const answer = await api('POST', '/webhooks', body);
      expect([body, answer.status, answer.body.error, answer.body.message?.startsWith(message) ? message : answer.body.message]).toEqual([body, 400, 400, message]);
      expect(Object.keys(answer.body).sort()).toEqual(['error', 'message']);
    }
    const { endpoint } = await createEndpoint({ url: receiver.url, event_types: ['POST_STATE_CHANGED'], enabled: false });
    const badPatch = await api('PATCH', `/webhooks/${endpoint.id}`, { url: 'http://' });
    expect(badPatch.body).toEqual({ error: 400, message: 'url must name a host after http://' });
    const badQueries = [
      [`/webhooks?per_page=101`, 'per_page must be between 1 and 100'],
      [`/webhooks?page=0`, 'page must be at least 1'],
      [`/webhooks/${endpoint.id}/deliveries?status=DONE`, 'status must be one of PENDING, SENDING, SUCCEEDED, FAILED'],
      [`/webhooks/${endpoint.id}/deliveries?event_id=nope`, 'event_id must be an event id'],
    ] as const;
    for (const [path, message] of badQueries) expect([path, (await api('GET', path)).body]).toEqual([path, { error: 400, message }]);
    const noEvent = await api('POST', `/webhooks/${endpoint.id}/redeliver`, {});
    expect(noEvent.body).toEqual({ error: 400, message: 'event_id is required' });
    await api('DELETE', `/webhooks/${endpoint.id}`);
  });

  it('answer 404 for unknown endpoints and events, 403 to account tokens as every organization-only route', async () => {
    const { endpoint } = await createEndpoint({ url: receiver.url, event_types: ['POST_STATE_CHANGED'], enabled: false });
    const notFound = { error: 404, message: 'Webhook endpoint not found' };
    for (const [method, path, body] of [
      ['GET', `/webhooks/${UNKNOWN_ID}`],
      ['GET', '/webhooks/not-an-id'],
      ['PATCH', `/webhooks/${UNKNOWN_ID}`, { enabled: true }],
      ['DELETE', `/webhooks/${UNKNOWN_ID}`],
      ['POST', `/webhooks/${UNKNOWN_ID}/rotate-secret`],
      ['POST', `/webhooks/${UNKNOWN_ID}/ping`],
      ['GET', `/webhooks/${UNKNOWN_ID}/deliveries`],
      ['POST', `/webhooks/${UNKNOWN_ID}/redeliver`, { event_id: UNKNOWN_ID }],
    ] as const) {
      const answer = await api(method, path, body);
      expect([method, path, answer.status, answer.body]).toEqual([method, path, 404, notFound]);
    }
    const noEvent = await api('POST', `/webhooks/${endpoint.id}/redeliver`, { event_id: UNKNOWN_ID });
    expect([noEvent.status, noEvent.body]).toEqual([404, { error: 404, message: 'Event not found' }]);

    const accountToken = org.accounts[0]!.token;
    const organizationOnly = await api('GET', '/organization', undefined, accountToken);
    expect(organizationOnly.status).toBe(403);
    for (const [method, path, body] of [
      ['GET', '/webhooks'],
      ['POST', '/webhooks', { url: receiver.url, event_types: ['POST_STATE_CHANGED'] }],
      ['GET', `/webhooks/${endpoint.id}`],
      ['PATCH', `/webhooks/${endpoint.id}`, { enabled: true }],
      ['POST', `/webhooks/${endpoint.id}/ping`],
      ['GET', `/webhooks/${endpoint.id}/deliveries`],
    ] as const) {
      const answer = await api(method, path, body, accountToken);
      expect([method, path, answer.status, answer.body]).toEqual([method, path, 403, organizationOnly.body]);
    }
    await api('DELETE', `/webhooks/${endpoint.id}`);
  });
});
