import { formOf, submit, visit } from './support/browser';
import { connect, importEnded, runConsent } from './support/consent';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http, type JsonResponse } from './support/http';
import { minimalLocationBody } from './support/locations';
import { eventually, pollPost, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { WebhookReceiver, type ReceivedWebhook } from './support/webhook-receiver';
// After the stack's imports (reflect-metadata first): the composition the running stack is built from.
import { composition } from '../src/modules';

/**
 * One representation of an event (docs/webhooks.md, "Bodies"): for every event type the modules declare, the event is
 * made to happen through the public surface and the provider sandboxes, and its webhook body is the GET /events item
 * of the same event, to the byte; the latest record of each kind is what its own REST route answers. And one spelling
 * of an event type: what an answer gives, a request takes back, `*` included. Waits are for what arrives, never a
 * fixed time.
 */

/** Each step waits on jobs and providers, some through retries: generous for a loaded machine. */
const SLOW = 300_000;
const WAIT_MS = 120_000;

let t: TestStack;
let org: OrganizationFixture;
/** Receives the endpoint of every type; `postsReceiver` the endpoint of posts alone. */
const receiver = new WebhookReceiver();
const postsReceiver = new WebhookReceiver();

const api = (method: string, path: string, body?: unknown, token = org.token): Promise<JsonResponse> => http(t.url, method, path, { token, body });

async function gql<T = any>(document: string, variables: Record<string, unknown> = {}): Promise<T> {
  const answer = await graphql<T>(t.url, document, { token: org.token, variables });
  if (answer.body.errors) throw new Error(JSON.stringify(answer.body.errors));
  return answer.body.data!;
}

/** A webhook request's body as JSON, with the fields the test reads. */
interface Body {
  id: string;
  type: string;
  record_id: string | null;
  record_type: string | null;
  sequence: string | null;
  record: Record<string, any> | null;
}
const bodyOf = (request: ReceivedWebhook) => JSON.parse(request.body) as Body;

/** Fields a record computes from other rows when read, not as of the change (docs/activity-log.md): left out of comparisons. */
const AS_OF_READ: Readonly<Record<string, readonly string[]>> = { account: ['number_of_locations'] };
function withoutReadFields(event: Body): Body {
  const fields = event.record_type ? AS_OF_READ[event.record_type] : undefined;
  if (!fields || !event.record) return event;
  return { ...event, record: Object.fromEntries(Object.entries(event.record).filter(([key]) => !fields.includes(key))) };
}

/** The events of one record as GET /events lists them, newest first. */
async function listedEvents(recordId: string): Promise<Body[]> {
  const answer = await api('GET', `/events?record_id=${recordId}&per_page=100`);
  expect(answer.status).toBe(200);
  return answer.body.payload.events as Body[];
}

/** The bodies of one type received for one record, oldest first (in sequence order), once `done` holds for them. */
async function received(type: string, recordId: string, done: (bodies: Body[]) => boolean = (bodies) => bodies.length > 0): Promise<Body[]> {
  return eventually(async () => {
    const bodies = receiver.requests
      .map(bodyOf)
      .filter((body) => body.type === type && body.record_id === recordId)
      .sort((a, b) => (BigInt(a.sequence!) < BigInt(b.sequence!) ? -1 : 1));
    return done(bodies) ? bodies : undefined;
  }, WAIT_MS, `${type} webhooks of ${recordId}`);
}

const last = <T>(items: readonly T[]): T => items[items.length - 1]!;

beforeAll(async () => {
  await receiver.start();
  await postsReceiver.start();
  t = await startTestStack({
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
    JOB_RETRY_DELAY_SECONDS: '1',
    JOB_RETRY_LIMIT: '2',
    LOCATION_READ_RATE_LIMIT_PER_MINUTE: '100000',
  });
  // Accounts the alpha provider knows (locations created here are created there), with connected locations to post
  // to and update, and the organization's beta and citations access.
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 2, connected: true, alphaAccounts: true, betaApi: true, citationsApi: true });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await receiver.close();
  await postsReceiver.close();
});

/**
 * How each event type is made to happen, through HTTP and the sandboxes: its records once their events of that type
 * are all made, and for each, what its own REST route answers for the record now (none where REST has no record of
 * that kind: reviews), which its latest event's record must be.
 */
