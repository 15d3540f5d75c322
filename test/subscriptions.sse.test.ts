import { createClient as createSseClient, NetworkError } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { SSE_KEEP_ALIVE_MS } from '../src/graphql/sse';
import { workProbe } from './support/async-work';
import { captureLog, openAdmin, requestErrors, WARN } from './support/faults';
import { createOrganizationFixture, createOrganizationToken, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { minimalLocationBody, waitUntilConnected } from './support/locations';
import { eventually, pollPost, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { postProbe, updateJobProbe, waitUntil, type Probe } from './support/ws';

/**
 * Subscriptions over Server-Sent Events (the graphql-sse protocol, distinct connections mode) at /graphql/stream,
 * through HTTP as a dashboard behind a proxy without WebSockets runs them: graphql-sse's own client on Node's fetch,
 * and fetch reading the raw stream where the bytes matter. The same authentication, limits and scoping as graphql-ws
 * (refusals compared with graphql-ws's own answers), events in order, revocation, keep-alive, metrics and a stop.
 */

const log = captureLog();
let t: TestStack;
let org: OrganizationFixture;
let other: OrganizationFixture;

const STREAM_URL = () => `${t.url}/graphql/stream`;

const POST_UPDATED = 'subscription ($postId: ID, $locationId: ID) { postUpdated(postId: $postId, locationId: $locationId) { id state version accountId locationId } }';

beforeAll(async () => {
  t = await startTestStack({ POST_RATE_LIMIT_PER_MINUTE: '1000' }, { log: { destination: log.destination } });
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 1, connected: true });
  other = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
});
beforeEach(() => sandboxOf(t.url).reset());
afterAll(() => t?.close());

/** Probes of postUpdated that look like a post of `fixture`'s account `account`. */
const postProbeOf = (fixture: OrganizationFixture, account = 0): Probe =>
  postProbe(t.stack.runtime.events, {
    organizationId: fixture.organization.id,
    accountId: fixture.accounts[account]!.account.id,
    locationId: fixture.accounts[account]!.locations[0]!.id,
  });

function createPost(fixture: OrganizationFixture, account: number, summary: string) {
  return http(t.url, 'POST', `/post?account_id=${fixture.accounts[account]!.account.id}`, {
    token: fixture.token,
    body: { location_id: fixture.accounts[account]!.locations[0]!.id, params: { topicType: 'STANDARD', summary, languageCode: 'en' } },
  });
}


/** A failure as the test's output shows it (graphql-sse's NetworkError names the status it got). */
const failureText = (failure: unknown): string => (failure instanceof Error ? failure.message : JSON.stringify(failure));

/** The id of a probe event: probes are records at version 0, which no real record has. */
function probeIdOf(data: unknown): string | undefined {
  const [record] = Object.values(data as Record<string, { id?: string; version?: number } | null>);
  return record?.version === 0 ? record.id : undefined;
}

interface SseRecorder<T> {
  /** Every event but probes, in arrival order. */
  events: T[];
  /** The errors of results (a `next` with errors). */
  errors: unknown[];
  /** What graphql-sse's client reported as the subscription's failure (a refused or broken stream). */
  failure: unknown;
  completed: boolean;
  /** Resolves once `done` holds over the events (rejects when the stream failed or completed first). */
  until(done: (events: T[]) => boolean, what: string, timeoutMs?: number): Promise<T[]>;
  /** Resolves once the stream completed (the server sent `complete`). */
  completion(timeoutMs?: number): Promise<void>;
  /** Sends a probe and resolves once it arrived: every event published before it has been delivered by then. */
  sync(timeoutMs?: number): Promise<void>;
  close(): void;
}

/**
 * A subscription over graphql-sse's client (distinct connections mode, Node's fetch), as a dashboard runs it with
 * `token`; resolves once it is live, proven by a probe event published through the real event bus arriving.
 */
