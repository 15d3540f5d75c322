import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { graphql, http } from './support/http';
import { eventually, pollPost } from './support/posts';
import { runCli, startServerProcess, type ServerProcess } from './support/process';
import { createTestDatabase } from './support/stack';

/**
 * The demo as `npm start` makes it and `npm run cli -- demo` adds to it: the development entry as a process (its
 * provider sandboxes mounted, as a developer runs it), the CLI as a process, both on one database; everything read
 * through the API with the demo's tokens.
 */

const UP = /GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/;
const DEMO_TOKEN = /its token \(also in .*demo\.json\):\n\s+(lgo_\S+)/;

interface Demo {
  organization_id: string;
  token: string;
  accounts: { id: string; token: string; location_ids: string[] }[];
}

/** What a test started, undone after it whatever happened (a failed wait must not leave a server behind). */
const undo: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of undo.splice(0).reverse()) await step();
});

/** A fresh database, a data directory, and the development entry on them (not started yet). */
interface DevelopmentEnv {
  DATABASE_URL: string;
  DATA_DIR: string;
  NODE_ENV: string;
  PORT: string;
}

async function developmentServer(): Promise<{ env: DevelopmentEnv; start: () => ServerProcess }> {
  const database = await createTestDatabase();
  undo.push(() => database.drop());
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-demo-'));
  undo.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: DevelopmentEnv = { DATABASE_URL: database.url, DATA_DIR: dataDir, NODE_ENV: 'development', PORT: '0' };
  return {
    env,
    start: () => {
      const server = startServerProcess({ ...env });
      undo.push(async () => {
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
        await server.exited();
      });
      return server;
    },
  };
}

const get = (url: string, token: string, pathAndQuery: string) => http(url, 'GET', pathAndQuery, { token });

async function postStates(url: string, token: string, accountId: string): Promise<Record<string, any[]>> {
  const states: Record<string, any[]> = {};
  for (const state of ['SENDING', 'LIVE', 'PROCESSING', 'SCHEDULED', 'REJECTED', 'ERROR', 'DELETED']) {
    const page = await get(url, token, `/post?account_id=${accountId}&state=${state}&per_page=100`);
    expect(page.status).toBe(200);
    states[state] = page.body.payload.posts;
  }
  return states;
}

async function replyStates(url: string, token: string, accountId: string): Promise<(string | null)[]> {
  const locations = await get(url, token, `/location?account_id=${accountId}&include_fields=name`);
  const states: (string | null)[] = [];
  for (const { id } of locations.body.data as { id: string }[]) {
    const answer = await graphql(url, 'query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l, first: 100) { edges { node { reviewReplyState } } } }', {
      token,
      variables: { a: accountId, l: id },
    });
    states.push(...answer.body.data.reviews.edges.map((edge: { node: { reviewReplyState: string | null } }) => edge.node.reviewReplyState));
  }
  return states;
}

async function brandStatus(url: string, token: string): Promise<string | undefined> {
  const answer = await graphql(url, '{ betaBrands { betaSyncStatus syncError } }', { token });
  return answer.body.data.betaBrands[0]?.betaSyncStatus;
}

/** Until every account that is imported has ended its import; their statuses. */
async function importsEnded(url: string, token: string): Promise<string[]> {
  return eventually(async () => {
    const answer = await graphql(url, '{ accounts { syncStatus } }', { token });
    const statuses: string[] = answer.body.data.accounts.map((account: { syncStatus: string }) => account.syncStatus).filter((status: string) => status !== 'NONE');
    return statuses.length > 0 && statuses.every((status) => status === 'SUCCEEDED' || status === 'FAILED') ? statuses : undefined;
  }, 30000, 'the imports of the demo');
}

async function connectedFlags(url: string, demo: Demo): Promise<boolean[]> {
  const flags: boolean[] = [];
  for (const account of demo.accounts) {
    const locations = await get(url, demo.token, `/location?account_id=${account.id}&include_fields=connected`);
    flags.push(...locations.body.data.map((location: { connected: boolean }) => location.connected));
  }
  return flags;
}