interface Produced {
  recordId: string;
  /** Until every event of the type this record will have was received; default: one. */
  done?: (bodies: Body[]) => boolean;
  /** The record as its own REST route answers it now. */
  restRecord?: () => Promise<Record<string, unknown>>;
}

/** The record of one location as GET /location lists it. */
async function restLocation(accountId: string, id: string): Promise<Record<string, unknown>> {
  const answer = await api('GET', `/location?account_id=${accountId}&per_page=250`);
  expect(answer.status).toBe(200);
  return answer.body.data.find((location: { id: string }) => location.id === id);
}

/**
 * Alice's account connected by a consent and imported, one of its reviews answered and decided, a reconnect and its
 * re-import, then the disconnect: every account type and the review type. Answers the account as GET
 * /organization/accounts listed it after the re-import, with its import fields as GraphQL read them then (the record
 * the account's events carry: docs/activity-log.md).
 */
let alice: Promise<{ accountId: string; importedAccount: Record<string, unknown>; reviewId: string }> | undefined;
function aliceFlow() {
  alice ??= (async () => {
    const consent = await runConsent(t.url, org.token, { state: 'webhook-bodies' });
    const connected = await connect(t.url, org.token, consent.landed, '1001');
    const accountId = new URL(connected.body.url).searchParams.get('alpha_profile_id')!;
    expect((await importEnded(t.url, org.token, accountId)).syncStatus).toBe('SUCCEEDED');
    const locations = await api('GET', `/location?account_id=${accountId}&store_code=alice-1`);
    const reviews = await gql(`query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l) { nodes { id name reviewReplyState } } }`, { a: accountId, l: locations.body.data[0].id });
    const review = (reviews.reviews.nodes as { id: string; name: string; reviewReplyState: string | null }[]).find((node) => !node.reviewReplyState)!;
    expect((await api('POST', `/review/answer?account_id=${accountId}`, { review_id: review.name, answer: 'Thank you, webhooks!' })).status).toBe(200);
    await received('review.reply_state_changed', review.id, (bodies) => bodies.length === 2);
    const flow = new URLSearchParams({ external_api: 'true', alphaId: 'alpha-user-alice', id: accountId, state: 're' });
    expect((await api('POST', `/reconnect/account?${flow}`)).status).toBe(200);
    await received('account.import_ended', accountId, (bodies) => bodies.length === 2);
    const listed = (await api('GET', '/organization/accounts')).body.payload as { id: string }[];
    const { account } = await gql(`query ($id: ID) { account(id: $id) { syncStatus syncProgress { locations reviews } syncError } }`, { id: accountId });
    const importedAccount = { ...listed.find((item) => item.id === accountId), sync_status: account.syncStatus, sync_progress: account.syncProgress, sync_error: account.syncError };
    const gone = await api('DELETE', `/disconnect/account?${new URLSearchParams({ external_api: 'true', alphaId: accountId, state: 'bye' })}`);
    expect(new URL(gone.body.url).searchParams.get('status')).toBe('success_disconnect');
    return { accountId, importedAccount, reviewId: review.id };
  })();
  return alice;
}

/** A location created here and connected at the provider (coordinates and category: a competitor scan can run on it). */
let scanLocation: Promise<string> | undefined;
function connectedLocation(): Promise<string> {
  scanLocation ??= (async () => {
    const accountId = org.accounts[0]!.account.id;
    const created = await api('POST', `/location?account_id=${accountId}`, minimalLocationBody({ name: 'Hooked Coffee', category_id: 'gcid:coffee_shop', latitude: 48.85, longitude: 2.35 }));
    expect(created.status).toBe(200);
    const id = created.body.payload.location_id as string;
    await received('location.connected', id);
    return id;
  })();
  return scanLocation;
}