async function subscribeOverSse<T = any>(token: string, query: string, variables: Record<string, unknown> | undefined, probe: Probe): Promise<SseRecorder<T>> {
  const client = createSseClient({ url: STREAM_URL(), headers: { authorization: `Bearer ${token}` }, retryAttempts: 0, fetchFn: fetch });
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((check) => check());
  const probesSeen = new Set<string>();
  const recorder: SseRecorder<T> = {
    events: [],
    errors: [],
    failure: undefined,
    completed: false,
    async until(done, what, timeoutMs = 20000) {
      const stopped = () => (recorder.failure ? `the stream failed: ${failureText(recorder.failure)}` : recorder.completed ? 'the stream completed' : undefined);
      await waitUntil(waiters, () => done(recorder.events), stopped, what, timeoutMs);
      return recorder.events;
    },
    completion: (timeoutMs = 20000) =>
      waitUntil(waiters, () => recorder.completed, () => (recorder.failure ? `the stream failed: ${failureText(recorder.failure)}` : undefined), 'the stream to complete', timeoutMs),
    async sync(timeoutMs = 20000) {
      const id = await probe.send();
      await waitUntil(waiters, () => probesSeen.has(id), () => (recorder.failure || recorder.completed ? 'the stream ended' : undefined), 'the probe', timeoutMs);
    },
    close: () => client.dispose(),
  };
  client.subscribe<T>(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) recorder.errors.push(...result.errors);
        const probeId = result.data ? probeIdOf(result.data) : undefined;
        if (probeId) probesSeen.add(probeId);
        else if (result.data) recorder.events.push(result.data);
        wake();
      },
      error: (error) => {
        recorder.failure = error;
        wake();
      },
      complete: () => {
        recorder.completed = true;
        wake();
      },
    },
  );
  // The stream is open once its answer's headers arrive; probes are sent until one comes through.
  const sent = new Set<string>();
  try {
    await waitUntil(
      waiters,
      () => [...sent].some((id) => probesSeen.has(id)),
      () => (recorder.failure ? `the stream failed: ${failureText(recorder.failure)}` : undefined),
      'the subscription to go live',
      20000,
      () => void probe.send().then((id) => sent.add(id)),
    );
  } catch (error) {
    client.dispose();
    throw error;
  }
  return recorder;
}

/** An answer of /graphql/stream that must not be a stream: its status, headers and JSON body. */
async function refusal(init: { method?: 'GET' | 'POST'; token?: string | null; body?: unknown; rawBody?: string; search?: string; headers?: Record<string, string> }) {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...init.headers };
  if (init.token !== null) headers.authorization = `Bearer ${init.token ?? org.token}`;
  let body: string | undefined = init.rawBody;
  if (init.body !== undefined) body = JSON.stringify(init.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const controller = new AbortController();
  const response = await fetch(`${STREAM_URL()}${init.search ?? ''}`, { method: init.method ?? 'POST', headers, body, signal: controller.signal });
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    controller.abort();
    throw new Error(`expected a refusal, got a stream (${response.status})`);
  }
  return { status: response.status, headers: response.headers, body: (await response.json()) as { errors: { message: string; extensions: { code: string } }[] } };
}

/** A stream read as raw text, as the bytes arrive. */
interface RawStream {
  response: Response;
  text(): string;
  /** Resolves once `done` holds over the text so far, or the stream ended (then `done` must hold). */
  until(done: (text: string) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Resolves once the server ended the response. */
  ended: Promise<void>;
  close(): Promise<void>;
}

async function openRawStream(token: string, query: string, options: { baseUrl?: string; variables?: Record<string, unknown> } = {}): Promise<RawStream> {
  const search = new URLSearchParams({ query, ...(options.variables ? { variables: JSON.stringify(options.variables) } : {}) });
  const controller = new AbortController();
  const response = await fetch(`${options.baseUrl ?? t.url}/graphql/stream?${search}`, {
    headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  let text = '';
  let over = false;
  const waiters = new Set<() => void>();
  const decoder = new TextDecoder();
  const ended = (async () => {
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        waiters.forEach((check) => check());
      }
    } catch {
      // Aborted by the test.
    }
    over = true;
    waiters.forEach((check) => check());
  })();
  return {
    response,
    text: () => text,
    until: (done, what, timeoutMs = 20000) => waitUntil(waiters, () => done(text), () => (over ? `the stream ended; it read ${JSON.stringify(text)}` : undefined), what, timeoutMs),
    ended,
    async close() {
      controller.abort();
      await ended;
    },
  };
}

/** How graphql-ws refuses an operation (an `error` message's errors), for comparison. */
function refusalOverWebSocket(query: string, variables?: Record<string, unknown>, operationName?: string): Promise<unknown> {
  const client = createWsClient({ url: `${t.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${org.token}` }, retryAttempts: 0 });
  return new Promise<unknown>((resolve, reject) => {
    client.subscribe(
      { query, variables, operationName },
      {
        next: () => reject(new Error('graphql-ws ran it')),
        error: (error) => (Array.isArray(error) ? resolve(error) : reject(new Error(`the socket failed: ${String(error)}`))),
        complete: () => reject(new Error('graphql-ws ran it')),
      },
    );
  }).finally(() => client.dispose());
}

