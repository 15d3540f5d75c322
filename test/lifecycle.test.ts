import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { startAlphaSandbox, type AlphaSandboxServer } from '../sandboxes/alpha/main';
import { startBetaSandbox, type BetaSandboxServer } from '../sandboxes/beta/main';
import { waitUntilConnected } from './support/locations';
import { http } from './support/http';
import { eventually, pollPost } from './support/posts';
import { errorLines, runCli, startServerProcess, type ServerProcess } from './support/process';
import { createTestDatabase } from './support/stack';

/**
 * Stopping `npm start` (the whole stack in one process) while posts are being created and published: nothing
 * accepted is lost, nothing is published twice, and a normal stop logs no error. The provider (the sandbox) runs
 * in this test's process, so it outlives the server's restarts and counts every publish.
 */
let database: { url: string; drop(): Promise<void> };
let dataDir: string;
let sandbox: AlphaSandboxServer;
/** Not called by these tests, but a process that runs the workers needs every provider its queues call. */
let betaSandbox: BetaSandboxServer;
let control: AlphaSandboxControl;
let demo: { organization_id: string; token: string; accounts: { id: string; location_ids: string[] }[] };
const servers: ServerProcess[] = [];

const UP = /GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/;

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), 'lg-lifecycle-'));
  sandbox = await startAlphaSandbox({ port: 0 });
  betaSandbox = await startBetaSandbox({ port: 0 });
  control = createAlphaSandboxControl(sandbox.url);
  demo = JSON.parse((await runCli(['demo'], { DATABASE_URL: database.url })).stdout);
});

afterAll(async () => {
  for (const server of servers) {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited();
    }
  }
  await sandbox?.close();
  await betaSandbox?.close();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startServer(extra: Record<string, string> = {}): Promise<{ server: ServerProcess; url: string }> {
  const server = startServerProcess({
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    PORT: '0',
    ALPHA_API_URL: sandbox.url,
    BETA_API_URL: betaSandbox.url,
    POST_RATE_LIMIT_PER_MINUTE: '100000',
    // A job whose process died is retried once it expires: short, so the test does not wait long.
    JOB_EXPIRE_SECONDS: '3',
    JOB_MAINTENANCE_SECONDS: '1',
    JOB_RETRY_DELAY_SECONDS: '1',
    ...extra,
  });
  servers.push(server);
  const [, url] = await server.waitFor(UP, 60000);
  // The demo's locations are created at the provider by the first start's workers.
  await waitUntilConnected(url!, demo.token, demo.accounts[0]!.id);
  return { server, url: url! };
}

/** pino lines at level error (50) or fatal (60), and anything that looks like a stack dump. */
function createPost(url: string, summary: string) {
  const account = demo.accounts[0]!;
  return http(url, 'POST', `/post?account_id=${account.id}`, {
    token: demo.token,
    body: { location_id: account.location_ids[0], params: { summary } },
  });
}

/**
 * The posts the load made (its summaries say so). The demo's own posts are left out: the server prepares them once
 * the demo's seed is done or a minute has passed, which on a loaded machine can fall within this test.
 */
async function loadPostIds(url: string): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1, seen = 0; ; page += 1) {
    const answer = await http(url, 'GET', `/post?account_id=${demo.accounts[0]!.id}&per_page=100&page=${page}`, { token: demo.token });
    const posts: { id: string; params: { summary?: string } }[] = answer.body.payload.posts;
    seen += posts.length;
    ids.push(...posts.filter((p) => p.params.summary?.startsWith('Under load ')).map((p) => p.id));
    if (seen >= answer.body.payload.found) return ids;
  }
}

