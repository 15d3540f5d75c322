import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PROVIDER_QUEUES, type ProviderQueueName } from './support/queues';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { createBetaSandboxControl, type BetaSandboxControl } from '../sandboxes/beta/beta-sandbox.control';
import { connect, runConsent } from './support/consent';
import { betaConsent, jobFigures, query, stuckRecords, until } from './support/job-faults';
import { graphql, http } from './support/http';
import { runCli, startServerProcess, type ServerProcess } from './support/process';
import { createTestDatabase } from './support/stack';

/**
 * kill -9 of a worker while each queue's job is at the provider. The deployment shape: an API process (ROLE=api,
 * which mounts the sandboxes) and a worker process (ROLE=worker), as `npm start` starts them. Each queue's job is
 * held at the provider (a scripted delay aimed at its record's call), the worker is killed with SIGKILL once the
 * sandbox holds all ten calls, and a new worker is started: every job is taken again once it expires and ends, its
 * record in its documented success, and the provider holds each result once.
 *
 * The held calls are not lost with the worker: the provider goes on and does the work when their delay ends (the
 * worker only stopped waiting), usually after the new worker's retry here, and the test waits for them to land
 * before counting. So every retried call meets work the held one did or will do: creates carry our id as requestId and answer the first result (a post, a location, a brand); a
 * delete finds the post gone (404 is done); an update sends the same fields again and a reply the same text (an
 * idempotent replace: the provider counts a second edit, or restarts the reply's moderation, and holds one result);
 * an import, a scan and the checks only read, and read again.
 */

/** A job whose worker died is taken again this long after it started. */
const EXPIRE_SECONDS = 20;
/** The provider holds each call longer than that, so the retry usually runs before the held call's work lands. */
const HOLD_MS = 30_000;

let database: { url: string; drop(): Promise<void> };
let dataDir: string;
let api: ServerProcess;
let apiUrl: string;
const workers: ServerProcess[] = [];
let alpha: AlphaSandboxControl;
let beta: BetaSandboxControl;
let org: { organization_id: string; token: string };


const common = () => ({
  DATABASE_URL: database.url,
  // One data directory: the API and the worker share the key that seals the providers' tokens.
  DATA_DIR: dataDir,
  JOB_EXPIRE_SECONDS: String(EXPIRE_SECONDS),
  JOB_MAINTENANCE_SECONDS: '1',
  JOB_RETRY_DELAY_SECONDS: '1',
  // A held call must still be in flight when the worker is killed.
  PROVIDER_TIMEOUT_SECONDS: '60',
  POST_RATE_LIMIT_PER_MINUTE: '1000',
});

async function startWorker(): Promise<ServerProcess> {
  const worker = startServerProcess({
    ...common(),
    ROLE: 'worker',
    ALPHA_API_URL: `${apiUrl}/sandbox/alpha`,
    BETA_API_URL: `${apiUrl}/sandbox/beta`,
  });
  workers.push(worker);
  await worker.waitFor(/worker is up/, 60_000);
  return worker;
}

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), 'lg-kill-'));
  const created = await runCli(['org', 'create', '--name', 'Kill Org', '--beta-api'], { DATABASE_URL: database.url });
  org = JSON.parse(created.stdout);
  api = startServerProcess({ ...common(), ROLE: 'api', PORT: '0', SANDBOX: 'on' });
  [, apiUrl] = (await api.waitFor(/GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/, 60_000)) as unknown as [string, string];
  alpha = createAlphaSandboxControl(`${apiUrl}/sandbox/alpha`);
  beta = createBetaSandboxControl(`${apiUrl}/sandbox/beta`);
}, 120_000);

