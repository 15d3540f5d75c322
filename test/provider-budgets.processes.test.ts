import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TestClock } from './support/clock';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql } from './support/http';
import { createPostOf, pollPost, sandboxOf } from './support/posts';
import { createAlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { freePort } from './support/ports';
import { startSandboxProcess, startServerProcess, type ServerProcess } from './support/process';
import { startTestStack, type TestStack } from './support/stack';

/**
 * A provider's budget and its pauses hold across processes (docs/jobs.md, "Provider budgets"; issue 29): two worker
 * processes on one database, each with the same ALPHA_BUDGET, and the API in a third.
 * - The quota: the alpha sandbox runs in a process of its own, as a provider does, so the calls arrive when they are
 *   sent (a sandbox inside the busy API process would take them in bursts after each of its own pauses).
 * - The pause: the alpha sandbox is mounted in the API, on a clock the test moves, so its per-minute quota can be
 *   brought to its last seconds.
 */

const QUOTA_PER_SECOND = 20;
const CAMPAIGN_SIZE = 100;

interface Deployment {
  t: TestStack;
  fixture: OrganizationFixture;
  workers: { process: ServerProcess; metricsUrl: string }[];
  close(): Promise<void>;
}

/** The API (with `env`), then two worker processes calling the alpha provider at `alphaUrl` with one budget. */
async function deploy(env: Record<string, string>, alphaUrl: (t: TestStack) => string, options: { clock?: TestClock; locations: number }): Promise<Deployment> {
  const t = await startTestStack({ ROLE: 'api', POST_RATE_LIMIT_PER_MINUTE: '1000', ...env }, { clock: options.clock });
  const fixture = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: options.locations, connected: true });
  const workers: Deployment['workers'] = [];
  const dataDirs: string[] = [];
  const close = async () => {
    for (const { process: worker } of workers) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
      await worker.exited();
    }
    await t.close();
    for (const dataDir of dataDirs) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    for (let n = 0; n < 2; n += 1) {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-budget-'));
      dataDirs.push(dataDir);
      const metricsPort = await freePort();
      const worker = startServerProcess({
        DATABASE_URL: t.databaseUrl,
        DATA_DIR: dataDir,
        ROLE: 'worker',
        ALPHA_API_URL: alphaUrl(t),
        BETA_API_URL: env.BETA_API_URL ?? `${t.url}/sandbox/beta`,
        ALPHA_BUDGET: '18/s',
        METRICS: String(metricsPort),
        LOG_LEVEL: 'info',
      });
      workers.push({ process: worker, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` });
      await worker.waitFor(/worker is up/, 60_000);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { t, fixture, workers, close };
}

const live = (d: Deployment, id: string) => pollPost(d.t.url, d.fixture.token, d.fixture.accounts[0]!.account.id, id, (found) => found.state === 'LIVE', 120_000);

async function publishJob(d: Deployment, postId: string): Promise<{ state: string; retry_count: number }> {
  const [job] = await d.t.em().getConnection().execute<{ state: string; retry_count: number }[]>(
    `select state::text, retry_count from pgboss.job where name = 'post-publish' and data->>'postId' = ?`,
    [postId],
  );
  return job!;
}

/** The alpha calls a worker process made in its budget's slots, as its metrics say. */
async function budgetCalls(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return Number(/^lg_provider_budget_calls_total\{provider="alpha"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

describe('a campaign against the provider’s quota', () => {
  let sandbox: ServerProcess;
  let alphaUrl: string;
  let d: Deployment;

  beforeAll(async () => {
    sandbox = startSandboxProcess('alpha', { PORT: '0', ALPHA_SANDBOX_QUOTA_PER_SECOND: String(QUOTA_PER_SECOND) });
    alphaUrl = (await sandbox.waitFor(/listening on (http:\/\/\S+) /))[1]!;
    d = await deploy({ SANDBOX: 'off', ALPHA_API_URL: alphaUrl, BETA_API_URL: alphaUrl }, () => alphaUrl, { locations: CAMPAIGN_SIZE });
  }, 120_000);

  afterAll(async () => {
    await d?.close();
    sandbox?.child.kill('SIGTERM');
    await sandbox?.exited();
  });

  it('holds across two worker processes: every post LIVE, at most 1% of the calls refused', async () => {
    const account = d.fixture.accounts[0]!;
    const created = await graphql(
      d.t.url,
      'mutation ($a: ID, $input: CreatePostCampaignInput!) { createPostCampaign(accountId: $a, input: $input) { posts { id } } }',
      {
        token: d.fixture.token,
        variables: { a: account.account.id, input: { locationIds: account.locations.map((location) => location.id), params: { summary: 'Two workers', languageCode: 'en' } } },
      },
    );
    expect(created.body.errors).toBeUndefined();
    const ids = (created.body.data!.createPostCampaign.posts as { id: string }[]).map((found) => found.id);
    for (const id of ids) await live(d, id);
    for (const id of ids) expect(await publishJob(d, id)).toEqual({ state: 'completed', retry_count: 0 });

    const quota = (await createAlphaSandboxControl(alphaUrl).state()).quota;
    expect(quota.admitted).toBeGreaterThanOrEqual(CAMPAIGN_SIZE);
    expect(quota.refused).toBeLessThanOrEqual(Math.floor((quota.admitted + quota.refused) / 100));
    // Both processes called the provider: the quota held with the calls split between them.
    const calls = await Promise.all(d.workers.map(({ metricsUrl }) => budgetCalls(metricsUrl)));
    for (const made of calls) expect(made).toBeGreaterThan(0);
    expect(calls.reduce((sum, made) => sum + made, 0)).toBeGreaterThanOrEqual(CAMPAIGN_SIZE);
  }, 180_000);
});

describe('a 429 with a Retry-After of 5 s', () => {
  const clock = new TestClock();
  let d: Deployment;

  beforeAll(async () => {
    d = await deploy({}, (t) => `${t.url}/sandbox/alpha`, { clock, locations: 1 });
  }, 120_000);

  afterAll(() => d?.close());

  it('pauses the provider in every process until then: no call, no attempt spent', async () => {
    const alpha = sandboxOf(d.t.url);
    await alpha.configure({ quotaPerMinute: 1 });
    const admitted = await createPostOf(d.t.url, d.fixture, 'Admitted by the quota');
    await live(d, admitted);
    // The sandbox's minute since that call is near its end: the next call is refused with a Retry-After of 5 s (4
    // if it comes more than a second later).
    const admittedAt = Date.parse((await alpha.state()).quota.lastCallAt!);
    clock.skip(55_000 - (clock.now().getTime() - admittedAt));
    const refused = await createPostOf(d.t.url, d.fixture, 'Refused: pauses the provider for 5 s');
    await Promise.any(d.workers.map(({ process: worker }) => worker.waitFor(/job waits for its provider, no attempt spent/, 30_000)));
    // The quota would let calls through now: only the pause keeps them back until the Retry-After ends.
    await alpha.configure({ quotaPerMinute: 1000 });
    const held = await createPostOf(d.t.url, d.fixture, 'Held by the pause');
    for (const id of [refused, held]) await live(d, id);

    // No call reached the provider, from either process, during the Retry-After of that refusal.
    const refusal = (await alpha.state()).quota.refusals.at(-1)!;
    expect(refusal.retryAfterSeconds).toBeGreaterThanOrEqual(4);
    expect(refusal.callsBeforeRetry).toBe(0);
    for (const id of [refused, held]) expect(await publishJob(d, id)).toEqual({ state: 'completed', retry_count: 0 });
  }, 120_000);
});