const producers: Record<string, () => Promise<Produced>> = {
  'post.state_changed': async () => {
    const account = org.accounts[0]!;
    const created = await api('POST', `/post?account_id=${account.account.id}`, { location_id: account.locations[0]!.id, params: { summary: 'Hooked post' } });
    expect(created.status).toBe(202);
    const id = created.body.payload.id as string;
    await pollPost(t.url, org.token, account.account.id, id);
    return {
      recordId: id,
      done: (bodies) => bodies.length === 2,
      restRecord: async () => (await api('GET', `/post/${id}?account_id=${account.account.id}`)).body.payload,
    };
  },
  'location_update_job.status_changed': async () => {
    const account = org.accounts[0]!;
    const updated = await api('PATCH', `/location/update?account_id=${account.account.id}&location_id=${account.locations[1]!.id}`, { description: 'Now with webhooks' });
    expect(updated.status).toBe(200);
    const id = updated.body.payload.id as string;
    return {
      recordId: id,
      done: (bodies) => ['SUCCEEDED', 'FAILED'].includes(last(bodies)?.record?.status),
      restRecord: async () => (await api('GET', `/location/updates?account_id=${account.account.id}&id=${id}`)).body.payload.updates[0],
    };
  },
  'location.connected': async () => {
    const id = await connectedLocation();
    return { recordId: id, restRecord: () => restLocation(org.accounts[0]!.account.id, id) };
  },
  'location.refused': async () => {
    const account = org.accounts[1]!.account;
    // The provider refuses this account's next location for good (a 400 is final).
    await sandboxOf(t.url).fail({ count: 1, status: 400, method: 'POST', pathContains: `/accounts/${account.alphaAccountId}/locations` });
    const created = await api('POST', `/location?account_id=${account.id}`, minimalLocationBody({ name: 'Refused Shop' }));
    expect(created.status).toBe(200);
    const id = created.body.payload.location_id as string;
    return { recordId: id, restRecord: () => restLocation(account.id, id) };
  },
  'location.citations_disabled': async () => {
    const account = org.accounts[1]!;
    const location = account.locations[0]!;
    expect((await api('POST', `/citations/disable?account_id=${account.account.id}`, { location_id: location.id })).status).toBe(200);
    return { recordId: location.id, restRecord: () => restLocation(account.account.id, location.id) };
  },
  'account.connected': async () => ({ recordId: (await aliceFlow()).accountId }),
  'account.import_progressed': async () => ({ recordId: (await aliceFlow()).accountId, done: (bodies) => bodies.length === 6 }),
  'account.import_ended': async () => {
    const { accountId, importedAccount } = await aliceFlow();
    return { recordId: accountId, done: (bodies) => bodies.length === 2, restRecord: () => Promise.resolve(importedAccount) };
  },
  'account.reconnected': async () => ({ recordId: (await aliceFlow()).accountId }),
  'account.disconnected': async () => ({ recordId: (await aliceFlow()).accountId }),
  // Reviews have no REST record: the body is held to GET /events only.
  'review.reply_state_changed': async () => ({ recordId: (await aliceFlow()).reviewId, done: (bodies) => bodies.length === 2 }),
  'competitor_scan.status_changed': async () => {
    const accountId = org.accounts[0]!.account.id;
    const started = await gql(`mutation ($a: ID, $l: ID!) { runCompetitorScan(accountId: $a, locationId: $l, text: "coffee shop", radiusKm: 2, rings: 0) { id } }`, {
      a: accountId,
      l: await connectedLocation(),
    });
    const id = started.runCompetitorScan.id as string;
    return {
      recordId: id,
      done: (bodies) => last(bodies)?.record?.status === 'completed',
      restRecord: async () => (await api('GET', `/competitor-scan?account_id=${accountId}&scanId=${id}`)).body.payload,
    };
  },
  'beta_brand.sync_status_changed': async () => {
    // The organization's beta consent, as a browser goes through it: it links company-1001.
    const generated = await api('POST', '/oauth/beta/generate-url', { redirect_url: 'https://app.example/beta-return', state: 'hooks' });
    const page = await visit(generated.body.url);
    const toCallback = await submit(formOf(page.body, generated.body.url), { button: ['decision', 'approve'] });
    await visit(toCallback.location!);
    const created = await gql(`mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId } }`, {
      input: { betaCompanyId: 'company-1001', brandName: 'Hooked Coffee', countryCode: 'us', primaryCategory: 'coffee_shop', ownershipType: 'BRAND_OWNER' },
    });
    const { segmentId } = created.createBetaBrand;
    // The brand's own id, which REST does not show, is its events' record id.
    const first = await eventually(async () => receiver.requests.map(bodyOf).find((body) => body.type === 'beta_brand.sync_status_changed' && body.record?.segment_id === segmentId), WAIT_MS, 'the brand’s first webhook');
    return {
      recordId: first.record_id!,
      done: (bodies) => last(bodies)?.record?.beta_sync_status === 'SYNCED',
      restRecord: async () => (await api('GET', `/beta/brands/${segmentId}`)).body.payload,
    };
  },
};

