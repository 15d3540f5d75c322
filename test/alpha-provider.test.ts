import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { createAlphaClient, type AlphaClient } from '../src/providers/alpha/alpha.client';
import { AlphaProviderError } from '../src/providers/alpha/alpha.errors';
import type { AlphaLocalPost } from '../src/providers/alpha/alpha.types';
import { alphaSandboxPlugin } from '../sandboxes/alpha/alpha-sandbox';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { startAlphaSandbox, type AlphaSandboxServer } from '../sandboxes/alpha/main';
import { failure } from './support/failure';

/**
 * The alpha client against the alpha sandbox, both real, over HTTP. The sandbox runs on a clock this file moves,
 * so processing periods and scheduled posts are checked by state, never by waiting.
 */

const START = Date.parse('2031-03-01T10:00:00.000Z');
let now = START;
let sandbox: AlphaSandboxServer;
let control: AlphaSandboxControl;
let client: AlphaClient;

const ACCOUNT = 'acc-1';
const LOCATION = 'loc-1';
const at = { accountId: ACCOUNT, locationId: LOCATION };
let requestCounter = 0;
const newRequestId = () => `req-${++requestCounter}`;

const standardPost: AlphaLocalPost = {
  languageCode: 'en',
  summary: 'Spring opening hours',
  topicType: 'STANDARD',
  callToAction: { actionType: 'LEARN_MORE', url: 'https://example.com/spring' },
  media: [{ mediaFormat: 'PHOTO', sourceUrl: 'https://example.com/spring.jpg' }],
};

const schedule = { startDate: { year: 2031, month: 4, day: 1 }, endDate: { year: 2031, month: 4, day: 2 } };

function create(post: AlphaLocalPost, requestId = newRequestId(), location = LOCATION): Promise<AlphaLocalPost> {
  return client.createLocalPost({ accountId: ACCOUNT, locationId: location, post, requestId });
}

/** The AlphaProviderError a call fails with (and a test failure if it succeeds or fails otherwise). */
const providerError = (call: Promise<unknown>): Promise<AlphaProviderError> => failure(call, AlphaProviderError);

function nameOf(post: AlphaLocalPost): string {
  if (!post.name) throw new Error('post without a name');
  return post.name;
}

beforeAll(async () => {
  sandbox = await startAlphaSandbox({ port: 0, clock: () => now });
  control = createAlphaSandboxControl(sandbox.url);
  client = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => 'sandbox-token' });
});
afterAll(() => sandbox?.close());
beforeEach(async () => {
  now = START;
  await control.reset();
});

describe('local posts round trip', () => {
  it('creates, gets, lists and deletes a post', async () => {
    const created = await create(standardPost);
    expect(created).toEqual({
      ...standardPost,
      name: expect.stringMatching(/^accounts\/acc-1\/locations\/loc-1\/localPosts\/\d+$/),
      state: 'LIVE',
      searchUrl: `https://alpha.example/search?post=${nameOf(created).split('/').pop()}`,
      createTime: '2031-03-01T10:00:00.000Z',
      updateTime: '2031-03-01T10:00:00.000Z',
    });

    expect(await client.getLocalPost(nameOf(created))).toEqual(created);
    expect(await client.listLocalPosts(at)).toEqual({ localPosts: [created] });

    await client.deleteLocalPost(nameOf(created));
    const gone = await providerError(client.getLocalPost(nameOf(created)));
    expect(gone).toMatchObject({ status: 404, code: 404, reason: 'NOT_FOUND', retryable: false });
    const again = await providerError(client.deleteLocalPost(nameOf(created)));
    expect(again).toMatchObject({ status: 404, reason: 'NOT_FOUND', retryable: false });
    expect(await client.listLocalPosts(at)).toEqual({ localPosts: [] });

    const state = await control.state();
    expect(state.posts).toEqual([]);
    expect(state.publishes).toBe(1);
    expect(state.calls).toEqual({ create: 1, get: 2, list: 2, delete: 2 });
  });

  it('lists one location, newest first, page by page', async () => {
    const first = await create({ summary: 'one' });
    now += 1000;
    const second = await create({ summary: 'two' });
    now += 1000;
    const third = await create({ summary: 'three' });
    await create({ summary: 'elsewhere' }, newRequestId(), 'loc-2');

    const page1 = await client.listLocalPosts({ ...at, pageSize: 2 });
    expect(page1.localPosts.map(nameOf)).toEqual([nameOf(third), nameOf(second)]);
    expect(page1.nextPageToken).toEqual(expect.any(String));

    // A post created between pages neither shifts nor repeats the rest of the listing.
    await create({ summary: 'four' });
    const page2 = await client.listLocalPosts({ ...at, pageSize: 2, pageToken: page1.nextPageToken });
    expect(page2).toEqual({ localPosts: [expect.objectContaining({ name: nameOf(first), summary: 'one' })] });
  });

  it('refuses a page token it did not issue', async () => {
    const error = await providerError(client.listLocalPosts({ ...at, pageToken: 'not-a-token' }));
    expect(error).toMatchObject({ status: 400, reason: 'INVALID_ARGUMENT', retryable: false });
    expect(error.message).toContain('pageToken');
  });

  it('refuses a malformed resource name without calling the provider', async () => {
    const error = await providerError(client.getLocalPost('accounts/acc-1/../../_control/reset'));
    expect(error).toMatchObject({ status: 0, reason: 'INVALID_ARGUMENT', retryable: false });
    expect((await control.state()).calls.get).toBe(0);
  });
});