describe('stopping under load', () => {
  it('SIGTERM while posts are created and published: a clean exit, and after the next start every accepted post is published once', async () => {
    await control.reset();
    // Publishes take a while, so some are in flight when the signal comes.
    await control.configure({ latencyMs: 150 });
    const { server, url } = await startServer();

    const accepted: string[] = [];
    const refusedStatuses = new Set<number>();
    let stopSent = false;
    const client = async (n: number) => {
      for (let i = 0; ; i += 1) {
        try {
          const answer = await createPost(url, `Under load ${n}.${i}`);
          if (answer.status === 202) accepted.push(answer.body.payload.id);
          else refusedStatuses.add(answer.status);
        } catch {
          // Connection refused or reset: the server has stopped listening.
          if (stopSent) return;
        }
        if (stopSent && server.child.exitCode !== null) return;
      }
    };
    const clients = [1, 2, 3, 4].map(client);
    // Stop once publishes are under way.
    await eventually(async () => ((await control.state()).calls.create >= 5 ? true : undefined), 30000, 'publishes in flight');
    stopSent = true;
    server.child.kill('SIGTERM');
    expect(await server.exited()).toBe(0);
    await Promise.all(clients);

    expect(accepted.length).toBeGreaterThanOrEqual(5);
    // Requests that arrived while the server drained were refused in the documented shape (503), not dropped.
    for (const status of refusedStatuses) expect(status).toBe(503);
    expect(errorLines(server.output())).toEqual([]);

    await control.configure({ latencyMs: 0 });
    const { server: again, url: url2 } = await startServer();
    for (const id of accepted) {
      const post = await pollPost(url2, demo.token, demo.accounts[0]!.id, id, (p) => p.state === 'LIVE', 60000);
      expect(post.post_id).toMatch(/localPosts/);
    }
    // Every post stored (the accepted ones, and any whose answer the client did not read) is published once.
    const stored = await loadPostIds(url2);
    expect(stored).toEqual(expect.arrayContaining(accepted));
    for (const id of stored) await pollPost(url2, demo.token, demo.accounts[0]!.id, id, (p) => p.state === 'LIVE', 60000);
    const state = await control.state();
    for (const id of stored) expect(state.posts.filter((p) => p.requestId === id)).toHaveLength(1);
    expect(state.posts.filter((p) => stored.includes(p.requestId ?? ''))).toHaveLength(stored.length);

    again.child.kill('SIGINT');
    expect(await again.exited()).toBe(0);
    expect(errorLines(again.output())).toEqual([]);
  }, 180000);

  it('a second signal stops at once, and the job it left running is retried after the next start', async () => {
    await control.reset();
    // A publish that takes long, and a stop that would wait for it.
    await control.configure({ latencyMs: 8000 });
    const { server, url } = await startServer({ JOB_STOP_TIMEOUT_SECONDS: '60' });
    const created = await createPost(url, 'Left running');
    expect(created.status).toBe(202);
    await eventually(async () => ((await control.state()).calls.create >= 1 ? true : undefined), 30000, 'the publish call');

    server.child.kill('SIGTERM');
    await server.waitFor(/stopping/);
    server.child.kill('SIGTERM');
    expect(await server.exited()).toBe(130);
    // At once: the held publish has not finished at the provider yet.
    expect((await control.state()).publishes).toBe(0);
    expect(server.output()).toContain('again: stopping at once');

    await control.configure({ latencyMs: 0 });
    const { server: again, url: url2 } = await startServer();
    const live = await pollPost(url2, demo.token, demo.accounts[0]!.id, created.body.payload.id, (p) => p.state === 'LIVE', 60000);
    expect(live.post_id).toMatch(/localPosts/);
    expect((await control.state()).posts.filter((p) => p.requestId === created.body.payload.id)).toHaveLength(1);
    again.child.kill('SIGTERM');
    expect(await again.exited()).toBe(0);
  }, 180000);

  it('a connection that never sent a request (a client’s spare one, a browser’s preconnect) does not hold the stop', async () => {
    await control.reset();
    const { server, url } = await startServer();
    const { port } = new URL(url);
    const spare = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => spare.once('connect', resolve));
    const closed = new Promise((resolve) => spare.once('close', resolve));
    server.child.kill('SIGTERM');
    // Node's own close keeps such a connection open for as long as the client does.
    expect(await server.exited()).toBe(0);
    await closed;
    expect(errorLines(server.output())).toEqual([]);
  }, 120000);
});
