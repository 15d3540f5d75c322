import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { graphql, http } from './support/http';
import { waitUntilConnected } from './support/locations';
import { pollPost, sandboxOf, eventually } from './support/posts';
import { runCli, startServerProcess, type ServerProcess } from './support/process';
import { createTestDatabase } from './support/stack';
import pino from 'pino';
import { createPostgresEventBus, type EventBus } from '../src/events/event-bus';
import { postProbe, subscribe } from './support/ws';

/**
 * The deployment shape: an API process (ROLE=api) and a separate worker process (ROLE=worker), both started as
 * `npm start` starts them, sharing one database. Events cross between them through PostgreSQL.
 */
let database: { url: string; drop(): Promise<void> };
let dataDir: string;
let api: ServerProcess;
let apiUrl: string;
let demo: { organization_id: string; token: string; accounts: { id: string; token: string; location_ids: string[] }[] };
/** The test's own connection to the deployment's event bus, for probes. */
let events: EventBus;
const workers: ServerProcess[] = [];
let demoPrepared = false;

const common = () => ({
  DATABASE_URL: database.url,
  DATA_DIR: dataDir,
  POST_RATE_LIMIT_PER_MINUTE: '1000',
  // A job whose worker died is retried once it expires: short, so the crash test finishes quickly.
  JOB_EXPIRE_SECONDS: '2',
  JOB_MAINTENANCE_SECONDS: '1',
  JOB_RETRY_DELAY_SECONDS: '1',
  // Principals stay cached for the whole file: only a revocation event can end one early.
  TOKEN_CACHE_SECONDS: '3600',
});

async function startWorker(): Promise<ServerProcess> {
  const worker = startServerProcess({
    ...common(),
    ROLE: 'worker',
    ALPHA_API_URL: `${apiUrl}/sandbox/alpha`,
    BETA_API_URL: `${apiUrl}/sandbox/beta`,
  });
  workers.push(worker);
  await worker.waitFor(/worker is up/, 60000);
  // The demo's locations are created at the provider by the first worker, which then makes the demo's posts
  // (src/demo/demo.prepare.ts): the tests count the provider's posts and events, so they start after it.
  await waitUntilConnected(apiUrl, demo.token, demo.accounts[0]!.id);
  if (!demoPrepared) {
    await eventually(demoSettled, 90000, 'the demo\'s posts');
    demoPrepared = true;
  }
  return worker;
}

/**
 * The demo's posts are made (its last one deleted) and none of its work is running or still to run, but the check of
 * its scheduled post, which waits for the post's time.
 */
async function demoSettled(): Promise<true | undefined> {
  const deleted = await http(apiUrl, 'GET', `/post?account_id=${demo.accounts[0]!.id}&state=DELETED`, { token: demo.token });
  const counts = await graphql(apiUrl, '{ asyncWorkCounts { kind status } }', { token: demo.token });
  const open = (counts.body.data.asyncWorkCounts as { kind: string; status: string }[]).filter(
    (row) => ['RUNNING', 'RETRYING'].includes(row.status) || (row.status === 'QUEUED' && row.kind !== 'POST_CHECK'),
  );
  return deleted.body.payload.posts.length > 0 && open.length === 0 ? true : undefined;
}

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), 'lg-processes-'));
  demo = JSON.parse((await runCli(['demo'], { DATABASE_URL: database.url })).stdout);
  events = await createPostgresEventBus(database.url, pino({ level: 'silent' }));
  // The API process mounts the sandboxes the workers call.
  api = startServerProcess({ ...common(), ROLE: 'api', PORT: '0', SANDBOX: 'on' });
  [, apiUrl] = (await api.waitFor(/GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/, 60000)) as unknown as [string, string];
});