/** Prometheus samples of GET /metrics: the value of the sample of `name` whose labels include `labels` (0: none). */
async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) total += Number(match[3]);
  }
  return total;
}

const UNAUTHENTICATED = { errors: [{ message: 'Missing, unknown or revoked bearer token', extensions: { code: 'UNAUTHENTICATED' } }] };

describe('postUpdated over SSE', () => {
  it('delivers a post created over REST after each change, SENDING to PROCESSING to LIVE, in order', async () => {
    await sandboxOf(t.url).configure({ processingMs: 300 });
    const watcher = await subscribeOverSse(org.token, POST_UPDATED, {}, postProbeOf(org));
    try {
      const created = await createPost(org, 0, 'Watched over SSE');
      expect(created.status).toBe(202);
      const id = created.body.payload.id as string;
      const mineOf = (events: { postUpdated: { id: string; state: string; version: number } }[]) => events.map((event) => event.postUpdated).filter((post) => post.id === id);
      await watcher.until((events) => mineOf(events).some((post) => post.state === 'LIVE'), 'the post to be heard LIVE');
      expect(mineOf(watcher.events).map((post) => [post.state, post.version])).toEqual([
        ['SENDING', 1],
        ['PROCESSING', 2],
        ['LIVE', 3],
      ]);
      expect(mineOf(watcher.events)[2]).toMatchObject({ accountId: org.accounts[0]!.account.id, locationId: org.accounts[0]!.locations[0]!.id });
      expect(watcher.errors).toEqual([]);
      expect(watcher.failure).toBeUndefined();
    } finally {
      watcher.close();
    }
  });

  it('never delivers events of another organization, nor of another account to an account token', async () => {
    const outsider = await subscribeOverSse(other.token, POST_UPDATED, {}, postProbeOf(other));
    const otherAccount = await subscribeOverSse(org.accounts[1]!.token, POST_UPDATED, {}, postProbeOf(org, 1));
    const sameAccount = await subscribeOverSse(org.accounts[0]!.token, POST_UPDATED, {}, postProbeOf(org, 0));
    try {
      const created = await createPost(org, 0, 'Private to account 1');
      const id = created.body.payload.id as string;
      // Guessing the id does not help (its probes claim the id, in the guesser's own organization).
      const guesser = await subscribeOverSse(other.token, POST_UPDATED, { postId: id }, postPostIdProbe(id));
      try {
        await pollPost(t.url, org.token, org.accounts[0]!.account.id, id);
        await sameAccount.until((events) => events.length >= 2, 'the account token to hear the post twice');
        // Every event of the post was published before these probes: had one been delivered, it would be here.
        await Promise.all([outsider.sync(), otherAccount.sync(), guesser.sync()]);
        expect(outsider.events).toEqual([]);
        expect(otherAccount.events).toEqual([]);
        expect(guesser.events).toEqual([]);
        expect(sameAccount.events.map((event) => [event.postUpdated.id, event.postUpdated.state])).toEqual([
          [id, 'SENDING'],
          [id, 'LIVE'],
        ]);
      } finally {
        guesser.close();
      }
    } finally {
      outsider.close();
      otherAccount.close();
      sameAccount.close();
    }
  });

  /** Probes of `other`'s own organization that claim a post id (for subscriptions filtered by that id). */
  function postPostIdProbe(postId: string): Probe {
    return postProbe(t.stack.runtime.events, {
      organizationId: other.organization.id,
      accountId: other.accounts[0]!.account.id,
      locationId: other.accounts[0]!.locations[0]!.id,
      postId,
    });
  }

  it('serves GET with the operation in the URL: text/event-stream, uncached, the request id, a comment at once and a keep-alive comment every 15 s', async () => {
    const stream = await openRawStream(org.token, 'subscription Raw($l: ID) { postUpdated(locationId: $l) { id version } }', {
      variables: { l: org.accounts[0]!.locations[0]!.id },
    });
    try {
      expect(stream.response.status).toBe(200);
      expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(stream.response.headers.get('cache-control')).toBe('no-cache, no-transform');
      expect(stream.response.headers.get('x-accel-buffering')).toBe('no');
      expect(stream.response.headers.get('x-request-id')).toEqual(expect.any(String));
      await stream.until((text) => text.startsWith(':\n\n'), 'the first comment');
      const opened = Date.now();
      // An event in graphql-sse's framing: `event: next`, the result as JSON in `data`.
      const probeId = await postProbeOf(org).send();
      await stream.until((text) => text.includes(probeId), 'the probe');
      expect(stream.text()).toBe(`:\n\nevent: next\ndata: ${JSON.stringify({ data: { postUpdated: { id: probeId, version: 0 } } })}\n\n`);
      // Nothing else to send: a comment keeps the response from looking idle to proxies.
      await stream.until((text) => text.endsWith('\n\n:\n\n'), 'a keep-alive comment', SSE_KEEP_ALIVE_MS + 10000);
      expect(Date.now() - opened).toBeGreaterThanOrEqual(SSE_KEEP_ALIVE_MS - 1000);
    } finally {
      await stream.close();
    }
  });
});