describe('the demo', () => {
  it('is ready when the first start prints its banner: posts in every state, both update outcomes, every reply state, a completed scan, a synced brand; a post made at once goes LIVE', async () => {
    const { env, start } = await developmentServer();
    const server = start();
    const [, url] = await server.waitFor(UP, 90000);
    const [, token] = await server.waitFor(DEMO_TOKEN);
    const demo = JSON.parse(readFileSync(path.join(env.DATA_DIR, 'demo.json'), 'utf8')) as Demo;
    expect(demo.token).toBe(token);
    const [downtown, lakeside, alice] = demo.accounts;

    // Every location of the demo is at the provider, and every import has ended.
    const flags = await connectedFlags(url!, demo);
    expect(flags.length).toBeGreaterThanOrEqual(5);
    expect(flags.every(Boolean)).toBe(true);
    expect(await importsEnded(url!, token!)).toEqual(['SUCCEEDED']);

    // Posts in every state, none still on its way; the refused one says why.
    const posts = await postStates(url!, token!, downtown!.id);
    expect(posts.SENDING).toEqual([]);
    for (const state of ['LIVE', 'PROCESSING', 'SCHEDULED', 'REJECTED', 'ERROR', 'DELETED']) expect({ state, found: posts[state]!.length > 0 }).toEqual({ state, found: true });
    expect(posts.ERROR![0].last_error).toMatchObject({ status: 400, reason: 'INVALID_ARGUMENT', message: expect.any(String) });
    expect(posts.LIVE!.map((post) => post.source).sort()).toEqual(['app', 'external_api']);
    expect((await postStates(url!, token!, lakeside!.id)).LIVE).toHaveLength(1);

    // A location update that the provider took, and one it refused, with its reason.
    const updates = await get(url!, token!, `/location/updates?account_id=${downtown!.id}`);
    const byStatus = Object.fromEntries(updates.body.payload.updates.map((update: { status: string }) => [update.status, update]));
    expect(Object.keys(byStatus).sort()).toEqual(['FAILED', 'SUCCEEDED']);
    expect(byStatus.SUCCEEDED.error).toBeNull();
    expect(byStatus.FAILED.error).toMatchObject({ status: 400, reason: 'INVALID_ARGUMENT' });

    // Reviews unanswered, and replies active, pending and rejected.
    expect(new Set(await replyStates(url!, token!, alice!.id))).toEqual(new Set([null, 'ACTIVE', 'PENDING', 'REJECTED']));

    const scan = await get(url!, token!, `/competitor-scan?account_id=${downtown!.id}`);
    expect(scan.status).toBe(200);
    expect(scan.body.payload.status).toBe('completed');

    // The brand's company is linked by a beta consent, and the brand is at the provider.
    expect(await eventually(async () => ((await brandStatus(url!, token!)) === 'SYNCED' ? true : undefined), 30000, 'the brand to sync')).toBe(true);

    // A post made at once is accepted and goes live: the location is at the provider.
    const created = await http(url!, 'POST', `/post?account_id=${downtown!.id}`, {
      token,
      body: { location_id: downtown!.location_ids[0], params: { topicType: 'STANDARD', summary: 'Open on Sunday too.' } },
    });
    expect(created.status).toBe(202);
    const live = await pollPost(url!, token!, downtown!.id, created.body.payload.id);
    expect(live.state).toBe('LIVE');

    // `npm run cli -- demo` on this running server: its jobs run here at once, and the demo is prepared here.
    const cli = await runCli(['demo'], { DATABASE_URL: env.DATABASE_URL, DATA_DIR: env.DATA_DIR });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    const second = JSON.parse(cli.stdout) as Demo;
    expect(await importsEnded(url!, second.token)).toEqual(['SUCCEEDED']);
    await eventually(async () => ((await connectedFlags(url!, second)).every(Boolean) ? true : undefined), 30000, 'the CLI demo\'s locations');
    await eventually(async () => {
      const states = await postStates(url!, second.token, second.accounts[0]!.id);
      return ['LIVE', 'PROCESSING', 'SCHEDULED', 'REJECTED', 'ERROR', 'DELETED'].every((state) => states[state]!.length > 0) ? true : undefined;
    }, 30000, 'the CLI demo\'s posts');
    expect(await eventually(async () => ((await brandStatus(url!, second.token)) === 'SYNCED' ? true : undefined), 30000, 'the CLI demo\'s brand')).toBe(true);

    server.child.kill('SIGTERM');
    expect(await server.exited()).toBe(0);
  }, 180000);

  it('seeded by the CLI while no server runs, is brought to the provider and prepared by the next start', async () => {
    const { env, start } = await developmentServer();
    const cli = await runCli(['demo'], { DATABASE_URL: env.DATABASE_URL, DATA_DIR: env.DATA_DIR });
    expect(cli.code).toBe(0);
    const demo = JSON.parse(cli.stdout) as Demo;
    // No server runs: its jobs wait in the queue for one.
    const server = start();
    const [, url] = await server.waitFor(UP, 90000);
    expect(await importsEnded(url!, demo.token)).toEqual(['SUCCEEDED']);
    await eventually(async () => ((await connectedFlags(url!, demo)).every(Boolean) ? true : undefined), 30000, 'the demo\'s locations');
    await eventually(async () => ((await postStates(url!, demo.token, demo.accounts[0]!.id)).LIVE!.length > 0 ? true : undefined), 30000, 'the demo\'s posts');
    server.child.kill('SIGTERM');
    expect(await server.exited()).toBe(0);
  }, 180000);
});
