import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql } from './support/http';
import { eventually, pauseAlphaByQuota, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * What operators see of the provider budgets (docs/operations.md, "Provider budgets"; issue 29): `providerBudgets`
 * answers each provider's budget (ALPHA_BUDGET), the pause a 429 naming the alpha sandbox's project quota starts, and
 * the caller's own work waiting for it (an organization token its organization's, an account token its account's,
 * never another organization's, not even as a count), in the same statements however much waits; `lg_jobs_waiting`
 * counts the deployment's waiting jobs.
 */

const QUERY = '{ providerBudgets { provider requestsPerSecond pausedUntil waitingWork nextWaitingDueAt waitingCalls } }';

interface Budget {
  provider: string;
  requestsPerSecond: number | null;
  pausedUntil: string | null;
  waitingWork: number;
  nextWaitingDueAt: string | null;
  waitingCalls: number;
}

let t: TestStack;
let a: OrganizationFixture;
let b: OrganizationFixture;

beforeAll(async () => {
  t = await startTestStack({ ALPHA_BUDGET: '20/s', JOB_RETRY_LIMIT: '1', JOB_RETRY_DELAY_SECONDS: '1', POST_RATE_LIMIT_PER_MINUTE: '1000' });
  a = await createOrganizationFixture(t.em(), { name: 'A', accounts: 2, locationsEach: 1, connected: true });
  b = await createOrganizationFixture(t.em(), { name: 'B', accounts: 1, locationsEach: 1, connected: true });
});
afterAll(() => t?.close());

async function budgets(token: string): Promise<Record<string, Budget>> {
  const answer = await graphql(t.url, QUERY, { token });
  expect(answer.body.errors).toBeUndefined();
  return Object.fromEntries((answer.body.data!.providerBudgets as Budget[]).map((budget) => [budget.provider, budget]));
}

/** The value of `lg_jobs_waiting` for a queue, as a scrape answers it. */
async function waitingJobsMetric(queue: string): Promise<number | undefined> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const found = new RegExp(`^lg_jobs_waiting\\{queue="${queue}",provider="alpha"\\} (\\d+)$`, 'm').exec(text);
  return found ? Number(found[1]) : undefined;
}

async function statementsFor(request: () => Promise<unknown>): Promise<number> {
  const before = t.statementCount();
  await request();
  return t.statementCount() - before;
}

it('answers each provider’s budget, not paused, nothing waiting, before any 429', async () => {
  const none = { pausedUntil: null, waitingWork: 0, nextWaitingDueAt: null, waitingCalls: 0 };
  expect(await budgets(a.token)).toEqual({ alpha: { provider: 'alpha', requestsPerSecond: 20, ...none }, beta: { provider: 'beta', requestsPerSecond: null, ...none } });
  expect(await waitingJobsMetric('post-publish')).toBe(0);
});

it('shows the pause of a 429 naming the project quota and the caller’s work waiting for it, never another organization’s', async () => {
  const sandbox = sandboxOf(t.url);
  try {
    await pauseAlphaByQuota(t.url, a);
    // Both jobs back in their queue: the refused one after its 429, the held one taken during the pause.
    const seen = await eventually(async () => {
      const now = await budgets(a.token);
      return now.alpha!.waitingWork === 2 ? now : undefined;
    }, 15_000, 'two posts of A waiting for alpha');
    // Seen after the 429 was handled: the pause it started ends within a minute (and a rounded-up second) of that.
    const seenAt = Date.now();

    const { alpha, beta } = seen;
    const pausedUntil = Date.parse(alpha!.pausedUntil!);
    // The per-minute quota's Retry-After: until the admitted call leaves the provider's minute.
    expect(pausedUntil).toBeGreaterThan(Date.now());
    expect(pausedUntil).toBeLessThanOrEqual(seenAt + 61_000);
    // Both are due when the pause ends (the held one at its next whole second).
    expect(Math.abs(Date.parse(alpha!.nextWaitingDueAt!) - pausedUntil)).toBeLessThan(2_000);
    expect(alpha).toMatchObject({ requestsPerSecond: 20, waitingCalls: 0 });
    expect(beta).toEqual({ provider: 'beta', requestsPerSecond: null, pausedUntil: null, waitingWork: 0, nextWaitingDueAt: null, waitingCalls: 0 });
    expect((await sandbox.state()).quota).toMatchObject({ admitted: 1, refused: 1, callsDuringRetryAfter: 0 });

    // The pause is the deployment's; the waiting work is the caller's own.
    const other = await budgets(b.token);
    expect(other.alpha).toMatchObject({ pausedUntil: alpha!.pausedUntil, waitingWork: 0, nextWaitingDueAt: null });
    expect((await budgets(b.accounts[0]!.token)).alpha).toMatchObject({ pausedUntil: alpha!.pausedUntil, waitingWork: 0, nextWaitingDueAt: null });
    expect((await budgets(a.accounts[0]!.token)).alpha).toMatchObject({ waitingWork: 2, nextWaitingDueAt: alpha!.nextWaitingDueAt });
    expect((await budgets(a.accounts[1]!.token)).alpha).toMatchObject({ pausedUntil: alpha!.pausedUntil, waitingWork: 0, nextWaitingDueAt: null });

    // The deployment's waiting jobs, whoever's, by queue.
    expect(await waitingJobsMetric('post-publish')).toBe(2);
    expect(await waitingJobsMetric('location-update')).toBe(0);

    // One statement for every provider's waiting work, as many for two waiting jobs as for none (tokens read once).
    const withWork = await statementsFor(() => budgets(a.token));
    const withNone = await statementsFor(() => budgets(b.token));
    expect(withWork).toBe(withNone);
    expect(withWork).toBeLessThanOrEqual(1);
  } finally {
    await sandbox.configure({ quotaPerMinute: null });
  }
});