describe('requestId', () => {
  it('answers a repeated create with the post already created, publishing once', async () => {
    const requestId = newRequestId();
    const first = await create(standardPost, requestId);
    const repeated = await create({ ...standardPost, summary: 'a retry may even differ' }, requestId);
    expect(repeated).toEqual(first);

    const state = await control.state();
    expect(state.publishes).toBe(1);
    expect(state.calls.create).toBe(2);
    expect(state.posts).toEqual([expect.objectContaining({ name: nameOf(first), requestId, state: 'LIVE' })]);
  });

  it('is scoped to a location, and a new requestId is a new post', async () => {
    const requestId = newRequestId();
    const here = await create(standardPost, requestId);
    const there = await create(standardPost, requestId, 'loc-2');
    const another = await create(standardPost);
    expect(new Set([nameOf(here), nameOf(there), nameOf(another)]).size).toBe(3);
    expect((await control.state()).publishes).toBe(3);
  });
});

describe('validation of a create', () => {
  const refused: [string, AlphaLocalPost, string][] = [
    ['STANDARD without a summary', { topicType: 'STANDARD' }, 'summary'],
    ['STANDARD with a blank summary', { topicType: 'STANDARD', summary: '   ' }, 'summary'],
    ['a summary over 1500 characters', { summary: 'x'.repeat(1501) }, 'summary'],
    ['EVENT without a schedule', { topicType: 'EVENT', event: { title: 'Launch' } }, 'event.schedule'],
    ['EVENT without a title', { topicType: 'EVENT', event: { schedule } }, 'event.title'],
    ['OFFER without a schedule', { topicType: 'OFFER', offer: { couponCode: 'SPRING' } }, 'event.schedule'],
    ['ALERT without an alertType', { topicType: 'ALERT', summary: 'Closed today' }, 'alertType'],
    ['CALL with a url', { summary: 's', callToAction: { actionType: 'CALL', url: 'https://example.com' } }, 'callToAction.url'],
    ['BOOK without a url', { summary: 's', callToAction: { actionType: 'BOOK' } }, 'callToAction.url'],
    ['a url that is not http(s)', { summary: 's', callToAction: { actionType: 'SHOP', url: 'ftp://example.com' } }, 'callToAction.url'],
    ['an end before the start', { topicType: 'EVENT', event: { title: 'T', schedule: { ...schedule, endDate: { year: 2031, month: 3, day: 31 } } } }, 'event.schedule.endDate'],
    ['a scheduledTime that is not RFC 3339', { summary: 's', scheduledTime: 'tomorrow' }, 'scheduledTime'],
    // Values outside the provider's enumerations, as a careless caller could send them.
    ['an unknown topicType', { summary: 's', topicType: 'DANCE' } as unknown as AlphaLocalPost, 'topicType'],
    ['an unknown actionType', { summary: 's', callToAction: { actionType: 'DANCE', url: 'https://e.com' } } as unknown as AlphaLocalPost, 'callToAction.actionType'],
    ['an unknown field', { summary: 's', summery: 'typo' } as unknown as AlphaLocalPost, 'summery'],
  ];

  it.each(refused)('refuses %s', async (_rule, post, field) => {
    const error = await providerError(create(post));
    expect(error).toMatchObject({ status: 400, code: 400, reason: 'INVALID_ARGUMENT', retryable: false });
    expect(error.message).toContain(field);
    expect(error.details).toEqual([
      expect.objectContaining({ fieldViolations: [expect.objectContaining({ field })] }),
    ]);
    expect((await control.state()).publishes).toBe(0);
  });

  const accepted: [string, AlphaLocalPost][] = [
    ['EVENT with a title and a schedule', { topicType: 'EVENT', event: { title: 'Launch', schedule } }],
    ['OFFER with a schedule', { topicType: 'OFFER', event: { schedule }, offer: { couponCode: 'SPRING', redeemOnlineUrl: 'https://e.com/r' } }],
    ['ALERT with an alertType', { topicType: 'ALERT', summary: 'Closed', alertType: 'ALERT_TYPE_UNSPECIFIED' }],
    ['CALL without a url', { summary: 'Ring us', callToAction: { actionType: 'CALL' } }],
  ];

  it.each(accepted)('accepts %s', async (_rule, post) => {
    const created = await create(post);
    expect(created).toMatchObject({ ...post, state: 'LIVE' });
  });
});

