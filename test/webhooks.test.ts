import { verifySignature } from '../src/webhook/webhook-signature';
import { TestClock } from './support/clock';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * Webhooks (docs/webhooks.md) end to end: a real receiver on loopback (allowed by WEBHOOK_ALLOW_PRIVATE_TARGETS), the
 * service clock held and moved to bring retries due, never a fixed sleep.
 */

const clock = new TestClock();
let t: TestStack;
let org: OrganizationFixture;
const receiver = new WebhookReceiver();

async function gql<T = any>(document: string, variables: Record<string, unknown> = {}, token = org.token): Promise<T> {
  const answer = await graphql<T>(t.url, document, { token, variables });
  if (answer.body.errors) throw new Error(JSON.stringify(answer.body.errors));
  return answer.body.data!;
}

const ENDPOINT_FIELDS = 'id url enabled disabledReason failingSince eventTypes previousSecretExpiresAt';
const DELIVERY_FIELDS = 'id eventId eventType status attempts nextAttemptAt lastStatusCode lastLatencyMs lastResponseExcerpt lastError redelivery endpointId';

async function createEndpoint(eventTypes = ['POST_STATE_CHANGED'], url = receiver.url): Promise<{ secret: string; endpoint: { id: string } }> {
  const created = await gql('mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { ' + ENDPOINT_FIELDS + ' } } }', {
    input: { url, eventTypes },
  });
  return created.createWebhookEndpoint;
}

async function deliveries(endpointId: string): Promise<any[]> {
  return (await gql('query ($e: ID!) { webhookDeliveries(endpointId: $e, first: 100) { nodes { ' + DELIVERY_FIELDS + ' } } }', { e: endpointId })).webhookDeliveries.nodes;
}

async function ping(endpointId: string): Promise<{ id: string; eventId: string }> {
  return (await gql('mutation ($id: ID!) { pingWebhookEndpoint(id: $id) { ' + DELIVERY_FIELDS + ' } }', { id: endpointId })).pingWebhookEndpoint;
}

async function deliveryState(endpointId: string, deliveryId: string, wanted: (delivery: any) => boolean, what: string): Promise<any> {
  return eventually(async () => (await deliveries(endpointId)).find((delivery) => delivery.id === deliveryId && wanted(delivery)), 20000, what);
}

const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