afterAll(async () => {
  for (const child of [api, ...workers]) {
    if (child && child.child.exitCode === null && child.child.signalCode === null) {
      child.child.kill('SIGKILL');
      await child.exited();
    }
  }
  await database?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function data<T = any>(text: string, variables: Record<string, unknown>): Promise<T> {
  const answer = await graphql(apiUrl, text, { token: org.token, variables });
  if (answer.body.errors) throw new Error(`${text}: ${JSON.stringify(answer.body.errors)}`);
  return answer.body.data as T;
}

/** A location of the provider's, in its shape. */
function providerLocation(title: string, storeCode: string, latitude = 52.53): Record<string, unknown> {
  return {
    title,
    storeCode,
    categories: { primaryCategory: { name: 'gcid:coffee_shop' } },
    storefrontAddress: { regionCode: 'DE', locality: 'Berlin', addressLines: ['1 Kastanienallee'] },
    latlng: { latitude, longitude: 13.41 },
  };
}

async function connectAccount(sub: string, alphaAccountId: string): Promise<string> {
  const consent = await runConsent(apiUrl, org.token, { person: sub, state: `kill-${sub}` });
  const connected = await connect(apiUrl, org.token, consent.landed, alphaAccountId);
  const url = new URL(connected.body.url);
  if (url.searchParams.get('status') !== 'success') throw new Error(`connect failed: ${connected.body.url}`);
  return url.searchParams.get('alpha_profile_id')!;
}

const accountOf = async (id: string) => (await data('query ($id: ID) { account(id: $id) { syncStatus syncError syncProgress { locations reviews } } }', { id })).account;

/** The record each queue's job works on, and how to read its state as a client does. */
interface Held {
  queue: ProviderQueueName;
  /** The record's id here (the key of its job's payload). */
  id: string;
  state(): Promise<string>;
  success: string;
}

describe('a worker killed (SIGKILL) while every queue’s job is at the provider', () => {
  it('after a new worker starts, each job ends, its record succeeds, and the provider holds each result once', async () => {
    const first = await startWorker();

    // An account of the provider's with a location per queue and two reviews, connected and imported.
    await alpha.addIdentity({
      sub: 'kill-kim',
      email: 'kim@kill.example',
      name: 'Kim Kill',
      accounts: [{
        accountId: 'kill-kim',
        accountName: 'Kim Coffee',
        locations: ['pub', 'chk', 'del', 'upd', 'scan'].map((code, index) => ({
          locationId: `kill-${code}`,
          location: providerLocation(`Kim ${code}`, `kill-${code}`, 52.53 + index / 100),
          reviews: code === 'pub' ? [
            { reviewId: 'kill-send', starRating: 'FIVE' as const, reviewer: { displayName: 'Ann' }, comment: 'Great' },
            { reviewId: 'kill-check', starRating: 'FOUR' as const, reviewer: { displayName: 'Ben' }, comment: 'Good' },
          ] : [],
        })),
      }],
    });
    await alpha.addIdentity({
      sub: 'kill-lee',
      email: 'lee@kill.example',
      name: 'Lee Kill',
      accounts: [{
        accountId: 'kill-lee',
        accountName: 'Lee Bakes',
        locations: [{ locationId: 'kill-lee-1', location: providerLocation('Lee Bakes', 'lee-1'), reviews: [{ starRating: 'THREE', reviewer: { displayName: 'Cy' }, comment: 'Fine' }] }],
      }],
    });
    const kim = await connectAccount('kill-kim', 'kill-kim');
    expect((await until(async () => {
      const account = await accountOf(kim);
      return account.syncStatus === 'SUCCEEDED' || account.syncStatus === 'FAILED' ? account : undefined;
    }, 'the import of kill-kim')).syncStatus).toBe('SUCCEEDED');
    const listed = await http(apiUrl, 'GET', `/location?account_id=${kim}&per_page=50`, { token: org.token });
    const locationOf = (code: string) => listed.body.data.find((location: { reference_id: string }) => location.reference_id === `kill-${code}`).id as string;
    await betaConsent(apiUrl, org.token, 'company-1001');

    // What some jobs need first: a live post to delete.
    const createPost = async (code: string, summary: string) => {
      const created = await http(apiUrl, 'POST', `/post?account_id=${kim}`, { token: org.token, body: { location_id: locationOf(code), params: { summary } } });
      expect(created.status).toBe(202);
      return created.body.payload.id as string;
    };
    const postState = async (id: string) => (await data('query ($a: ID, $id: ID!) { post(accountId: $a, id: $id) { state } }', { a: kim, id })).post.state as string;
    const toDelete = await createPost('del', 'To be deleted');
    await until(async () => ((await postState(toDelete)) === 'LIVE' ? true : undefined), 'the post to delete to be LIVE');

    // Each queue's call is held at the provider: one rule per record's call, each used once.
    const hold = (provider: 'alpha' | 'beta', aim: { method: string; pathContains: string }) =>
      (provider === 'alpha' ? alpha : beta).fail({ count: 1, delayMs: HOLD_MS, ...aim });
    await hold('alpha', { method: 'POST', pathContains: '/locations/kill-pub/localPosts' });
    await hold('alpha', { method: 'GET', pathContains: '/locations/kill-chk/localPosts/' });
    await hold('alpha', { method: 'DELETE', pathContains: '/locations/kill-del/localPosts/' });
    await hold('alpha', { method: 'POST', pathContains: '/accounts/kill-kim/locations?requestId=' });
    await hold('alpha', { method: 'PATCH', pathContains: '/locations/kill-upd?updateMask=' });
    await hold('alpha', { method: 'GET', pathContains: '/accounts/kill-lee/locations?pageSize=100' });
    await hold('alpha', { method: 'PUT', pathContains: '/reviews/kill-send/reply' });
    await hold('alpha', { method: 'POST', pathContains: 'places:searchText' });
    await hold('beta', { method: 'POST', pathContains: '/orgs/company-1001/brands' });
    // A post that stays PROCESSING a while, so its check job reads it; a reply moderated a while, so checks follow it.
    await alpha.configure({ processingMs: 5_000, moderationMs: 5_000 });

    const held: Held[] = [];
    const postHeld = (queue: ProviderQueueName, id: string, success: string): Held => ({ queue, id, success, state: () => postState(id) });
    const reviewHeld = (queue: ProviderQueueName, name: string): Held => ({
      queue,
      id: '',
      success: 'ACTIVE',
      state: async () => (await data('query ($a: ID, $id: ID!) { review(accountId: $a, id: $id) { reviewReplyState } }', { a: kim, id: name })).review.reviewReplyState,
    });
    const reviewName = (id: string) => `accounts/kill-kim/locations/kill-pub/reviews/${id}`;
    const answer = async (id: string, text: string) => {
      const answered = await http(apiUrl, 'POST', `/review/answer?account_id=${kim}`, { token: org.token, body: { review_id: reviewName(id), answer: text } });
      expect(answered.status).toBe(200);
      return (await data('query ($a: ID, $id: ID!) { review(accountId: $a, id: $id) { id } }', { a: kim, id: reviewName(id) })).review.id as string;
    };

    // First the two jobs that follow another job of a queue that is held next (a worker takes a queue's next batch
    // once its current one is done): a post published, whose check reads it; a reply sent, whose checks follow it.
    const checked = await createPost('chk', 'Held check');
    held.push(postHeld('post-check', checked, 'LIVE'));
    await until(async () => ((await postState(checked)) === 'PROCESSING' ? true : undefined), 'the post to check to be PROCESSING');
    const moderated = await answer('kill-check', 'Thank you, Ben');
    held.push({ ...reviewHeld('review-reply-check', reviewName('kill-check')), id: moderated });
    await until(async () => {
      const remote = (await alpha.state()).reviews.find((review) => review.name === reviewName('kill-check'));
      return remote?.reviewReply?.state === 'PENDING' ? true : undefined;
    }, 'the reply to check to be sent');
    // Under moderation, followed by checks: the next check's read is held.
    await hold('alpha', { method: 'GET', pathContains: '/reviews/kill-check' });

    await Promise.all([
      createPost('pub', 'Held publish').then((id) => held.push(postHeld('post-publish', id, 'LIVE'))),
      http(apiUrl, 'DELETE', `/post/${toDelete}?account_id=${kim}`, { token: org.token }).then((deleted) => {
        expect(deleted.status).toBe(202);
        held.push(postHeld('post-delete', toDelete, 'DELETED'));
      }),
      http(apiUrl, 'POST', `/location?account_id=${kim}`, {
        token: org.token,
        body: { name: 'Held create', category_id: 'gcid:bakery', country_code: 'DE', address: '3 Main Street', city: 'Berlin', postal: '10115' },
      }).then((created) => {
        expect(created.status).toBe(200);
        const id = created.body.payload.location_id as string;
        held.push({
          queue: 'location-publish', id, success: 'connected',
          state: async () => ((await data('query ($a: ID, $id: ID!) { location(accountId: $a, id: $id) { connected providerError { message } } }', { a: kim, id })).location.connected ? 'connected' : 'not connected'),
        });
      }),
      http(apiUrl, 'PATCH', `/location/update?account_id=${kim}&location_id=${locationOf('upd')}`, { token: org.token, body: { name: 'Held update' } }).then((patched) => {
        expect(patched.status).toBe(200);
        const id = patched.body.payload.id as string;
        held.push({
          queue: 'location-update', id, success: 'SUCCEEDED',
          state: async () => (await data('query ($a: ID, $id: ID!) { locationUpdateJob(accountId: $a, id: $id) { status } }', { a: kim, id })).locationUpdateJob.status,
        });
      }),
      connectAccount('kill-lee', 'kill-lee').then((id) => held.push({ queue: 'account-import', id, success: 'SUCCEEDED', state: async () => (await accountOf(id)).syncStatus })),
      answer('kill-send', 'Thank you, Ann').then((id) => held.push({ ...reviewHeld('review-reply-send', reviewName('kill-send')), id })),
      data(`mutation ($a: ID, $l: ID!) { runCompetitorScan(accountId: $a, locationId: $l, text: "coffee shop", radiusKm: 1, rings: 0) { id } }`, { a: kim, l: locationOf('scan') }).then((started) => {
        const id = started.runCompetitorScan.id as string;
        held.push({
          queue: 'competitor-scan', id, success: 'COMPLETED',
          state: async () => (await data('query ($a: ID, $id: ID) { competitorScan(accountId: $a, scanId: $id) { status } }', { a: kim, id })).competitorScan.status,
        });
      }),
      data('mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId } }', {
        input: { betaCompanyId: 'company-1001', brandName: 'Held Brand', countryCode: 'de', primaryCategory: 'cafe', ownershipType: 'BRAND_OWNER' },
      }).then(async (created) => {
        const segmentId = created.createBetaBrand.segmentId as string;
        const [brand] = (await query(database.url, 'select id::text from beta_brand where segment_id = $1', [segmentId])) as { id: string }[];
        held.push({
          queue: 'beta-brand-sync', id: brand!.id, success: 'SYNCED',
          state: async () => (await data('query ($s: String!) { betaBrand(segmentId: $s) { betaSyncStatus } }', { s: segmentId })).betaBrand.betaSyncStatus,
        });
      }),
    ]);
    expect(held.map((entry) => entry.queue).sort()).toEqual([...PROVIDER_QUEUES].sort());

    // The sandbox saw every call: each rule taken, ten calls held; the worker's jobs are active, taken once.
    await until(async () => {
      const [a, b] = [await alpha.state(), await beta.state()];
      return a.failures.length === 0 && b.failures.length === 0 && a.held === 9 && b.held === 1 ? true : undefined;
    }, 'the ten calls to be held at the provider', 60_000).catch(async (error) => {
      const [a, b] = [await alpha.state(), await beta.state()];
      throw new Error(`${String(error)}; alpha held ${a.held}, rules left ${JSON.stringify(a.failures)}; beta held ${b.held}, rules left ${JSON.stringify(b.failures)}`);
    });
    const taken = await Promise.all(held.map(async (entry) => ({ queue: entry.queue, ...(await jobOf(entry)) })));
    expect(taken.map(({ queue, state, retryCount }) => ({ queue, state, retryCount }))).toEqual(held.map((entry) => ({ queue: entry.queue, state: 'active', retryCount: 0 })));
    first.child.kill('SIGKILL');
    expect(await first.exited()).toBe(null);
    expect(first.child.signalCode).toBe('SIGKILL');
    const stranded = await Promise.all(held.map((entry) => entry.state()));
    await alpha.configure({ processingMs: 0, moderationMs: 0 });

    const second = await startWorker();
    for (const entry of held) {
      await until(async () => ((await entry.state()) === entry.success ? true : undefined), `${entry.queue}: ${entry.success}`, 90_000);
    }
    // Each job the killed worker held ended, taken again after its worker died (once it expired). A record may reach
    // its end first by another job (the new worker's start queues a publish for each location not yet connected):
    // the held job then ends on its retry, finding nothing left to do.
    const ended = await until(async () => {
      const rows = await Promise.all(taken.map(async (job) => ({ queue: job.queue, ...(await jobById(job.id)) })));
      return rows.every((job) => job.state === 'completed') ? rows : undefined;
    }, 'the held jobs to complete', 90_000);
    expect(ended.filter((job) => job.retryCount >= 1).map((job) => job.queue).sort()).toEqual([...PROVIDER_QUEUES].sort());

    // The held calls land at the provider (the killed worker only stopped waiting): then count what it holds.
    await until(async () => ((await alpha.state()).held === 0 && (await beta.state()).held === 0 ? true : undefined), 'the held calls to land', 60_000);
    const provider = await alpha.state();
    const byId = (queue: ProviderQueueName) => held.find((entry) => entry.queue === queue)!.id;
    const duplicates: Record<string, number> = {};
    const repeated: Record<string, string> = {};
    // One post per post: the held create and the retried one carried the post's id.
    duplicates['post-publish'] = provider.posts.filter((post) => post.requestId === byId('post-publish')).length - 1;
    duplicates['post-check'] = provider.posts.filter((post) => post.requestId === byId('post-check')).length - 1;
    // The deleted post is gone (deleted once; the other call found it gone).
    duplicates['post-delete'] = provider.posts.filter((post) => post.requestId === toDelete).length;
    repeated['post-delete'] = `${provider.calls.delete} DELETE calls, one deleted`;
    duplicates['location-publish'] = provider.locations.filter((location) => location.requestId === byId('location-publish')).length - 1;
    // The update sent twice: the same fields, one location with them (the provider counts two edits).
    const updated = provider.locations.filter((location) => location.name.endsWith('/kill-upd'));
    duplicates['location-update'] = updated.length - 1;
    expect(updated[0]).toMatchObject({ title: 'Held update' });
    repeated['location-update'] = `${updated[0]!.edits} edits of one location (an idempotent replace)`;
    // The import read twice: one location and one review here, by their provider names.
    const lee = await accountOf(byId('account-import'));
    expect(lee.syncProgress).toEqual({ locations: 1, reviews: 1 });
    const [imported] = (await query(database.url, `select (select count(*) from location where account_id = $1)::int as locations, (select count(*) from review where account_id = $1)::int as reviews`, [byId('account-import')])) as { locations: number; reviews: number }[];
    duplicates['account-import'] = imported!.locations - 1 + imported!.reviews - 1;
    repeated['account-import'] = `${provider.calls['location-list']} location lists (reads)`;
    // One reply per review, with our text (sent again, it replaced itself).
    const replies = provider.reviews.filter((review) => ['kill-send', 'kill-check'].some((id) => review.name.endsWith(`/${id}`)));
    expect(replies.map((review) => review.reviewReply?.comment).sort()).toEqual(['Thank you, Ann', 'Thank you, Ben']);
    duplicates['review-reply-send'] = 0;
    duplicates['review-reply-check'] = 0;
    repeated['review-reply-send'] = `${provider.calls['review-reply']} reply PUTs for 2 replies (the held one replaced itself)`;
    repeated['competitor-scan'] = `${provider.calls['places-search']} searches for 1 dot (reads)`;
    duplicates['competitor-scan'] = 0;
    const brands = (await beta.state()).brands.filter((brand) => brand.companyId === 'company-1001');
    duplicates['beta-brand-sync'] = brands.length - 1;
    expect(brands.map((brand) => brand.brandDetails.displayNames[0]!.name)).toEqual(['Held Brand']);
    expect(duplicates).toEqual(Object.fromEntries(PROVIDER_QUEUES.map((queue) => [queue, 0])));
    expect(await stuckRecords(database.url)).toEqual([]);

    const rows = [];
    for (const entry of held) {
      const { jobs: count, attempts } = await jobFigures(database.url, entry.queue);
      const job = ended.find((item) => item.queue === entry.queue)!;
      rows.push({
        queue: entry.queue,
        heldAtKill: stranded[held.indexOf(entry)],
        terminal: await entry.state(),
        retriesOfItsJob: job.retryCount,
        queueJobs: count,
        queueAttempts: attempts,
        stuck: 0,
        duplicates: duplicates[entry.queue],
        ...(repeated[entry.queue] ? { repeated: repeated[entry.queue] } : {}),
      });
    }
    console.log(`worker killed (SIGKILL) with every queue's job at the provider; after a new worker:\n${rows.map((row) => JSON.stringify(row)).join('\n')}`);

    second.child.kill('SIGTERM');
    expect(await second.exited()).toBe(0);
    api.child.kill('SIGTERM');
    expect(await api.exited()).toBe(0);
  }, 240_000);
});

const PAYLOAD_KEY: Record<ProviderQueueName, string> = {
  'post-publish': 'postId',
  'post-check': 'postId',
  'post-delete': 'postId',
  'location-publish': 'locationId',
  'location-update': 'jobId',
  'account-import': 'accountId',
  'review-reply-send': 'reviewId',
  'review-reply-check': 'reviewId',
  'competitor-scan': 'scanId',
  'beta-brand-sync': 'brandId',
};

/** The record's job in its queue that the held call belongs to: the one that was (or is) active longest. */
async function jobOf(entry: Held): Promise<{ id: string; state: string; retryCount: number }> {
  const [job] = (await query(
    database.url,
    `select id::text, state::text, retry_count as "retryCount" from pgboss.job where name = $1 and data->>'${PAYLOAD_KEY[entry.queue]}' = $2
     order by (state = 'active') desc, retry_count desc, created_on desc limit 1`,
    [entry.queue, entry.id],
  )) as { id: string; state: string; retryCount: number }[];
  return job ?? { id: '', state: 'none', retryCount: -1 };
}

async function jobById(id: string): Promise<{ state: string; retryCount: number }> {
  const [job] = (await query(database.url, 'select state::text, retry_count as "retryCount" from pgboss.job where id = $1::uuid', [id])) as {
    state: string;
    retryCount: number;
  }[];
  return job ?? { state: 'none', retryCount: -1 };
}