describe('scripted failures', () => {
  it('429 is retryable with Retry-After, and the next call succeeds', async () => {
    await control.fail({ count: 1, status: 429 });
    const error = await providerError(create(standardPost));
    expect(error).toMatchObject({ status: 429, code: 429, reason: 'RESOURCE_EXHAUSTED', retryable: true, retryAfterSeconds: 1 });

    const created = await create(standardPost);
    expect(created.state).toBe('LIVE');
    expect((await control.state()).calls.create).toBe(2);
  });

  it('503 fails as many matching calls as asked, leaving others alone', async () => {
    await control.fail({ count: 2, status: 503, method: 'POST', pathContains: '/locations/loc-1/' });
    const requestId = newRequestId();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const error = await providerError(create(standardPost, requestId));
      expect(error).toMatchObject({ status: 503, reason: 'UNAVAILABLE', retryable: true });
      expect(error.retryAfterSeconds).toBeUndefined();
    }
    // Neither a GET nor another location matches the rule.
    expect(await client.listLocalPosts(at)).toEqual({ localPosts: [] });
    await create(standardPost, newRequestId(), 'loc-2');
    expect((await control.state()).failures).toEqual([]);

    const created = await create(standardPost, requestId);
    expect(created.state).toBe('LIVE');
    const state = await control.state();
    expect(state.publishes).toBe(2);
    expect(state.calls).toMatchObject({ create: 4, list: 1 });
  });

  it('500 and 400 and 404 come in their envelopes; only 500 is retryable', async () => {
    await control.fail({ count: 1, status: 500 });
    await control.fail({ count: 1, status: 400 });
    await control.fail({ count: 1, status: 404 });
    expect(await providerError(create(standardPost))).toMatchObject({ status: 500, reason: 'INTERNAL', retryable: true });
    expect(await providerError(create(standardPost))).toMatchObject({ status: 400, reason: 'INVALID_ARGUMENT', retryable: false });
    expect(await providerError(create(standardPost))).toMatchObject({ status: 404, reason: 'NOT_FOUND', retryable: false });
    expect((await control.state()).publishes).toBe(0);
  });

  it('status 0 drops the connection: a retryable network error, then success', async () => {
    await control.fail({ count: 1, status: 0 });
    const error = await providerError(create(standardPost));
    expect(error).toMatchObject({ status: 0, code: 0, reason: 'NETWORK_ERROR', retryable: true });
    expect(error.retryAfterSeconds).toBeUndefined();

    expect((await create(standardPost)).state).toBe('LIVE');
    // Two calls arrived: nothing between client and sandbox repeated the dropped one.
    expect((await control.state())).toMatchObject({ publishes: 1, calls: { create: 2 } });
  });

  it('a create whose answer is lost, retried with its requestId, publishes once', async () => {
    await control.fail({ count: 1, status: 0, method: 'POST', when: 'after' });
    const requestId = newRequestId();
    expect(await providerError(create(standardPost, requestId))).toMatchObject({ reason: 'NETWORK_ERROR', retryable: true });
    expect((await control.state()).publishes).toBe(1);

    const retried = await create(standardPost, requestId);
    const state = await control.state();
    expect(state.publishes).toBe(1);
    expect(state.posts.map((post) => post.name)).toEqual([nameOf(retried)]);
  });

  it('bodyContains tells calls of one path apart by what they send', async () => {
    await control.fail({ count: 1, status: 503, method: 'POST', bodyContains: '"summary":"second"' });
    expect((await create({ summary: 'first' })).state).toBe('LIVE');
    expect(await providerError(create({ summary: 'second' }))).toMatchObject({ status: 503, retryable: true });
    expect((await control.state()).failures).toEqual([]);
  });

  it('refuses a failure it cannot script', async () => {
    await expect(control.fail({ count: 1, status: 200 })).rejects.toThrow(/HTTP 400/);
    await expect(control.fail({ count: 0, status: 503 })).rejects.toThrow(/HTTP 400/);
  });
});