describe('locationUpdateJobUpdated and asyncWorkUpdated over SSE', () => {
  it('locationUpdateJobUpdated: an update made over REST is heard QUEUED, RUNNING, SUCCEEDED, in order', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 1, alphaAccounts: true });
    const accountId = fixture.accounts[0]!.account.id;
    const created = await http(t.url, 'POST', `/location?account_id=${accountId}`, { token: fixture.token, body: minimalLocationBody({ name: 'SSE Bakery' }) });
    expect(created.status).toBe(200);
    const locationId = created.body.payload.location_id as string;
    await waitUntilConnected(t.url, fixture.token, accountId);
    const watcher = await subscribeOverSse(
      fixture.token,
      'subscription ($l: ID) { locationUpdateJobUpdated(locationId: $l) { id status version fields locationId } }',
      { l: locationId },
      updateJobProbe(t.stack.runtime.events, { organizationId: fixture.organization.id, accountId, locationId }),
    );
    try {
      const patched = await http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${locationId}`, { token: fixture.token, body: { name: 'Watched Bakery' } });
      expect(patched.status).toBe(200);
      const jobId = patched.body.payload.id as string;
      await watcher.until((events) => events.some((event) => event.locationUpdateJobUpdated.status === 'SUCCEEDED'), 'the update to succeed');
      expect(watcher.events.map((event) => event.locationUpdateJobUpdated)).toEqual([
        { id: jobId, status: 'QUEUED', version: 1, fields: ['NAME'], locationId },
        { id: jobId, status: 'RUNNING', version: 2, fields: ['NAME'], locationId },
        { id: jobId, status: 'SUCCEEDED', version: 3, fields: ['NAME'], locationId },
      ]);
    } finally {
      watcher.close();
    }
  });

  it('asyncWorkUpdated: a post’s publish is heard QUEUED, RUNNING, SUCCEEDED; another organization hears nothing of it', async () => {
    const query = 'subscription ($k: [AsyncWorkKind!]) { asyncWorkUpdated(kinds: $k) { id kind status version subjectId } }';
    const probeOf = (fixture: OrganizationFixture) =>
      workProbe(t.stack.runtime.events, { organizationId: fixture.organization.id, accountIds: [fixture.accounts[0]!.account.id] });
    const ours = await subscribeOverSse(org.token, query, { k: ['POST_PUBLISH'] }, probeOf(org));
    const theirs = await subscribeOverSse(other.token, query, { k: ['POST_PUBLISH'] }, probeOf(other));
    try {
      const created = await createPost(org, 0, 'Its work followed over SSE');
      const postId = created.body.payload.id as string;
      const mineOf = (events: { asyncWorkUpdated: { subjectId: string; status: string; kind: string } }[]) =>
        events.map((event) => event.asyncWorkUpdated).filter((work) => work.subjectId === postId);
      await ours.until((events) => mineOf(events).some((work) => work.status === 'SUCCEEDED'), 'the publish to succeed');
      expect(mineOf(ours.events).map((work) => [work.kind, work.status])).toEqual([
        ['POST_PUBLISH', 'QUEUED'],
        ['POST_PUBLISH', 'RUNNING'],
        ['POST_PUBLISH', 'SUCCEEDED'],
      ]);
      await theirs.sync();
      expect(theirs.events).toEqual([]);
    } finally {
      ours.close();
      theirs.close();
    }
  });
});

describe('refused before any stream starts', () => {
  let logMark = 0;
  beforeEach(() => {
    logMark = log.lines.length;
  });
  /** Error-level lines of requests since the test started: a refusal is never one. */
  const errorsLogged = () => requestErrors(log.lines.slice(logMark));

  it.each([
    ['no Authorization header', null],
    ['an unknown token', 'lgo_unknown-token-of-nobody'],
    ['a token that is not a bearer token', 'Basic dXNlcjpwYXNz'],
  ] as const)('%s: 401 UNAUTHENTICATED in the GraphQL error list', async (_case, credential) => {
    const headers = credential?.startsWith('Basic') ? { authorization: credential } : undefined;
    const answer = await refusal({ token: headers ? null : credential, body: { query: POST_UPDATED }, headers });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('x-request-id')).toEqual(expect.any(String));
    expect(answer.body).toEqual(UNAUTHENTICATED);
    expect(errorsLogged()).toEqual([]);
  });

  it('graphql-sse’s client reports the 401 as its failure, with the answer', async () => {
    const client = createSseClient({ url: STREAM_URL(), headers: { authorization: 'Bearer lgo_unknown' }, retryAttempts: 0, fetchFn: fetch });
    try {
      const failure = await new Promise<unknown>((resolve) => {
        client.subscribe({ query: POST_UPDATED }, { next: () => undefined, error: resolve, complete: () => resolve(undefined) });
      });
      expect(failure).toBeInstanceOf(NetworkError);
      const response = (failure as NetworkError<Response>).response!;
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(UNAUTHENTICATED);
    } finally {
      client.dispose();
    }
  });

  const tooManyAliases = `subscription { postUpdated { ${Array.from({ length: 16 }, (_, i) => `a${i}: id`).join(' ')} } }`;
  const tooManyTokens = `subscription { postUpdated { ${'id '.repeat(2000)}} }`;
  it.each([
    ['a document that does not parse', 'subscription { postUpdated { id }', undefined, undefined, 'GRAPHQL_PARSE_FAILED'],
    ['a field the schema does not have', 'subscription { postUpdated { nope } }', undefined, undefined, 'GRAPHQL_VALIDATION_FAILED'],
    ['two root fields', 'subscription { postUpdated { id } asyncWorkUpdated { id } }', undefined, undefined, 'GRAPHQL_VALIDATION_FAILED'],
    ['more aliases than the limit', tooManyAliases, undefined, undefined, 'OPERATION_LIMIT_EXCEEDED'],
    ['more tokens than the limit', tooManyTokens, undefined, undefined, 'OPERATION_LIMIT_EXCEEDED'],
    ['a variable of the wrong type', 'subscription ($v: ID) { postUpdated(postId: $v) { id } }', { v: 1.5 }, undefined, 'BAD_USER_INPUT'],
    ['a variable with text PostgreSQL cannot store', 'subscription ($v: ID) { postUpdated(postId: $v) { id } }', { v: 'a\u0000b' }, undefined, 'BAD_USER_INPUT'],
    ['two operations and no operationName', 'subscription A { postUpdated { id } } subscription B { postUpdated { id } }', undefined, undefined, 'BAD_USER_INPUT'],
    ['an operationName the document does not have', 'subscription A { postUpdated { id } }', undefined, 'C', 'BAD_USER_INPUT'],
  ] as const)('%s: 400 with the very errors graphql-ws answers', async (_case, query, variables, operationName, code) => {
    const answer = await refusal({ body: { query, variables, operationName } });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.body.errors.map((error) => error.extensions.code)).toContain(code);
    expect(answer.body.errors).toEqual(await refusalOverWebSocket(query, variables, operationName));
    expect(errorsLogged()).toEqual([]);
  });

  it('checks nothing of the document without a token: 401 first', async () => {
    const answer = await refusal({ token: null, body: { query: 'subscription { postUpdated { nope } }' } });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(UNAUTHENTICATED);
  });

  it.each([
    ['a query', 'query { organization { id } }'],
    ['a mutation', 'mutation { createAccountToken(accountId: "x") { token } }'],
  ])('%s: 400 BAD_REQUEST, served at /graphql instead, and nothing runs', async (_case, query) => {
    const tokensBefore = await graphql(t.url, '{ apiTokens { id } }', { token: org.token });
    const answer = await refusal({ body: { query } });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      errors: [{ message: '/graphql/stream serves subscriptions only: send queries and mutations to /graphql', extensions: { code: 'BAD_REQUEST' } }],
    });
    expect((await graphql(t.url, '{ apiTokens { id } }', { token: org.token })).body).toEqual(tokensBefore.body);
    expect(errorsLogged()).toEqual([]);
  });

  it.each([
    ['no query', 400, 'BAD_REQUEST', { body: {} }, 'The operation is missing: send the GraphQL document in `query`'],
    ['a body that is not an object', 400, 'BAD_REQUEST', { body: [POST_UPDATED] }, 'The body must be a JSON object with the operation in `query`'],
    ['variables that are not an object', 400, 'BAD_REQUEST', { body: { query: POST_UPDATED, variables: [1] } }, '`variables` must be an object'],
    ['an operationName that is not a string', 400, 'BAD_REQUEST', { body: { query: POST_UPDATED, operationName: 1 } }, '`operationName` must be a string'],
    ['GET variables that are not JSON', 400, 'BAD_REQUEST', { method: 'GET', search: `?query=${encodeURIComponent(POST_UPDATED)}&variables=%7B` }, '`variables` is not JSON'],
    ['GET with the query twice', 400, 'BAD_REQUEST', { method: 'GET', search: `?query=${encodeURIComponent(POST_UPDATED)}&query=x` }, '`query` is given more than once'],
    ['a body that is not JSON', 400, 'BAD_REQUEST', { rawBody: '{"query": ' }, undefined],
    ['a body of another type', 415, 'UNSUPPORTED_MEDIA_TYPE', { rawBody: '<query/>', headers: { 'content-type': 'application/xml' } }, undefined],
    [
      'Accept without text/event-stream',
      406,
      'NOT_ACCEPTABLE',
      { body: { query: POST_UPDATED }, headers: { accept: 'application/json' } },
      '/graphql/stream answers text/event-stream only (send Accept: text/event-stream); other operations are served at /graphql',
    ],
  ] as const)('%s: %d %s in the GraphQL error list', async (_case, status, code, init, message) => {
    const answer = await refusal({ ...init, method: 'method' in init ? init.method : 'POST' });
    expect(answer.status).toBe(status);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.body).toEqual({ errors: [{ message: message ?? expect.any(String), extensions: { code } }] });
    expect(errorsLogged()).toEqual([]);
  });

  it('a dependency down while authenticating: 503 SERVICE_UNAVAILABLE with Retry-After, logged as a warning only', async () => {
    // A token never seen (not in the principal cache): its lookup waits on a lock, and its backend is terminated.
    const token = await createOrganizationToken(t.em(), org.organization);
    const admin = await openAdmin(t.databaseUrl);
    const locker = await openAdmin(t.databaseUrl, 'lg-fault-locker');
    try {
      const [{ pid }] = (await locker.query<{ pid: number }>('select pg_backend_pid() as pid')).rows as [{ pid: number }];
      await locker.query('begin');
      await locker.query('lock table api_token in access exclusive mode');
      const answer = refusal({ token, body: { query: POST_UPDATED } });
      const blocked = await eventually(async () => {
        const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))', [pid]);
        return rows.length > 0 ? rows : undefined;
      }, 30000, 'the token lookup to wait on the lock');
      for (const row of blocked) await admin.query('select pg_terminate_backend($1)', [row.pid]);
      const refused = await answer;
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.body).toEqual({
        errors: [{ message: 'A service this request needs is unavailable for a moment; try again shortly', extensions: { code: 'SERVICE_UNAVAILABLE' } }],
      });
      expect(errorsLogged()).toEqual([]);
      expect(log.lines.slice(logMark).some((line) => line.level === WARN && /a dependency is unavailable/.test(line.msg))).toBe(true);
    } finally {
      await locker.query('rollback').catch(() => undefined);
      await Promise.all([locker.end(), admin.end()]);
    }
    // Once the database is whole again, the same token streams.
    const watcher = await subscribeOverSse(token, POST_UPDATED, {}, postProbeOf(org));
    watcher.close();
  });
});

describe('the end of a stream', () => {
  it('a revoked token’s open stream ends at once: an UNAUTHENTICATED error, then complete; the token is refused 401 after', async () => {
    const created = await graphql(t.url, 'mutation ($a: ID!) { createAccountToken(accountId: $a) { token apiToken { id } } }', {
      token: org.token,
      variables: { a: org.accounts[0]!.account.id },
    });
    const { token, apiToken } = created.body.data.createAccountToken as { token: string; apiToken: { id: string } };
    const watcher = await subscribeOverSse(token, POST_UPDATED, {}, postProbeOf(org));
    const bystander = await subscribeOverSse(org.accounts[0]!.token, POST_UPDATED, {}, postProbeOf(org));
    try {
      const revoked = await graphql(t.url, `mutation { revokeApiToken(id: "${apiToken.id}") { id } }`, { token: org.token });
      expect(revoked.body.errors).toBeUndefined();
      await watcher.completion();
      expect(watcher.errors).toEqual([{ message: 'The bearer token of this subscription was revoked', extensions: { code: 'UNAUTHENTICATED' } }]);
      expect(watcher.failure).toBeUndefined();
      expect((await refusal({ token, body: { query: POST_UPDATED } })).status).toBe(401);
      // Another token's stream of the same subscription (the same group) runs on.
      await bystander.sync();
      expect(bystander.completed).toBe(false);
    } finally {
      watcher.close();
      bystander.close();
    }
  });

  it('is counted while it runs: a subscription by field, an operation with transport sse; a client that leaves releases it', async () => {
    const operations = () => metric('lg_graphql_operations_total', { operation: 'CountedOverSse', type: 'subscription', transport: 'sse', error_code: 'none' });
    const refused = () => metric('lg_graphql_operations_total', { operation: 'RefusedOverSse', transport: 'sse', error_code: 'GRAPHQL_VALIDATION_FAILED' });
    const running = () => metric('lg_graphql_subscriptions', { field: 'asyncWorkUpdated' });
    const [operationsBefore, refusedBefore] = [await operations(), await refused()];
    // The streams of earlier tests are released once the server sees their clients leave.
    await eventually(async () => ((await running()) === 0 ? true : undefined), 10000, 'earlier streams to be released');
    const watcher = await subscribeOverSse(
      org.token,
      'subscription CountedOverSse { asyncWorkUpdated { id version } }',
      undefined,
      workProbe(t.stack.runtime.events, { organizationId: org.organization.id, accountIds: [org.accounts[0]!.account.id] }),
    );
    try {
      expect(await running()).toBe(1);
      expect(await operations()).toBe(operationsBefore + 1);
      expect((await refusal({ body: { query: 'subscription RefusedOverSse { asyncWorkUpdated { nope } }', operationName: 'RefusedOverSse' } })).status).toBe(400);
      expect(await refused()).toBe(refusedBefore + 1);
    } finally {
      watcher.close();
    }
    await eventually(async () => ((await running()) === 0 ? true : undefined), 10000, 'the stream to be released');
  });

  it('a stopping server ends its open streams without complete (clients reconnect elsewhere), and the stop is not held by them', async () => {
    const stopping = await startTestStack();
    try {
      const fixture = await createOrganizationFixture(stopping.em(), { accounts: 1, locationsEach: 1 });
      const streams = await Promise.all(
        ['subscription { postUpdated { id } }', 'subscription { asyncWorkUpdated { id } }'].map((query) => openRawStream(fixture.token, query, { baseUrl: stopping.url })),
      );
      for (const stream of streams) {
        expect(stream.response.status).toBe(200);
        await stream.until((text) => text.startsWith(':\n\n'), 'the stream to open');
      }
      await stopping.close();
      await Promise.all(streams.map((stream) => stream.ended));
      for (const stream of streams) expect(stream.text()).toBe(':\n\n');
    } catch (error) {
      await stopping.close().catch(() => undefined);
      throw error;
    }
  });
});