describe('webhook bodies', () => {
  it('are, for every event type the modules declare, the GET /events item of the event; the latest record is its route’s', async () => {
    const declared = composition.modules.flatMap((module) => module.eventTypes ?? []).map((type) => type.name);
    // A type without a way to make it happen here fails this test until it has one.
    expect(Object.keys(producers).sort()).toEqual([...declared].sort());

    // One endpoint for every type, present and future; one for posts alone, in the dotted spelling answers give.
    const all = await api('POST', '/webhooks', { url: receiver.url, event_types: ['*'] });
    expect(all.status).toBe(201);
    expect(all.body.payload.endpoint.event_types).toEqual(['*']);
    const postsOnly = await api('POST', '/webhooks', { url: postsReceiver.url, event_types: ['post.state_changed'] });
    expect(postsOnly.body.payload.endpoint.event_types).toEqual(['post.state_changed']);

    const produced = await Promise.all(declared.map(async (type) => [type, await producers[type]!()] as const));

    for (const [type, { recordId, done, restRecord }] of produced) {
      const bodies = await received(type, recordId, done);
      const listed = await listedEvents(recordId);
      for (const body of bodies) {
        const item = listed.find((event) => event.id === body.id);
        // The same keys, names, units and nulls: the item itself.
        expect([type, withoutReadFields(body)]).toEqual([type, withoutReadFields(item!)]);
        if (!AS_OF_READ[body.record_type!]) {
          const request = receiver.requests.find((candidate) => bodyOf(candidate).id === body.id)!;
          expect([type, request.body]).toEqual([type, JSON.stringify(item)]);
          expect(request.headers['listings-event-type']).toBe(type);
        }
      }
      if (restRecord) expect([type, withoutReadFields(last(bodies)).record]).toEqual([type, withoutReadFields({ ...last(bodies), record: await restRecord() }).record]);
    }

    // The posts-only endpoint got posts' events alone: the same bodies, logged in the same spelling.
    const postBodies = receiver.requests.filter((request) => request.json.type === 'post.state_changed').map((request) => request.body);
    await eventually(async () => (postsReceiver.requests.length >= postBodies.length ? true : undefined), WAIT_MS, 'the posts at the posts-only endpoint');
    expect(postsReceiver.requests.map((request) => request.body).sort()).toEqual([...postBodies].sort());
    const deliveries = (await api('GET', `/webhooks/${postsOnly.body.payload.endpoint.id}/deliveries?per_page=100`)).body.payload.deliveries as { event_type: string }[];
    expect(new Set(deliveries.map((delivery) => delivery.event_type))).toEqual(new Set(['post.state_changed']));

    // A ping is in the same envelope, about no record, naming the endpoint it tests.
    const pinged = await api('POST', `/webhooks/${all.body.payload.endpoint.id}/ping`);
    const ping = await eventually(async () => receiver.requests.find((request) => request.json.id === pinged.body.payload.event_id), WAIT_MS, 'the ping');
    const anyItem = (await api('GET', '/events?per_page=1')).body.payload.events[0];
    expect(Object.keys(JSON.parse(ping.body))).toEqual([...Object.keys(anyItem), 'endpoint_id']);
    expect(JSON.parse(ping.body)).toEqual({
      id: pinged.body.payload.event_id,
      type: 'ping',
      occurred_at: expect.any(Number),
      organization_id: org.organization.id,
      account_id: null,
      record_type: null,
      record_id: null,
      sequence: null,
      record: null,
      endpoint_id: all.body.payload.endpoint.id,
    });
  }, SLOW);
});