describe('post states', () => {
  it('a processing period reports PROCESSING, then LIVE', async () => {
    await control.configure({ processingMs: 60_000 });
    const created = await create(standardPost);
    expect(created.state).toBe('PROCESSING');
    expect(created.searchUrl).toBeUndefined();

    now += 59_999;
    expect((await client.getLocalPost(nameOf(created))).state).toBe('PROCESSING');
    now += 1;
    const live = await client.getLocalPost(nameOf(created));
    expect(live).toMatchObject({ state: 'LIVE', searchUrl: expect.stringMatching(/^https:\/\/alpha\.example\/search\?post=/) });
    expect(live.updateTime).toBe('2031-03-01T10:01:00.000Z');
  });

  it('a summary with the reject marker is REJECTED at once without a processing period', async () => {
    await control.configure({ rejectMarker: 'FORBIDDEN WORD' });
    const rejected = await create({ summary: 'This has a FORBIDDEN WORD in it' });
    expect(rejected.state).toBe('REJECTED');
    expect(rejected.searchUrl).toBeUndefined();
    expect((await create({ summary: 'This is fine' })).state).toBe('LIVE');
  });

  it('with a processing period, the reject marker shows PROCESSING, then REJECTED', async () => {
    await control.configure({ processingMs: 5_000 });
    // The default marker, after a reset.
    const created = await create({ summary: 'Please [[reject]] this' });
    expect(created.state).toBe('PROCESSING');
    now += 5_000;
    expect((await client.getLocalPost(nameOf(created))).state).toBe('REJECTED');
    expect((await client.listLocalPosts(at)).localPosts.map((post) => post.state)).toEqual(['REJECTED']);
  });

  it('a summary with the review marker stays PROCESSING for a day, and holds up no other post', async () => {
    const reviewed = await create({ summary: 'Winter hours [[review]]' });
    const other = await create({ summary: 'Open on Sunday' });
    expect(reviewed.state).toBe('PROCESSING');
    expect(other.state).toBe('LIVE');
    now += 24 * 3600_000 - 1;
    expect((await client.getLocalPost(nameOf(reviewed))).state).toBe('PROCESSING');
    now += 1;
    expect((await client.getLocalPost(nameOf(reviewed))).state).toBe('LIVE');
    await control.configure({ reviewMarker: null });
    expect((await create({ summary: 'Spring hours [[review]]' })).state).toBe('LIVE');
  });

  it('a scheduled post is PROCESSING until its time, LIVE after', async () => {
    const scheduledTime = new Date(START + 3_600_000).toISOString();
    const created = await create({ ...standardPost, scheduledTime });
    expect(created).toMatchObject({ state: 'PROCESSING', scheduledTime });

    now = START + 3_599_000;
    expect((await client.getLocalPost(nameOf(created))).state).toBe('PROCESSING');
    now = START + 3_600_000;
    expect(await client.getLocalPost(nameOf(created))).toMatchObject({ state: 'LIVE', updateTime: scheduledTime });
    expect((await control.state()).posts).toEqual([expect.objectContaining({ name: nameOf(created), state: 'LIVE' })]);
  });
});

