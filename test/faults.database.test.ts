import { randomUUID } from 'node:crypto';
import { createClient } from 'graphql-ws';
import type { Client } from 'pg';
import WebSocket from 'ws';
import { captureLog, describeErrors, FaultLedger, openAdmin, requestErrors, WARN, type LogLine } from './support/faults';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually, pollPost, sandboxOf, TERMINAL } from './support/posts';
import { LostCommitReplies } from './support/pg-wire';
import { createTestDatabase, startTestStack, type TestStack } from './support/stack';
import { TcpProxy } from '../dev/tcp-proxy';
import { postProbe } from './support/ws';
import { minimalLocationBody } from './support/locations';

/**
 * The fault "PostgreSQL backends of the service terminated (pg_terminate_backend) during requests and during jobs"
 * (issue 15, Build 9), through HTTP as a client sees it. Every backend the service holds on its database is fair
 * game: the ORM's pool, pg-boss's, and the event bus's listening and publishing sessions; only the test's own
 * administrator sessions are spared. A request whose backend is lost answers the documented 503 (REST: `{error:
 * 503, message}` with Retry-After; GraphQL: SERVICE_UNAVAILABLE, HTTP 503 while building the context), never a 500
 * or internals; the service recovers by itself; every job ends; nothing is written twice.
 */

const log = captureLog();
/** Every request of the file, and those sent while the backends were being terminated again and again. */
const ledger = new FaultLedger();
const storm = new FaultLedger();
let t: TestStack;
let admin: Client;
let org: OrganizationFixture;
/** The account whose fixture locations take posts (connected at the provider). */
let postAccount: string;
let postLocations: string[];
/** The account whose locations were created through the API and connected by their publish jobs: they take updates. */
let updateAccount: string;
let updateLocations: string[];

const figures = {
  backendsTerminated: 0,
  byApplication: new Map<string, number>(),
  terminationRounds: 0,
  /** Job failures, lost completions and failed fetches the engine logged, by queue. */
  jobsHit: new Map<string, number>(),
  postsByKey: 0,
  unavailablePostsCommitted: 0,
  updateJobs: new Map<string, number>(),
  stuck: { posts: -1, updateJobs: -1, locations: -1, pgBossJobs: -1 },
  recovery: { sent: 0, succeeded: 0 },
  busSessions: '',
};

/** Backends of the service on its database: every session but the test's own (application_name lg-fault-*). */
const SERVICE_BACKENDS = `datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'
  and application_name not like 'lg-fault-%'`;

/** Terminates the service's backends (only those a test's locks block, with `blockedBy`); returns how many went. */
async function terminate(options: { blockedBy?: Locks } = {}): Promise<number> {
  const { rows } = await admin.query<{ app: string; done: boolean }>(
    `select application_name as app, pg_terminate_backend(pid) as done from pg_stat_activity
      where ${SERVICE_BACKENDS} ${options.blockedBy ? 'and $1::int = any(pg_blocking_pids(pid))' : ''}`,
    options.blockedBy ? [options.blockedBy.pid] : [],
  );
  let count = 0;
  for (const { app, done } of rows) {
    if (!done) continue;
    count += 1;
    const name = app || 'ORM pool';
    figures.byApplication.set(name, (figures.byApplication.get(name) ?? 0) + 1);
  }
  figures.backendsTerminated += count;
  return count;
}

/** A session of the test that holds locks until `release`: what stops a request or a job mid-statement. */
interface Locks {
  pid: number;
  release(): Promise<void>;
}

async function holdLocks(statements: { sql: string; values?: unknown[] }[]): Promise<Locks> {
  const locker = await openAdmin(t.databaseUrl, 'lg-fault-locker');
  const { rows } = await locker.query<{ pid: number }>('select pg_backend_pid() as pid');
  await locker.query('begin');
  for (const { sql, values } of statements) await locker.query(sql, values);
  return {
    pid: rows[0]!.pid,
    async release() {
      await locker.query('rollback');
      await locker.end();
    },
  };
}