beforeAll(async () => {
  await receiver.start();
  t = await startTestStack({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on', WEBHOOK_TIMEOUT_SECONDS: '1', POST_RATE_LIMIT_PER_MINUTE: '10000' }, { clock });
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
}, 60000);

afterAll(async () => {
  await t?.close();
  await receiver.close();
});

afterEach(() => {
  clock.release();
  receiver.answer = (_request, response) => response.end('ok');
});

describe('webhooks', () => {
  it('signs a ping with the secret shown once, with its event id, and logs the answer', async () => {
    const { secret, endpoint } = await createEndpoint();
    expect(secret).toMatch(/^whsec_/);
    const shown = await gql('query ($id: ID!) { webhookEndpoint(id: $id) { id url enabled } }', { id: endpoint.id });
    expect(JSON.stringify(shown)).not.toContain(secret);
    const queued = await ping(endpoint.id);
    const request = await eventually(async () => receiver.requests.find((received) => received.json.id === queued.eventId), 20000, 'the ping');
    expect(request.headers['listings-event-id']).toBe(queued.eventId);
    expect(request.headers['content-type']).toBe('application/json');
    expect(verifySignature(String(request.headers['listings-signature']), request.body, secret, nowSeconds())).toBe(true);
    expect(verifySignature(String(request.headers['listings-signature']), `${request.body} `, secret, nowSeconds())).toBe(false);
    expect(verifySignature(String(request.headers['listings-signature']), request.body, 'whsec_other', nowSeconds())).toBe(false);
    const logged = await deliveryState(endpoint.id, queued.id, (delivery) => delivery.status === 'SUCCEEDED', 'the ping to succeed');
    expect(logged).toMatchObject({ attempts: 1, lastStatusCode: 200, lastResponseExcerpt: 'ok', lastError: null, eventType: 'ping' });
    await gql('mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }', { id: endpoint.id });
  });

  it('delivers every state change of posts exactly once, in order per record', async () => {
    const { endpoint } = await createEndpoint();
    const account = org.accounts[0]!;
    const postIds: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const created = await http(t.url, 'POST', '/post', { token: account.token, body: { location_id: account.locations[0]!.id, params: { summary: `Hook ${index}` } } });
      expect(created.status).toBe(202);
      postIds.push(created.body.payload.id as string);
    }
    const rows = await eventually(async () => {
      const events = await t.em().getConnection().execute<{ id: string; record_id: string; sequence: string }[]>(
        `select id, record_id, sequence from activity_event where type = 'post.state_changed' and record_id in (?) order by sequence`,
        [postIds],
      );
      // Each post is created (SENDING) and then published (LIVE).
      return events.length >= postIds.length * 2 ? events : undefined;
    }, 30000, 'the posts to be published');
    const received = await eventually(async () => {
      const got = receiver.ofType('post.state_changed').filter((request) => postIds.includes(request.json.record_id!));
      return got.length >= rows.length ? got : undefined;
    }, 30000, 'every event delivered');
    // Exactly once each: one request per event, no event missing.
    expect(received.map((request) => request.json.id).sort()).toEqual(rows.map((row) => row.id).sort());
    for (const postId of postIds) {
      const sequences = received.filter((request) => request.json.record_id === postId).map((request) => BigInt(request.json.sequence!));
      expect(sequences).toEqual([...sequences].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    // The receiver answers before the worker records the attempt: the last ones may still be SENDING for a moment.
    await eventually(async () => ((await deliveries(endpoint.id)).every((delivery) => delivery.status === 'SUCCEEDED') ? true : undefined), 20000, 'every delivery recorded SUCCEEDED');
    await gql('mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }', { id: endpoint.id });
  }, 60000);

  it('keeps at most 4 requests in flight per endpoint, and a receiver that never answers holds up only its own endpoint', async () => {
    clock.hold(); // the timed-out first attempts wait for a retry that never comes due
    const stuck = new WebhookReceiver();
    await stuck.start();
    let inFlight = 0;
    let mostInFlight = 0;
    stuck.answer = (_request, response) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      response.on('close', () => (inFlight -= 1));
      stuck.hang(response);
    };
    try {
      const slow = (await createEndpoint(['POST_STATE_CHANGED'], stuck.url)).endpoint;
      const healthy = (await createEndpoint()).endpoint;
      const account = org.accounts[0]!;
      const postIds: string[] = [];
      for (let index = 0; index < 8; index += 1) {
        const created = await http(t.url, 'POST', '/post', { token: account.token, body: { location_id: account.locations[0]!.id, params: { summary: `Stuck ${index}` } } });
        expect(created.status).toBe(202);
        postIds.push(created.body.payload.id as string);
      }
      // The healthy endpoint gets both events of every post (created, then LIVE) while the other's requests hang.
      await eventually(async () => {
        const got = receiver.ofType('post.state_changed').filter((request) => postIds.includes(request.json.record_id!));
        return got.length >= postIds.length * 2 ? got : undefined;
      }, 30000, 'every event at the healthy endpoint');
      // The stuck endpoint gets each post's first event once (each times out and waits for its retry, which blocks
      // the record's next event), never more than WEBHOOK_ENDPOINT_CONCURRENCY at a time.
      const firsts = await eventually(async () => {
        const failed = (await deliveries(slow.id)).filter((delivery) => delivery.attempts === 1 && delivery.status === 'PENDING');
        return failed.length >= postIds.length ? failed : undefined;
      }, 30000, 'a timed-out first attempt for every post');
      expect(firsts).toHaveLength(postIds.length);
      expect(stuck.requests).toHaveLength(postIds.length);
      expect(new Set(stuck.requests.map((request) => request.json.record_id))).toEqual(new Set(postIds));
      expect(mostInFlight).toBeGreaterThan(0);
      expect(mostInFlight).toBeLessThanOrEqual(4);
      expect((await deliveries(healthy.id)).filter((delivery) => delivery.status !== 'SUCCEEDED')).toEqual([]);
      for (const endpoint of [slow, healthy]) await gql('mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }', { id: endpoint.id });
    } finally {
      await stuck.close();
    }
  }, 60000);

  it('retries after a 500 and after a time-out, when the clock brings the next attempt, with the same event id', async () => {
    clock.hold();
    const { endpoint } = await createEndpoint();
    let calls = 0;
    receiver.answer = (_request, response) => {
      calls += 1;
      if (calls === 1) response.writeHead(500).end('down for maintenance');
      else if (calls === 2) receiver.hang(response);
      else response.end('fine');
    };
    const queued = await ping(endpoint.id);
    const failed = await deliveryState(endpoint.id, queued.id, (delivery) => delivery.attempts === 1 && delivery.status === 'PENDING', 'the first attempt to fail');
    expect(failed).toMatchObject({ lastStatusCode: 500, lastResponseExcerpt: 'down for maintenance', lastError: 'the receiver answered 500' });
    // 30 s doubling, with at most half taken off: the first retry is 15 to 30 s later.
    const wait = new Date(failed.nextAttemptAt).getTime() - clock.now().getTime();
    expect(wait).toBeGreaterThanOrEqual(15000);
    expect(wait).toBeLessThanOrEqual(30000);
    expect(calls).toBe(1);
    clock.advance(30000);
    const timedOut = await deliveryState(endpoint.id, queued.id, (delivery) => delivery.attempts === 2 && delivery.status === 'PENDING', 'the second attempt to time out');
    expect(timedOut.lastError).toBe('no answer within 1000 ms');
    expect(timedOut.lastStatusCode).toBeNull();
    clock.advance(60000);
    await deliveryState(endpoint.id, queued.id, (delivery) => delivery.status === 'SUCCEEDED' && delivery.attempts === 3, 'the third attempt to succeed');
    const attempts = receiver.requests.filter((request) => request.json.id === queued.eventId);
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((request) => request.headers['listings-event-id']))).toEqual(new Set([queued.eventId]));
    await gql('mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }', { id: endpoint.id });
  }, 60000);

  it('disables an endpoint failing for a day, says why, and redelivers an event once it is enabled again', async () => {
    clock.hold();
    const { endpoint } = await createEndpoint(['POST_STATE_CHANGED']);
    receiver.answer = (_request, response) => response.writeHead(503).end('gone');
    const account = org.accounts[0]!;
    const created = await http(t.url, 'POST', '/post', { token: account.token, body: { location_id: account.locations[0]!.id, params: { summary: 'Failing hook' } } });
    const postId = created.body.payload.id as string;
    const first = await eventually(async () => (await deliveries(endpoint.id)).find((delivery) => delivery.attempts >= 1), 20000, 'a failed attempt');
    expect(first.status).toBe('PENDING');
    // A day of failures: each hour the clock passes a next attempt (an hour at most), and the receiver fails again.
    const isEnabled = async () => (await gql('query ($id: ID!) { webhookEndpoint(id: $id) { enabled } }', { id: endpoint.id })).webhookEndpoint.enabled as boolean;
    for (let hour = 0; hour < 26 && (await isEnabled()); hour += 1) {
      const seen = receiver.requests.length;
      clock.advance(60 * 60 * 1000);
      await eventually(async () => (receiver.requests.length > seen ? true : undefined), 20000, `an attempt in hour ${hour}`);
      await eventually(async () => ((await deliveries(endpoint.id)).some((delivery) => delivery.status === 'SENDING') ? undefined : true), 20000, 'the attempt to be recorded');
    }
    const disabled = (await gql('query ($id: ID!) { webhookEndpoint(id: $id) { ' + ENDPOINT_FIELDS + ' } }', { id: endpoint.id })).webhookEndpoint;
    expect(disabled.enabled).toBe(false);
    expect(disabled.disabledReason).toContain('Deliveries failed for 24 hours');
    expect(disabled.disabledReason).toContain('503');
    // Nothing is sent to a disabled endpoint.
    const before = receiver.requests.length;
    receiver.answer = (_request, response) => response.end('back');
    // The organization fixes its receiver, enables the endpoint and asks for the post's first event again.
    const [event] = await t.em().getConnection().execute<{ id: string }[]>(`select id from activity_event where record_id = ? order by sequence limit 1`, [postId]);
    await gql('mutation ($id: ID!) { updateWebhookEndpoint(id: $id, input: { enabled: true }) { enabled disabledReason } }', { id: endpoint.id });
    const again = (await gql('mutation ($e: ID!, $ev: ID!) { redeliverWebhookEvent(endpointId: $e, eventId: $ev) { ' + DELIVERY_FIELDS + ' } }', { e: endpoint.id, ev: event!.id })).redeliverWebhookEvent;
    expect(again).toMatchObject({ eventId: event!.id, redelivery: true });
    await deliveryState(endpoint.id, again.id, (delivery) => delivery.status === 'SUCCEEDED', 'the redelivery');
    expect(receiver.requests.slice(before).some((request) => request.json.id === event!.id)).toBe(true);
    await gql('mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }', { id: endpoint.id });
  }, 120000);

  it('rotates the secret: both sign during the grace period, then only the new one', async () => {
    clock.hold();
    const { secret: old, endpoint } = await createEndpoint();
    const rotated = (await gql('mutation ($id: ID!) { rotateWebhookSecret(id: $id) { secret endpoint { previousSecretExpiresAt } } }', { id: endpoint.id })).rotateWebhookSecret;
    expect(rotated.secret).not.toBe(old);
    const during = await ping(endpoint.id);
    const signed = await eventually(async () => receiver.requests.find((request) => request.json.id === during.eventId), 20000, 'a ping during the grace period');
    const header = String(signed.headers['listings-signature']);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verifySignature(header, signed.body, rotated.secret, nowSeconds())).toBe(true);
    expect(verifySignature(header, signed.body, old, nowSeconds())).toBe(true);
    clock.advance(25 * 60 * 60 * 1000);
    const after = await ping(endpoint.id);
    const late = await eventually(async () => receiver.requests.find((request) => request.json.id === after.eventId), 20000, 'a ping after the grace period');
    const lateHeader = String(late.headers['listings-signature']);
    expect(verifySignature(lateHeader, late.body, rotated.secret, nowSeconds())).toBe(true);
    expect(verifySignature(lateHeader, late.body, old, nowSeconds())).toBe(false);
    await gql('mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }', { id: endpoint.id });
  }, 60000);

  it('is for organization tokens only, and refuses bad input with 400s', async () => {
    const refused = await graphql(t.url, 'query { webhookEndpoints(first: 5) { totalCount } }', { token: org.accounts[0]!.token });
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('ORGANIZATION_TOKEN_REQUIRED');
    for (const url of ['not a url', 'ftp://example.com/x', 'https://user:pass@example.com/x']) {
      const answer = await graphql(t.url, 'mutation ($u: String!) { createWebhookEndpoint(input: { url: $u, eventTypes: [POST_STATE_CHANGED] }) { secret } }', { token: org.token, variables: { u: url } });
      expect(answer.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    const none = await graphql(t.url, 'mutation ($u: String!) { createWebhookEndpoint(input: { url: $u, eventTypes: [] }) { secret } }', { token: org.token, variables: { u: 'https://example.com' } });
    expect(none.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('webhooks outside development', () => {
  it('refuse URLs of loopback, private, link-local and metadata addresses, and plain http', async () => {
    const strict = await startTestStack({});
    try {
      const own = await createOrganizationFixture(strict.em(), { accounts: 0 });
      for (const url of ['http://example.com/hook', 'https://127.0.0.1/hook', 'https://10.1.2.3/hook', 'https://169.254.169.254/latest', 'https://[::1]/hook', 'https://[fd00::1]/hook', 'https://localhost/hook', 'https://192.168.1.1/hook', 'https://100.64.0.1/hook', 'https://[::ffff:127.0.0.1]/hook']) {
        const answer = await graphql(strict.url, 'mutation ($u: String!) { createWebhookEndpoint(input: { url: $u, eventTypes: [POST_STATE_CHANGED] }) { secret } }', { token: own.token, variables: { u: url } });
        expect([url, answer.body.errors?.[0]?.extensions?.code]).toEqual([url, 'BAD_USER_INPUT']);
      }
      const allowed = await graphql(strict.url, 'mutation { createWebhookEndpoint(input: { url: "https://hooks.example.com/in", eventTypes: [POST_STATE_CHANGED] }) { endpoint { url } } }', { token: own.token });
      expect(allowed.body.errors).toBeUndefined();
    } finally {
      await strict.close();
    }
  }, 60000);
});