describe('latency and timeouts', () => {
  it('applies latency and still answers correctly', async () => {
    await control.configure({ latencyMs: 150 });
    const created = await create(standardPost);
    expect(created.state).toBe('LIVE');
    expect((await client.getLocalPost(nameOf(created))).name).toBe(created.name);
  });

  it('a provider slower than the client timeout is a retryable TIMEOUT', async () => {
    await control.configure({ latencyMs: 2_000 });
    const impatient = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => 'sandbox-token', timeoutMs: 50 });
    // A read, so the call finishing late in the sandbox changes nothing a later test sees.
    const error = await providerError(impatient.listLocalPosts(at));
    expect(error).toMatchObject({ status: 0, code: 0, reason: 'TIMEOUT', retryable: true });
  });

  /** Polls the controls until `done` holds of the state. */
  async function stateWhen(done: (state: Awaited<ReturnType<AlphaSandboxControl['state']>>) => boolean) {
    for (;;) {
      const state = await control.state();
      if (done(state)) return state;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('a scripted delay holds only the matching calls (counted as held), and a call held past the client’s timeout still takes effect', async () => {
    await control.fail({ count: 1, delayMs: 1_000, method: 'POST', pathContains: '/locations/loc-1/' });
    expect((await control.state()).failures).toEqual([{ count: 1, delayMs: 1_000, method: 'POST', pathContains: '/locations/loc-1/', when: 'before' }]);
    const impatient = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => 'sandbox-token', timeoutMs: 50 });
    const requestId = newRequestId();
    const timedOut = providerError(impatient.createLocalPost({ ...at, post: standardPost, requestId }));
    // The rule is taken as the call arrives (a call of an earlier test may still be held too); a read meanwhile is not held.
    await stateWhen((state) => state.held >= 1 && state.failures.length === 0);
    expect(await client.listLocalPosts(at)).toEqual({ localPosts: [] });
    expect(await timedOut).toMatchObject({ status: 0, reason: 'TIMEOUT', retryable: true });
    // The provider was slow, not broken: once the delay is over the create happens, though nobody waits for it.
    const after = await stateWhen((state) => state.publishes === 1);
    const retried = await create(standardPost, requestId);
    expect(after.posts.map((post) => post.name)).toEqual([nameOf(retried)]);
    expect((await control.state()).publishes).toBe(1);
  });

  it('a scripted delay with a status fails after the delay, without effect', async () => {
    await control.fail({ count: 1, status: 503, delayMs: 200 });
    expect(await providerError(create(standardPost))).toMatchObject({ status: 503, reason: 'UNAVAILABLE', retryable: true });
    expect(await control.state()).toMatchObject({ publishes: 0, failures: [] });
  });

  it('refuses a rule with neither a status nor a delay, and a delay out of range', async () => {
    await expect(control.fail({ count: 1 })).rejects.toThrow(/HTTP 400.*status: is required unless delayMs holds the calls/);
    await expect(control.fail({ count: 1, delayMs: 0 })).rejects.toThrow(/HTTP 400/);
    await expect(control.fail({ count: 1, delayMs: 600_001 })).rejects.toThrow(/HTTP 400/);
  });
});