/** Waits until `count` backends of the service wait for the locks (the requests or jobs a test has stopped). */
function blockedBy(locks: Locks, count: number, what: string): Promise<true> {
  return eventually(async () => {
    const { rows } = await admin.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where ${SERVICE_BACKENDS} and $1::int = any(pg_blocking_pids(pid))`,
      [locks.pid],
    );
    return rows[0]!.n >= count ? true : undefined;
  }, 30000, what);
}

const params = (summary: string) => ({ summary, topicType: 'STANDARD', languageCode: 'en' });

const CREATE_POST = `mutation ($accountId: ID, $key: String, $input: CreatePostInput!) {
  createPost(accountId: $accountId, idempotencyKey: $key, input: $input) { replayed post { id state } } }`;
const UPDATE_LOCATION = `mutation ($accountId: ID, $locationId: ID!, $input: UpdateLocationInput!) {
  updateLocation(accountId: $accountId, locationId: $locationId, input: $input) { id message job { id status } } }`;

function restPost(key: string, locationId: string, summary = `Fault post ${key}`) {
  return () =>
    http(t.url, 'POST', `/post?account_id=${postAccount}`, {
      token: org.token,
      body: { location_id: locationId, params: params(summary) },
      headers: { 'idempotency-key': key },
    });
}

function graphqlPost(key: string, locationId: string, summary = `Fault post ${key}`) {
  return () =>
    graphql(t.url, CREATE_POST, {
      token: org.token,
      variables: { accountId: postAccount, key, input: { locationId, params: params(summary) } },
    });
}

const restPatch = (locationId: string, description: string) => () =>
  http(t.url, 'PATCH', `/location/update?account_id=${updateAccount}&location_id=${locationId}`, { token: org.token, body: { description } });

const graphqlPatch = (locationId: string, description: string) => () =>
  graphql(t.url, UPDATE_LOCATION, { token: org.token, variables: { accountId: updateAccount, locationId, input: { description } } });

/** PATCH /location/update answers 409 in its own shape while another update of the location runs. */
const PATCH_EXPECTED = {
  success: [200],
  deserved: { 409: (body: any) => body?.success === false && typeof body.msg === 'string' },
};

/** The service's settings in this file. */
const SETTINGS = {
  LOG_LEVEL: 'info',
  // Every request looks its token up: the context is built on the database each time.
  TOKEN_CACHE_SECONDS: '0',
  // Quick retries, and jobs whose completion was lost are taken again soon.
  JOB_RETRY_DELAY_SECONDS: '1',
  JOB_EXPIRE_SECONDS: '10',
  JOB_MAINTENANCE_SECONDS: '2',
  POST_RATE_LIMIT_PER_MINUTE: '100000',
  LOCATION_CREATE_RATE_LIMIT_PER_MINUTE: '100000',
  LOCATION_READ_RATE_LIMIT_PER_MINUTE: '100000',
  LOCATION_UPDATE_RATE_LIMIT_PER_HOUR: '100000',
  BUSINESS_PROFILE_READ_RATE_LIMIT_PER_MINUTE: '100000',
  BUSINESS_PROFILE_UPDATE_RATE_LIMIT_PER_MINUTE: '100000',
};

beforeAll(async () => {
  t = await startTestStack(SETTINGS, { log: { destination: log.destination } });
  admin = await openAdmin(t.databaseUrl);
  await sandboxOf(t.url).configure({ locationEditsPerMinute: 1_000_000 });
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 3, connected: true, alphaAccounts: true });
  postAccount = org.accounts[0]!.account.id;
  postLocations = org.accounts[0]!.locations.map((location) => location.id);
  updateAccount = org.accounts[1]!.account.id;
  updateLocations = [];
  for (let n = 1; n <= 4; n += 1) {
    const created = await http(t.url, 'POST', `/location?account_id=${updateAccount}`, {
      token: org.token,
      body: minimalLocationBody({ name: `Fault Bakery ${n}`, reference_id: `fault-${n}`, category_id: 'gcid:bakery', phone_number: '+1 555 0100', description: 'Fresh bread' }),
    });
    expect(created.status).toBe(200);
    updateLocations.push(created.body.payload.location_id);
  }
  await eventually(async () => {
    const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from location where id = any($1) and connected`, [updateLocations]);
    return rows[0]!.n === updateLocations.length ? true : undefined;
  }, 30000, 'the new locations to be connected');
});