afterAll(async () => {
  await events?.close();
  for (const child of [api, ...workers]) {
    if (child && child.child.exitCode === null) {
      child.child.kill('SIGTERM');
      await child.exited();
    }
  }
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

function createPost(summary: string) {
  const account = demo.accounts[0]!;
  return http(apiUrl, 'POST', `/post?account_id=${account.id}`, {
    token: demo.token,
    body: { location_id: account.location_ids[0], params: { summary } },
  });
}

describe('an API process and a worker process', () => {
  it('publishes in the worker, and the worker’s changes reach subscribers of the API process', async () => {
    const worker = await startWorker();
    const account = demo.accounts[0]!;
    const probe = postProbe(events, { organizationId: demo.organization_id, accountId: account.id, locationId: account.location_ids[0]! });
    const watcher = await subscribe(apiUrl, demo.token, 'subscription { postUpdated { id state version } }', undefined, probe);
    try {
      const created = await createPost('Across processes');
      expect(created.status).toBe(202);
      // The demo's own posts may be on their way too (its preparation runs in the worker): this post's events only.
      const ours = () => watcher.events.map((e) => e.postUpdated).filter((post) => post.id === created.body.payload.id);
      const received = await eventually(async () => (ours().length >= 2 ? ours() : undefined), 20000, 'the post\'s two events');
      expect(received).toEqual([
        { id: created.body.payload.id, state: 'SENDING', version: 1 },
        { id: created.body.payload.id, state: 'LIVE', version: 2 },
      ]);
    } finally {
      await watcher.close();
      worker.child.kill('SIGTERM');
      expect(await worker.exited()).toBe(0);
    }
  });

  it('survives a worker killed while a publish is in flight: a restarted worker finishes it, published exactly once', async () => {
    const sandbox = sandboxOf(apiUrl);
    await sandbox.reset();
    // The provider takes its time: the worker is killed while waiting for the answer.
    await sandbox.configure({ latencyMs: 3000 });
    const first = await startWorker();
    const created = await createPost('Crash-proof');
    const id = created.body.payload.id;
    await eventually(async () => ((await sandbox.state()).calls.create >= 1 ? true : undefined), 20000, 'the create call');
    first.child.kill('SIGKILL');
    await first.exited();
    const stranded = await http(apiUrl, 'GET', `/post/${id}?account_id=${demo.accounts[0]!.id}`, { token: demo.token });
    expect(stranded.body.payload.state).toBe('SENDING');

    await sandbox.configure({ latencyMs: 0 });
    const second = await startWorker();
    const live = await pollPost(apiUrl, demo.token, demo.accounts[0]!.id, id, (p) => p.state === 'LIVE', 60000);
    expect(live.post_id).toMatch(/localPosts/);
    const state = await sandbox.state();
    expect(state.calls.create).toBeGreaterThanOrEqual(2);
    expect(state.posts.filter((p) => p.requestId === id)).toHaveLength(1);
    expect(state.publishes).toBe(1);
    second.child.kill('SIGTERM');
    expect(await second.exited()).toBe(0);
  }, 120000);
});

describe('two API processes', () => {
  it('honour a revocation made in the other at once, though both had the token cached', async () => {
    const second = startServerProcess({ ...common(), ROLE: 'api', PORT: '0' });
    workers.push(second);
    const [, secondUrl] = (await second.waitFor(/GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/, 60000)) as unknown as [string, string];
    const account = demo.accounts[0]!;
    const created = await http(apiUrl, 'POST', '/graphql', {
      token: demo.token,
      body: { query: 'mutation($a: ID!) { createAccountToken(accountId: $a) { token apiToken { id } } }', variables: { a: account.id } },
    });
    const { token, apiToken } = created.body.data.createAccountToken as { token: string; apiToken: { id: string } };
    // Both processes look the token up once and keep its principal.
    for (const url of [apiUrl, secondUrl]) expect((await http(url, 'GET', '/post', { token })).status).toBe(200);

    const revoked = await http(apiUrl, 'POST', '/graphql', {
      token: demo.token,
      body: { query: 'mutation($id: ID!) { revokeApiToken(id: $id) { revokedAt } }', variables: { id: apiToken.id } },
    });
    expect(revoked.body.data.revokeApiToken.revokedAt).toEqual(expect.any(String));
    // The revoking process: at once. The other: as soon as the event arrives, long before its cache would expire.
    expect((await http(apiUrl, 'GET', '/post', { token })).status).toBe(401);
    await eventually(async () => ((await http(secondUrl, 'GET', '/post', { token })).status === 401 ? true : undefined), 10000, 'the revocation in the other process');
    // A token still valid is still served by both.
    for (const url of [apiUrl, secondUrl]) expect((await http(url, 'GET', '/post', { token: account.token })).status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exited()).toBe(0);
  }, 120000);
});
