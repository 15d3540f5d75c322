import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './support/chromium';
import { DashboardPages, signIn } from './support/dashboard-pages';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql } from './support/http';
import { eventually, pauseAlphaByQuota, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The dashboard's Providers panel (docs/operations.md, "Provider budgets") in Chromium, as test/dashboard.browser.test.ts
 * drives the page: each provider's budget from ALPHA_BUDGET (300/min), and once the alpha sandbox's per-minute project
 * quota answers 429, "paused until" the time the service gives and the signed-in organization's posts waiting for it;
 * another organization's tab shows the same pause and nothing of its own waiting. Waited for as the page shows it,
 * within one read of the panel (every 5 s), never slept.
 */

/** The panel reads providerBudgets every 5 s (dashboard/src/live.ts): a change shows within one read and its answer. */
const SHOWN_WITHIN_MS = 8_000;

let t: TestStack;
let org: OrganizationFixture;
let other: OrganizationFixture;
let context: BrowserContext;
let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;

beforeAll(async () => {
  t = await startTestStack({ ALPHA_BUDGET: '300/min', JOB_RETRY_LIMIT: '1', JOB_RETRY_DELAY_SECONDS: '1', POST_RATE_LIMIT_PER_MINUTE: '1000' });
  org = await createOrganizationFixture(t.em(), { name: 'Waiting Org', accounts: 1, locationsEach: 1, connected: true });
  other = await createOrganizationFixture(t.em(), { name: 'Other Org', accounts: 1, locationsEach: 1, connected: true });
  browser = await launchChromium();
  context = browser.context;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const pages = new DashboardPages(() => t.url, () => context);

/** The Providers panel's row of `provider`. */
const row = (page: Page, provider: string) => page.locator(`.providers tr[data-provider="${provider}"]`);

pages.test('shows each provider’s budget, the pause a 429 starts and the organization’s work waiting for it', async () => {
  const { page } = await pages.open();
  await signIn(page, org.token, 'Organization: Waiting Org');
  const alpha = row(page, 'alpha');
  await alpha.and(page.locator('[data-paused="false"][data-waiting="0"]')).waitFor();
  expect(await alpha.locator('td.budget').innerText()).toBe('5 requests/s');
  expect(await row(page, 'beta').locator('td.budget').innerText()).toBe('no budget');
  expect(await alpha.locator('td.pause').innerText()).toBe('not paused');

  const sandbox = sandboxOf(t.url);
  try {
    await pauseAlphaByQuota(t.url, org);
    const answer = await eventually(async () => {
      const read = await graphql(t.url, '{ providerBudgets { provider pausedUntil waitingWork nextWaitingDueAt } }', { token: org.token });
      const found = (read.body.data!.providerBudgets as { provider: string; pausedUntil: string; waitingWork: number; nextWaitingDueAt: string }[]).find((budget) => budget.provider === 'alpha')!;
      return found.waitingWork === 2 ? found : undefined;
    }, 15_000, 'two posts waiting for alpha');

    // The page shows what the service answers, in the page's one time format.
    await alpha.and(page.locator('[data-paused="true"][data-waiting="2"]')).waitFor({ timeout: SHOWN_WITHIN_MS });
    expect(await alpha.locator('td.pause').innerText()).toMatch(/^paused until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(await alpha.locator('td.pause time').getAttribute('datetime')).toBe(answer.pausedUntil);
    expect(await alpha.locator('td.next-due time').getAttribute('datetime')).toBe(answer.nextWaitingDueAt);
    expect(await alpha.locator('td.waiting').innerText()).toBe('2');
    expect(await row(page, 'beta').getAttribute('data-paused')).toBe('false');

    // Another organization: the provider's pause, none of this organization's work.
    const otherTab = await pages.open();
    await signIn(otherTab.page, other.token, 'Organization: Other Org');
    const otherAlpha = row(otherTab.page, 'alpha');
    await otherAlpha.and(otherTab.page.locator('[data-paused="true"]')).waitFor({ timeout: SHOWN_WITHIN_MS });
    expect(await otherAlpha.getAttribute('data-waiting')).toBe('0');
    expect(await otherAlpha.locator('td.next-due').innerText()).toBe('');
  } finally {
    await sandbox.configure({ quotaPerMinute: null });
  }
});