/**
 * The stop after the storms waits for running jobs (JOB_STOP_TIMEOUT_SECONDS), pg-boss and the pools whose backends were
 * terminated, then drops the database: on a loaded 2-core machine that passes jest's 60 s default for a hook.
 */
const STOP_AFTER_STORM_MS = 180_000;
/** The storm: 40 rounds of requests with cuts, then up to 120 s for every job to end, on a loaded 2-core machine. */
const STORM_MS = 420_000;
/** A test that waits up to 60 s for a post to go LIVE needs more than jest's 60 s default. */
const POLL_LIVE_MS = 120_000;

afterAll(async () => {
  const apps = [...figures.byApplication].map(([name, n]) => `${name} ${n}`).join(', ');
  const updates = [...figures.updateJobs].map(([status, n]) => `${status} ${n}`).join(', ');
  console.log(
    [
      'Fault figures: PostgreSQL backends terminated (test/faults.database.test.ts)',
      `  backends terminated: ${figures.backendsTerminated} (${apps}) in ${figures.terminationRounds} terminations`,
      `  under fault (the storm of terminations): ${storm.summary()}`,
      `  outside the storm (the targeted cuts, the recovery round, the replays): ${ledger.summary()}`,
      `  jobs hit (failures, lost completions and fetches the job engine logged), by queue: ${[...figures.jobsHit].map(([queue, n]) => `${queue} ${n}`).join(', ')}`,
      `  posts created by key: ${figures.postsByKey}, each once; 503s whose post had committed (the replay returned it): ${figures.unavailablePostsCommitted}`,
      `  update jobs: ${updates}`,
      `  recovery: ${figures.recovery.succeeded} of ${figures.recovery.sent} requests succeeded with no restart; event bus sessions afterwards: ${figures.busSessions}`,
      `  stuck records: posts ${figures.stuck.posts}, update jobs ${figures.stuck.updateJobs}, locations ${figures.stuck.locations}, pg-boss jobs ${figures.stuck.pgBossJobs}`,
      `  request log lines at error level: ${requestErrors(log.lines).length}`,
    ].join('\n'),
  );
  if (requestErrors(log.lines).length > 0) console.log(`Request errors logged:\n${describeErrors(log.lines)}`);
  await admin?.end();
  await t?.close();
}, STOP_AFTER_STORM_MS);

afterEach(() => {
  expect(ledger.problems).toEqual([]);
  expect(storm.problems).toEqual([]);
  expect(requestErrors(log.lines)).toEqual([]);
});