describe('event types', () => {
  it('round-trip: an endpoint made with the types an answer gave has them, `*` included, and GraphQL says ALL', async () => {
    const made = await api('POST', '/webhooks', { url: receiver.url, event_types: ['post.state_changed', 'LOCATION_CONNECTED', 'post.state_changed'], enabled: false });
    expect(made.status).toBe(201);
    const types = made.body.payload.endpoint.event_types as string[];
    expect(types).toEqual(['post.state_changed', 'location.connected']);
    const again = await api('POST', '/webhooks', { url: receiver.url, event_types: types, enabled: false });
    expect(again.body.payload.endpoint.event_types).toEqual(types);
    const patched = await api('PATCH', `/webhooks/${again.body.payload.endpoint.id}`, { event_types: (await api('GET', `/webhooks/${made.body.payload.endpoint.id}`)).body.payload.event_types });
    expect(patched.body.payload.event_types).toEqual(types);

    // `*` holds every type: named beside others, it stands alone.
    const every = await api('PATCH', `/webhooks/${again.body.payload.endpoint.id}`, { event_types: ['location.connected', '*'] });
    expect(every.body.payload.event_types).toEqual(['*']);
    const copied = await api('POST', '/webhooks', { url: receiver.url, event_types: every.body.payload.event_types, enabled: false });
    expect(copied.body.payload.endpoint.event_types).toEqual(['*']);
    const viaGraphQL = await gql(`query ($id: ID!) { webhookEndpoint(id: $id) { eventTypes } }`, { id: copied.body.payload.endpoint.id });
    expect(viaGraphQL.webhookEndpoint.eventTypes).toEqual(['ALL']);
    const madeInGraphQL = await gql(`mutation { createWebhookEndpoint(input: { url: "https://hooks.example.com/in", eventTypes: [ALL], enabled: false }) { endpoint { id eventTypes } } }`);
    expect(madeInGraphQL.createWebhookEndpoint.endpoint.eventTypes).toEqual(['ALL']);
    expect((await api('GET', `/webhooks/${madeInGraphQL.createWebhookEndpoint.endpoint.id}`)).body.payload.event_types).toEqual(['*']);

    // The spelling of an event's type, from a list to a filter; an unknown one is refused naming both spellings.
    const [event] = (await api('GET', '/events?per_page=1')).body.payload.events;
    if (event) expect((await api('GET', `/events?type=${event.type}&per_page=1`)).body.payload.events[0].type).toBe(event.type);
    const refused = await api('POST', '/webhooks', { url: receiver.url, event_types: ['post.nothing'] });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('POST_STATE_CHANGED, post.state_changed');
    expect(refused.body.message).toContain('ALL, *');

    for (const id of [made, again, copied].map((answer) => answer.body.payload.endpoint.id).concat(madeInGraphQL.createWebhookEndpoint.endpoint.id)) {
      expect((await api('DELETE', `/webhooks/${id}`)).status).toBe(200);
    }
  });
});

describe('the events filter by ids', () => {
  it('lists the events named, newest first, at most 100 at once, and only the caller’s', async () => {
    const listed = (await api('GET', '/events?per_page=3')).body.payload.events as Body[];
    expect(listed.length).toBe(3);
    const named = [listed[2]!.id, listed[0]!.id, '01a21af3-0305-7586-b3df-2c5267907cf7', 'not-an-id'];
    const query = `query ($ids: [ID!]) { eventsPage(ids: $ids, perPage: 100) { found events { id } } }`;
    const page = await gql(query, { ids: named });
    expect(page.eventsPage).toEqual({ found: 2, events: [{ id: listed[0]!.id }, { id: listed[2]!.id }] });
    const other = await createOrganizationFixture(t.em(), { accounts: 0 });
    const theirs = await graphql(t.url, query, { token: other.token, variables: { ids: named } });
    expect(theirs.body.data.eventsPage).toEqual({ found: 0, events: [] });
    const tooMany = await graphql(t.url, query, { token: org.token, variables: { ids: Array.from({ length: 101 }, () => listed[0]!.id) } });
    expect(tooMany.body.errors?.[0]).toMatchObject({ message: 'ids may hold at most 100 events', extensions: { code: 'BAD_USER_INPUT' } });
  });
});