describe('authentication', () => {
  it('a call without a bearer token is 401 UNAUTHENTICATED, not retryable', async () => {
    const anonymous = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => '' });
    const error = await providerError(anonymous.createLocalPost({ ...at, post: standardPost, requestId: newRequestId() }));
    expect(error).toMatchObject({ status: 401, code: 401, reason: 'UNAUTHENTICATED', retryable: false });

    const raw = await fetch(`${sandbox.url}/v4/accounts/acc-1/locations/loc-1/localPosts`);
    expect(raw.status).toBe(401);
    expect(await raw.json()).toEqual({
      error: { code: 401, message: expect.any(String), status: 'UNAUTHENTICATED', details: [] },
    });
    expect((await control.state()).publishes).toBe(0);
  });

  it('asks for the token on every call', async () => {
    const tokens = ['first', ''];
    const rotating = createAlphaClient({ baseUrl: sandbox.url, accessToken: async () => tokens.shift() ?? '' });
    await rotating.listLocalPosts(at);
    expect(await providerError(rotating.listLocalPosts(at))).toMatchObject({ status: 401 });
  });
});

describe('mounted under a prefix, as the server mounts it', () => {
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    app = Fastify({ logger: false });
    // The server has its own not-found handler; the sandbox keeps its envelope under its prefix.
    app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 404, message: 'gateway' }));
    await app.register(alphaSandboxPlugin, { prefix: '/sandbox/alpha', clock: () => now });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/sandbox/alpha`;
  });
  afterAll(() => app?.close());

  it('serves the provider and its controls there', async () => {
    const prefixed = createAlphaClient({ baseUrl: `${base}/`, accessToken: () => 't' });
    const created = await prefixed.createLocalPost({ ...at, post: standardPost, requestId: 'r' });
    expect(await prefixed.getLocalPost(nameOf(created))).toEqual(created);
    expect((await createAlphaSandboxControl(base).state()).publishes).toBe(1);

    const unknown = await fetch(`${base}/v4/nothing`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });

    const badJson = await fetch(`${base}/v4/accounts/a/locations/l/localPosts`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
  });
});

describe('answers that are not the documented shape', () => {
  // A stand-in for whatever sits in front of the provider (a proxy, a broken deployment), answering canned bodies.
  let server: Server;
  let base: string;
  let answer: { status: number; contentType: string; body: string; headers?: Record<string, string> };
  let received: IncomingMessage | undefined;

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      received = request;
      request.resume();
      response.writeHead(answer.status, { 'content-type': answer.contentType, ...answer.headers });
      response.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const stubClient = () => createAlphaClient({ baseUrl: base, accessToken: () => 'stub-token' });

  it('a non-JSON error body is still an AlphaProviderError, classified by its status', async () => {
    answer = { status: 502, contentType: 'text/html', body: '<html>Bad Gateway</html>', headers: { 'retry-after': '7' } };
    const error = await providerError(stubClient().getLocalPost('accounts/a/locations/l/localPosts/p'));
    expect(error).toMatchObject({ status: 502, code: 502, reason: 'UNAVAILABLE', retryable: true, retryAfterSeconds: 7, details: [] });
    expect(error.message).toContain('Bad Gateway');
  });

  it('a success body that is not a post is BAD_RESPONSE, not retryable', async () => {
    answer = { status: 200, contentType: 'application/json', body: JSON.stringify({ summary: 'no name, no state' }) };
    const error = await providerError(stubClient().getLocalPost('accounts/a/locations/l/localPosts/p'));
    expect(error).toMatchObject({ status: 200, reason: 'BAD_RESPONSE', retryable: false });
    expect(error.message).toContain('name');

    answer = { status: 200, contentType: 'application/json', body: '{"localPosts": [' };
    expect(await providerError(stubClient().listLocalPosts(at))).toMatchObject({ reason: 'BAD_RESPONSE', retryable: false });
  });

  it('sends the bearer token, the requestId and the post as JSON', async () => {
    answer = {
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({ name: 'accounts/a b/locations/l/localPosts/1', state: 'LIVE', summary: 's', extra: 'dropped' }),
    };
    const created = await stubClient().createLocalPost({ accountId: 'a b', locationId: 'l', post: { summary: 's' }, requestId: 'r&1' });
    expect(created).toEqual({ name: 'accounts/a b/locations/l/localPosts/1', state: 'LIVE', summary: 's' });
    expect(received?.method).toBe('POST');
    expect(received?.url).toBe('/v4/accounts/a%20b/locations/l/localPosts?requestId=r%261');
    expect(received?.headers.authorization).toBe('Bearer stub-token');
    expect(received?.headers['content-type']).toBe('application/json');
  });
});