describe('a request whose backend is terminated mid-statement', () => {
  it('answers the documented 503 on REST and SERVICE_UNAVAILABLE on GraphQL, writes nothing, and succeeds when sent again', async () => {
    const [restLocation, graphqlLocation] = updateLocations;
    // The locations' row locks, held elsewhere: both updates wait for them inside their transactions.
    const locks = await holdLocks([{ sql: 'select id from location where id = any($1) for update', values: [[restLocation, graphqlLocation]] }]);
    const rest = ledger.rest('PATCH /location/update', restPatch(restLocation!, 'Cut mid-statement'), PATCH_EXPECTED);
    const overGraphQL = ledger.graphql('updateLocation', graphqlPatch(graphqlLocation!, 'Cut mid-statement'), { deserved: ['LOCATION_UPDATE_IN_PROGRESS'] });
    // The two updates are of one account: the one whose statement holds the account's rate-limit bucket waits for its
    // row, the other for that bucket (docs/write-path.md) until the first is gone, then for its own row.
    let terminated = 0;
    for (let round = 1; terminated < 2; round += 1) {
      await blockedBy(locks, 1, `an update to wait for the row locks (round ${round})`);
      terminated += await terminate({ blockedBy: locks });
      figures.terminationRounds += 1;
    }
    expect(terminated).toBe(2);
    expect((await rest).outcome).toBe('unavailable');
    expect((await overGraphQL).outcome).toBe('unavailable');
    expect((await overGraphQL).answer!.status).toBe(200);
    await locks.release();

    // Nothing of the cut requests stayed: no update job was made, so the next update of each is accepted.
    const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from location_update_job where location_id = any($1)`, [[restLocation, graphqlLocation]]);
    expect(rows[0]!.n).toBe(0);
    expect((await ledger.rest('PATCH /location/update', restPatch(restLocation!, 'Sent again'), PATCH_EXPECTED)).outcome).toBe('success');
    expect((await ledger.graphql('updateLocation', graphqlPatch(graphqlLocation!, 'Sent again'))).outcome).toBe('success');
  });

  it('answers 503 before the operation runs when the token lookup is cut: REST generic, GraphQL HTTP 503', async () => {
    // Every token lookup waits for this table lock: the context cannot be built.
    const locks = await holdLocks([{ sql: 'lock table api_token in access exclusive mode' }]);
    const rest = ledger.rest('GET /organization', () => http(t.url, 'GET', '/organization', { token: org.token }), { success: [200] });
    const restWrite = ledger.rest('POST /post', restPost(`context-${randomUUID()}`, postLocations[0]!), { success: [202] });
    const overGraphQL = ledger.graphql('organization', () => graphql(t.url, '{ organization { id } }', { token: org.token }));
    await blockedBy(locks, 3, 'three requests to wait for the token table');
    expect(await terminate({ blockedBy: locks })).toBe(3);
    figures.terminationRounds += 1;
    expect((await rest).outcome).toBe('unavailable');
    expect((await restWrite).outcome).toBe('unavailable');
    expect((await overGraphQL).outcome).toBe('unavailable');
    expect((await overGraphQL).answer!.status).toBe(503);
    await locks.release();
    expect((await ledger.rest('GET /organization', () => http(t.url, 'GET', '/organization', { token: org.token }), { success: [200] })).outcome).toBe('success');
  });

  it('a create cut inside its transaction commits nothing; its Idempotency-Key then makes it once, and replays return it', async () => {
    const restKey = `cut-${randomUUID()}`;
    const graphqlKey = `cut-${randomUUID()}`;
    // The create takes the advisory lock of its (account, key) in its one statement, before it counts the limits.
    const locks = await holdLocks(
      [restKey, graphqlKey].map((key) => ({ sql: 'select pg_advisory_lock(hashtext($1))', values: [`idempotency:${postAccount}:${key}`] })),
    );
    const rest = ledger.rest('POST /post', restPost(restKey, postLocations[0]!), { success: [202] });
    const overGraphQL = ledger.graphql('createPost', graphqlPost(graphqlKey, postLocations[1]!));
    await blockedBy(locks, 2, 'both creates to wait for their keys');
    expect(await terminate({ blockedBy: locks })).toBe(2);
    figures.terminationRounds += 1;
    expect((await rest).outcome).toBe('unavailable');
    expect((await overGraphQL).outcome).toBe('unavailable');
    await locks.release();

    const summaries = [`Fault post ${restKey}`, `Fault post ${graphqlKey}`];
    const stored = async () =>
      (await admin.query<{ id: string }>(`select id from post where params->>'summary' = any($1) order by id`, [summaries])).rows.map((row) => row.id);
    expect(await stored()).toEqual([]);
    const first = await ledger.rest('POST /post', restPost(restKey, postLocations[0]!), { success: [202] });
    const firstOverGraphQL = await ledger.graphql('createPost', graphqlPost(graphqlKey, postLocations[1]!));
    expect(first.answer!.headers.get('idempotent-replayed')).toBeNull();
    expect(firstOverGraphQL.answer!.body.data.createPost.replayed).toBe(false);
    const replay = await ledger.rest('POST /post', restPost(restKey, postLocations[0]!), { success: [202] });
    const replayOverGraphQL = await ledger.graphql('createPost', graphqlPost(graphqlKey, postLocations[1]!));
    expect(replay.answer!.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.answer!.body.payload.id).toBe(first.answer!.body.payload.id);
    expect(replayOverGraphQL.answer!.body.data.createPost).toEqual({ replayed: true, post: { id: firstOverGraphQL.answer!.body.data.createPost.post.id, state: expect.any(String) } });
    expect(await stored()).toEqual([first.answer!.body.payload.id, firstOverGraphQL.answer!.body.data.createPost.post.id].sort());
  });
});

describe('a create whose COMMIT reply is lost', () => {
  // A service of its own, whose database connections pass through a proxy that reads the protocol: it drops the
  // connection of the create's transaction right after the database committed it, before the service reads that.
  const lost = new LostCommitReplies();
  let proxy: TcpProxy | undefined;
  let database: { url: string; drop(): Promise<void> };
  let proxied: TestStack;
  let fixture: OrganizationFixture;

  beforeAll(async () => {
    database = await createTestDatabase();
    const direct = new URL(database.url);
    proxy = new TcpProxy({ host: direct.hostname, port: Number(direct.port) }, { inspect: lost.inspector });
    const through = new URL(database.url);
    through.host = `127.0.0.1:${await proxy.listen()}`;
    proxied = await startTestStack(SETTINGS, { log: { destination: log.destination }, sharedDatabaseUrl: through.toString() });
    fixture = await createOrganizationFixture(proxied.em(), { accounts: 1, locationsEach: 1, connected: true });
  });
  afterAll(async () => {
    await proxied?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('answers 503 although the post committed; the replay of its Idempotency-Key returns that post, once', async () => {
    const accountId = fixture.accounts[0]!.account.id;
    const key = `lost-commit-${randomUUID()}`;
    const create = () =>
      http(proxied.url, 'POST', `/post?account_id=${accountId}`, {
        token: fixture.token,
        body: { location_id: fixture.accounts[0]!.locations[0]!.id, params: params('Committed, its answer lost') },
        headers: { 'idempotency-key': key },
      });
    // The ORM's sessions carry no application_name (pg-boss's and the event bus's do).
    lost.arm((applicationName) => applicationName === '');
    const first = await ledger.rest('POST /post', create, { success: [202] });
    expect(first.outcome).toBe('unavailable');
    expect(lost.dropped).toBe(1);
    const stored = async () => {
      const sessions = await openAdmin(database.url);
      try {
        return (await sessions.query<{ id: string }>(`select id from post where params->>'summary' = 'Committed, its answer lost'`)).rows.map((row) => row.id);
      } finally {
        await sessions.end();
      }
    };
    const committed = await stored();
    expect(committed).toHaveLength(1);
    figures.unavailablePostsCommitted += 1;

    const replay = await ledger.rest('POST /post', create, { success: [202] });
    expect(replay.answer!.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.answer!.body.payload.id).toBe(committed[0]);
    expect(await stored()).toEqual(committed);
    // Its publish job was committed with it: the post goes LIVE.
    expect((await pollPost(proxied.url, fixture.token, accountId, committed[0]!, (post) => post.state === 'LIVE', 60000)).state).toBe('LIVE');
  }, POLL_LIVE_MS);
});

describe('a graphql-ws connection whose token lookup is terminated', () => {
  it('is closed 1013 Try Again Later, which the client retries, and its subscription then goes live', async () => {
    const locks = await holdLocks([{ sql: 'lock table api_token in access exclusive mode' }]);
    let lockGone!: () => void;
    const released = new Promise<void>((resolve) => (lockGone = resolve));
    const closes: number[] = [];
    const received: { postUpdated?: { id: string } }[] = [];
    const failures: unknown[] = [];
    const client = createClient({
      url: `${t.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${org.token}` },
      retryAttempts: 3,
      // A dashboard's client tries again after a while; this one, once the database is whole again.
      retryWait: () => released,
      on: { closed: (event) => void closes.push((event as { code: number }).code) },
    });
    const dispose = client.subscribe(
      { query: 'subscription ($l: ID) { postUpdated(locationId: $l) { id version } }', variables: { l: postLocations[0] } },
      { next: (result) => void received.push(result.data as never), error: (error) => void failures.push(error), complete: () => undefined },
    );
    try {
      await blockedBy(locks, 1, 'the connection_init token lookup to wait');
      expect(await terminate({ blockedBy: locks })).toBe(1);
      figures.terminationRounds += 1;
      await eventually(async () => (closes.length > 0 ? true : undefined), 30000, 'the socket to be closed');
      expect(closes).toEqual([1013]);
      await locks.release();
      lockGone();
      // Live again: an event published now reaches it (probes until one does: the subscription starts a moment after).
      const probe = postProbe(t.stack.runtime.events, { organizationId: org.organization.id, accountId: postAccount, locationId: postLocations[0]! });
      const sent = new Set<string>();
      await eventually(async () => {
        sent.add(await probe.send());
        return received.some((event) => sent.has(event.postUpdated?.id ?? '')) ? true : undefined;
      }, 30000, 'the retried subscription to receive an event');
      expect(failures).toEqual([]);
      expect(log.count((line) => line.msg === 'graphql-ws connection_init: a dependency is unavailable' && line.level === WARN)).toBe(1);
      expect(log.count((line) => line.msg === 'graphql-ws connection_init failed')).toBe(0);
    } finally {
      dispose();
      await client.dispose();
    }
  });
});

describe('a job whose backend is terminated mid-statement', () => {
  it('is retried, and its post ends LIVE', async () => {
    // A scheduled post: published now (SCHEDULED), then checked by a job at its time, which moves it to LIVE.
    const scheduledTime = new Date(Date.now() + 4000).toISOString();
    const created = await ledger.rest(
      'POST /post',
      () =>
        http(t.url, 'POST', `/post?account_id=${postAccount}`, {
          token: org.token,
          body: { location_id: postLocations[2], params: { ...params('Checked by a job that loses its backend'), scheduledTime } },
        }),
      { success: [202] },
    );
    const id = created.answer!.body.payload.id as string;
    await pollPost(t.url, org.token, postAccount, id, (post) => post.state !== 'SENDING');
    // The check job finds the post's row lock held: it waits inside its transaction, and its backend is cut there.
    const locks = await holdLocks([{ sql: 'select id from post where id = $1 for update', values: [id] }]);
    const stillScheduled = (await admin.query<{ state: string }>('select state from post where id = $1', [id])).rows[0]!.state;
    expect(stillScheduled).toBe('SCHEDULED');
    await blockedBy(locks, 1, 'the check job to wait for the post');
    expect(await terminate({ blockedBy: locks })).toBe(1);
    figures.terminationRounds += 1;
    await log.waitFor((line) => line.queue === 'post-check' && /job failed/.test(line.msg), 'the check job to fail');
    await locks.release();
    const live = await pollPost(t.url, org.token, postAccount, id, (post) => post.state === 'LIVE', 60000);
    expect(live.state).toBe('LIVE');
  }, POLL_LIVE_MS);
});

describe('every backend terminated again and again under a steady mix of requests and jobs', () => {
  const ROUNDS = 40;
  /** Storm posts by Idempotency-Key: how each was sent, and the post ids its successful answers named. */
  const keys = new Map<string, { send: () => Promise<{ outcome: string; answer?: { body: any; headers: Headers } }>; ids: Set<string>; unavailable: boolean }>();
  const createdIds: string[] = [];

  type Send = () => Promise<{ outcome: string }>;

  function stormPost(round: number, overGraphQL: boolean, book: FaultLedger): Send {
    const key = `storm-${round}-${overGraphQL ? 'gql' : 'rest'}-${randomUUID()}`;
    const locationId = postLocations[round % postLocations.length]!;
    const sendWith = (to: FaultLedger) =>
      overGraphQL ? to.graphql('createPost', graphqlPost(key, locationId)) : to.rest('POST /post', restPost(key, locationId), { success: [202] });
    const entry = { send: () => sendWith(ledger), ids: new Set<string>(), unavailable: false };
    keys.set(key, entry);
    return async () => {
      const { outcome, answer } = await sendWith(book);
      if (outcome === 'success') {
        const id = overGraphQL ? answer!.body.data.createPost.post.id : answer!.body.payload.id;
        entry.ids.add(id);
        createdIds.push(id);
      }
      if (outcome === 'unavailable') entry.unavailable = true;
      return { outcome };
    };
  }

  /** One round's requests: writes and reads over both transports. */
  function mix(round: number, book: FaultLedger): Send[] {
    const location = updateLocations[round % updateLocations.length]!;
    const otherLocation = updateLocations[(round + 2) % updateLocations.length]!;
    const somePost = createdIds[round % Math.max(1, createdIds.length)];
    return [
      stormPost(round, false, book),
      stormPost(round, true, book),
      () => book.rest('PATCH /location/update', restPatch(location, `Storm ${round}`), PATCH_EXPECTED),
      () => book.graphql('updateLocation', graphqlPatch(otherLocation, `Storm ${round} over GraphQL`), { deserved: ['LOCATION_UPDATE_IN_PROGRESS'] }),
      () => book.rest('GET /post', () => http(t.url, 'GET', `/post?account_id=${postAccount}&per_page=20`, { token: org.token }), { success: [200] }),
      () =>
        somePost
          ? book.rest('GET /post/{id}', () => http(t.url, 'GET', `/post/${somePost}?account_id=${postAccount}`, { token: org.token }), { success: [200] })
          : Promise.resolve({ outcome: 'success' }),
      () => book.rest('GET /location', () => http(t.url, 'GET', `/location?account_id=${updateAccount}&per_page=50`, { token: org.token }), { success: [200] }),
      () => book.rest('GET /location/updates', () => http(t.url, 'GET', `/location/updates?account_id=${updateAccount}`, { token: org.token }), { success: [200] }),
      () => book.rest('GET /organization', () => http(t.url, 'GET', '/organization', { token: org.token }), { success: [200] }),
      () =>
        book.rest(
          'PATCH /business-profile',
          () => http(t.url, 'PATCH', `/business-profile?account_id=${postAccount}`, { token: org.token, body: { name: `Posting account ${round}` } }),
          { success: [200] },
        ),
      () =>
        book.graphql('reads', () =>
          graphql(
            t.url,
            `query ($posts: ID, $locations: ID) { organization { id accounts { id name } }
              postsPage(accountId: $posts, perPage: 5) { found posts { id state } }
              locationsPage(accountId: $locations, perPage: 5) { found locations { id name } } }`,
            { token: org.token, variables: { posts: postAccount, locations: updateAccount } },
          ),
        ),
    ];
  }

  it('answers only successes, deserved 4xx and the documented 503; recovers with no restart; every job ends; nothing is written twice', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const requests = mix(round, storm).map((send) => send());
      // Cut while the round's requests are in flight: once as they start (connections being taken, tokens looked
      // up) every other round, and once after the first of them answered (the others mid-way).
      if (round % 2 === 0) await terminate();
      await Promise.race(requests);
      await terminate();
      figures.terminationRounds += round % 2 === 0 ? 2 : 1;
      await Promise.all(requests);
    }
    expect(storm.sent).toBeGreaterThan(ROUNDS * 10);
    const unavailable = [...storm.outcomes].filter(([key]) => /503|SERVICE_UNAVAILABLE/.test(key)).reduce((sum, [, n]) => sum + n, 0);
    expect(unavailable).toBeGreaterThan(0);

    // No more faults. The same mix succeeds at once, with no restart.
    const recovery = await Promise.all(mix(ROUNDS, ledger).map((send) => send()));
    figures.recovery.sent = recovery.length;
    // A 409 (another update of the location still running) is what the request deserves: not a fault.
    figures.recovery.succeeded = recovery.filter(({ outcome }) => outcome !== 'unavailable').length;
    expect(recovery.map(({ outcome }) => outcome)).not.toContain('unavailable');
    expect(ledger.problems).toEqual([]);

    // Every key that never got its success is sent again, and every key once more: the post of each key exists
    // exactly once, and every answer for a key names that one post.
    for (const [key, entry] of keys) {
      const { outcome, answer } = await entry.send();
      expect([key, outcome]).toEqual([key, 'success']);
      const body = answer!.body;
      const id = body.payload?.id ?? body.data.createPost.post.id;
      const replayed = answer!.headers.get('idempotent-replayed') === 'true' || body.data?.createPost.replayed === true;
      if (entry.ids.size === 0 && entry.unavailable && replayed) figures.unavailablePostsCommitted += 1;
      entry.ids.add(id);
      expect([key, entry.ids.size]).toEqual([key, 1]);
    }
    const { rows: perKey } = await admin.query<{ summary: string; n: number }>(
      `select params->>'summary' as summary, count(*)::int as n from post where account_id = $1 and params->>'summary' like 'Fault post storm-%' group by 1`,
      [postAccount],
    );
    expect(perKey.length).toBe(keys.size);
    expect(perKey.filter((row) => row.n !== 1)).toEqual([]);
    figures.postsByKey = perKey.length;

    // Every record reaches a terminal state, and pg-boss holds no job that is not finished.
    // One client, one query at a time (node-postgres deprecates queueing them on it).
    const stuck = async () => {
      const count = async (sql: string, values: unknown[] = []) => (await admin.query<{ n: number }>(sql, values)).rows[0]!.n;
      return {
        posts: await count(`select count(*)::int as n from post where state not in (${TERMINAL.map((s) => `'${s}'`).join(',')})`),
        updateJobs: await count(`select count(*)::int as n from location_update_job where status not in ('SUCCEEDED', 'FAILED')`),
        locations: await count(`select count(*)::int as n from location where account_id = $1 and not connected`, [updateAccount]),
        pgBossJobs: await count(`select count(*)::int as n from pgboss.job where state in ('created', 'retry', 'active')`),
      };
    };
    await eventually(async () => {
      const now = await stuck();
      return Object.values(now).every((n) => n === 0) ? true : undefined;
    }, 120000, 'every record and job to end').catch(async (error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(await stuck())}`);
    });
    figures.stuck = await stuck();
    // The event bus is back with one session of each kind (its reconnection never runs twice at once).
    await eventually(async () => {
      const { rows } = await admin.query<{ app: string; n: number }>(
        `select application_name as app, count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'lg-events-%' group by 1`,
      );
      const listen = rows.find((row) => row.app === 'lg-events-listen')?.n ?? 0;
      const publish = rows.find((row) => row.app === 'lg-events-publish')?.n ?? 0;
      figures.busSessions = `listen ${listen}, publish ${publish}`;
      return listen === 1 && publish <= 1 ? true : undefined;
    }, 30000, 'one listening event session').catch((error: Error) => {
      throw new Error(`${error.message}: ${figures.busSessions}`);
    });
    const { rows: statuses } = await admin.query<{ status: string; n: number }>(`select status, count(*)::int as n from location_update_job group by 1 order by 1`);
    for (const { status, n } of statuses) figures.updateJobs.set(status, n);
    const postStates = (await admin.query<{ state: string }>(`select distinct state from post where account_id = $1`, [postAccount])).rows.map((row) => row.state);
    expect(postStates.every((state) => ['LIVE', 'SCHEDULED', 'ERROR'].includes(state))).toBe(true);

    // The jobs met the faults too: what the engine logged of it (a lost connection in a job is an error of ours: logged with its stack).
    for (const line of log.lines.filter((line: LogLine) => line.level >= WARN && /job failed|could not (complete|fail|record)|fetching jobs failed|settling/.test(line.msg))) {
      figures.jobsHit.set(line.queue ?? '?', (figures.jobsHit.get(line.queue ?? '?') ?? 0) + 1);
    }
    expect(requestErrors(log.lines)).toEqual([]);
    expect(storm.serverErrors.get(500) ?? 0).toBe(0);
    expect(ledger.serverErrors.get(500) ?? 0).toBe(0);
  }, STORM_MS);
});
