import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { launchChromium } from './support/chromium';
import { DashboardPages, signIn } from './support/dashboard-pages';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { minimalLocationBody } from './support/locations';
import { eventually, pollPost, providerIdOf, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * The operations dashboard (/dashboard) in a real browser: Debian's Chromium, driven by playwright-core, against
 * the whole service and its provider sandbox. A person signs in with a token and watches work move through its
 * states: each change must show within 2 s of it happening at the service (waited for as an event, never slept).
 * A failed test leaves a screenshot and the page's console under test-results/. There is no skipping: a Chromium
 * that cannot start fails the file.
 */

/** A change at the service must be on the page within this. */
const SHOWN_WITHIN_MS = 2000;
/** How long a provider call is held, so that a job is seen RUNNING. */
const HELD_MS = 3000;
const RETRY_LIMIT = 1;
/** A record's detail is read again this often (dashboard/src/record.tsx). */
const RECORD_READ_MS = 3000;

/**
 * Runs in the page (text: the tests compile without the DOM's types): the paint timings, once the first contentful
 * paint has happened.
 */
const PAINT_TIMES = `new Promise((resolve) => {
  new PerformanceObserver((list, observer) => {
    const entries = Object.fromEntries(list.getEntries().map((entry) => [entry.name, Math.round(entry.startTime)]));
    if ('first-contentful-paint' in entries) {
      observer.disconnect();
      resolve(entries);
    }
  }).observe({ type: 'paint', buffered: true });
})`;

let t: TestStack;
let org: OrganizationFixture;
let context: BrowserContext;
let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
/** A webhook receiver on loopback answering 204 (WEBHOOK_ALLOW_PRIVATE_TARGETS lets the service reach it). */
let receiver: Server | undefined;

beforeAll(async () => {
  t = await startTestStack({ JOB_RETRY_LIMIT: String(RETRY_LIMIT), JOB_RETRY_DELAY_SECONDS: '1', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on' });
  // Connected locations (posts need no location at the provider), and accounts known there (new locations are created).
  org = await createOrganizationFixture(t.em(), { name: 'Dashboard Org', accounts: 1, locationsEach: 2, connected: true, alphaAccounts: true });
  browser = await launchChromium();
  context = browser.context;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
});

const pages = new DashboardPages(() => t.url, () => context);
const browserTest = (name: string, run: () => Promise<void>, timeoutMs?: number) => pages.test(name, run, timeoutMs);
const openDashboard = () => pages.open();

/** The row of the latest-work panel for the work of `kind` on record `subjectId`. */
function latestRow(page: Page, kind: string, subjectId: string): Locator {
  return page.locator(`.latest tr[data-kind="${kind}"][data-subject-id="${subjectId}"]`);
}

function inStatus(row: Locator, ...statuses: string[]): Locator {
  return row.and(row.page().locator(statuses.map((status) => `[data-status="${status}"]`).join(', ')));
}

/** Waits until the page shows it, at most SHOWN_WITHIN_MS after the change was seen at the service. */
async function shown(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout: SHOWN_WITHIN_MS });
}

const accountId = () => org.accounts[0]!.account.id;

async function createPost(locationId: string, summary: string): Promise<string> {
  const created = await http(t.url, 'POST', `/post?account_id=${accountId()}`, {
    token: org.token,
    body: { location_id: locationId, params: { topicType: 'STANDARD', summary, languageCode: 'en' } },
  });
  expect(created.status).toBe(202);
  return created.body.payload.id as string;
}

/** Waits until a provider call is held at the sandbox: the job that made it is running. */
async function providerCallHeld(): Promise<void> {
  await eventually(async () => ((await sandboxOf(t.url).state()).held > 0 ? true : undefined), 10_000, 'a provider call to be held');
}

/** What the page makes a browser load from a URL (its icon is inline). */
const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!).filter((url) => !url.startsWith('data:'));

describe('GET /dashboard', () => {
  it('answers the page to anyone (it holds no data), with a policy that lets it load and reach only this server', async () => {
    const answer = await fetch(`${t.url}/dashboard`, { headers: { accept: 'text/html' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
    expect(answer.headers.get('content-security-policy')).toMatch(/default-src 'none'.*script-src 'self'.*connect-src 'self'/);
    const html = await answer.text();
    // No token in a page of the test environment (development only), nor any other data.
    expect(html).not.toContain('data-demo-token');
    const assets = assetsOf(html);
    expect(assets).toEqual([expect.stringMatching(/^\/dashboard\/assets\/dashboard-\w+\.css$/), expect.stringMatching(/^\/dashboard\/assets\/dashboard-\w+\.js$/)]);
  });

  it('serves its hashed assets for a year, brotli-compressed to a browser, 304 when unchanged, 404 for any other name', async () => {
    const html = await (await fetch(`${t.url}/dashboard`)).text();
    for (const asset of assetsOf(html)) {
      const url = `${t.url}${asset}`;
      const plain = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const bytes = Buffer.from(await plain.arrayBuffer());
      const br = await fetch(url, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(br.headers.get('content-encoding')).toBe('br');
      // fetch decodes brotli: the same file either way.
      expect(Buffer.from(await br.arrayBuffer()).equals(bytes)).toBe(true);
      const again = await fetch(url, { headers: { 'accept-encoding': 'identity', 'if-none-match': plain.headers.get('etag')! } });
      expect(again.status).toBe(304);
    }
    for (const name of ['missing.js', 'manifest.json', '..%2Fmanifest.json']) {
      expect((await fetch(`${t.url}/dashboard/assets/${name}`)).status).toBe(404);
    }
  });
});

describe('the dashboard in Chromium', () => {
  browserTest('paints fast from a small bundle, loading nothing from anywhere but this server', async () => {
    const { page, requests } = await openDashboard();
    await page.getByLabel('API token').waitFor();
    const paints = await page.evaluate<Record<string, number>>(PAINT_TIMES);
    // The gzipped size of what the page loads besides itself: its script and its stylesheet.
    const assets = requests.filter((url) => new URL(url).pathname.startsWith('/dashboard/assets/'));
    expect(assets).toHaveLength(2);
    let gzipped = 0;
    for (const url of assets) gzipped += gzipSync(Buffer.from(await (await fetch(url)).arrayBuffer()), { level: 9 }).length;
    console.log(`dashboard: first paint ${paints['first-paint']} ms, first contentful paint ${paints['first-contentful-paint']} ms; bundle ${(gzipped / 1024).toFixed(1)} KB gzipped`);
    expect(gzipped).toBeLessThan(200 * 1024);

    await signIn(page, org.token, 'Organization: Dashboard Org');
    // Its reads, the live socket and the provider health poll included: this server only.
    expect(requests).toContain(`${t.url.replace(/^http/, 'ws')}/graphql`);
    expect(requests.filter((url) => new URL(url).host !== new URL(t.url).host)).toEqual([]);
  });

  browserTest('says clearly when a token is refused, and stays signed out', async () => {
    const { page } = await openDashboard();
    await page.getByLabel('API token').fill('not-a-token-of-this-service');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The service refused this token: it is unknown or revoked.' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.reload();
    await page.getByLabel('API token').waitFor();
  });

  browserTest('keeps the token for the tab: a reload stays signed in; signing out forgets it', async () => {
    const { page } = await openDashboard();
    await signIn(page, org.token, 'Organization: Dashboard Org');
    await page.reload();
    await page.locator('[data-connectivity="live"]').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    await page.reload();
    await page.getByLabel('API token').waitFor();
  });

  browserTest('shows a post created over REST move from QUEUED or RUNNING to SUCCEEDED, each within 2 s, and counts it', async () => {
    const { page } = await openDashboard();
    await signIn(page, org.token, 'Organization: Dashboard Org');
    const location = org.accounts[0]!.locations[0]!;
    // The publish call is held at the provider a while, so the job is seen RUNNING.
    await sandboxOf(t.url).fail({ count: 1, delayMs: HELD_MS, method: 'POST', pathContains: `/locations/${providerIdOf(location.alphaLocationName!)}/localPosts` });

    const postId = await createPost(location.id, 'Watched from the dashboard');
    const row = latestRow(page, 'POST_PUBLISH', postId);
    await shown(inStatus(row, 'QUEUED', 'RUNNING'));
    await providerCallHeld();
    await shown(inStatus(row, 'RUNNING'));
    await pollPost(t.url, org.token, accountId(), postId, (post) => post.state === 'LIVE');
    await shown(inStatus(row, 'SUCCEEDED'));
    await shown(page.locator('.counts td[data-kind="POST_PUBLISH"][data-status="SUCCEEDED"][data-count="1"]'));
  });

  browserTest('shows a location update move from QUEUED or RUNNING to SUCCEEDED, each within 2 s', async () => {
    const { page } = await openDashboard();
    await signIn(page, org.token, 'Organization: Dashboard Org');
    // A location the provider has: created over REST, then published there by its job (watched on the page too).
    const created = await http(t.url, 'POST', `/location?account_id=${accountId()}`, { token: org.token, body: minimalLocationBody({ name: 'Dashboard Bakery' }) });
    expect(created.status).toBe(200);
    const locationId = created.body.payload.location_id as string;
    const location = await eventually(async () => {
      const found = await graphql(t.url, 'query ($a: ID, $id: ID!) { location(accountId: $a, id: $id) { connected alphaLocationName } }', {
        token: org.token,
        variables: { a: accountId(), id: locationId },
      });
      return found.body.data?.location?.connected ? (found.body.data.location as { alphaLocationName: string }) : undefined;
    }, 30_000, 'the location to be connected');
    await shown(inStatus(latestRow(page, 'LOCATION_PUBLISH', locationId), 'SUCCEEDED'));

    await sandboxOf(t.url).fail({ count: 1, delayMs: HELD_MS, method: 'PATCH', pathContains: `/locations/${providerIdOf(location.alphaLocationName)}?updateMask=` });
    const answer = await http(t.url, 'PATCH', `/location/update?account_id=${accountId()}&location_id=${locationId}`, { token: org.token, body: { name: 'Dashboard Bakery & Café' } });
    expect(answer.status).toBe(200);
    const updateId = answer.body.payload.id as string;
    const row = latestRow(page, 'LOCATION_UPDATE', updateId);
    await shown(inStatus(row, 'QUEUED', 'RUNNING'));
    await providerCallHeld();
    await shown(inStatus(row, 'RUNNING'));
    await eventually(async () => {
      const job = await http(t.url, 'GET', `/location/updates?account_id=${accountId()}&id=${updateId}`, { token: org.token });
      return job.body.payload?.updates?.[0]?.status === 'SUCCEEDED' ? true : undefined;
    }, 30_000, 'the update to succeed');
    await shown(inStatus(row, 'SUCCEEDED'));
  });

  browserTest(
    'shows a failure injected at the provider with its reason; Retry is refused to an account token and works for an organization token',
    async () => {
      const { page } = await openDashboard();
      await signIn(page, org.token, 'Organization: Dashboard Org');
      const accountTab = await openDashboard();
      await signIn(accountTab.page, org.accounts[0]!.token, 'Account token');

      // The provider answers 503 to every attempt the job makes: it runs out of retries (dead-lettered).
      const location = org.accounts[0]!.locations[1]!;
      await sandboxOf(t.url).fail({ count: 1 + RETRY_LIMIT, status: 503, method: 'POST', pathContains: `/locations/${providerIdOf(location.alphaLocationName!)}/localPosts` });
      const postId = await createPost(location.id, 'Meets a provider outage');
      await pollPost(t.url, org.token, accountId(), postId, (post) => post.state === 'ERROR');
      const failures = await eventually(async () => {
        const found = await graphql(t.url, 'query { asyncWork(kinds: [POST_PUBLISH], statuses: [DEAD_LETTERED]) { edges { node { subjectId error } } } }', { token: org.token });
        return found.body.data?.asyncWork.edges.find((edge: any) => edge.node.subjectId === postId)?.node as { error: string } | undefined;
      }, 10_000, 'the dead-lettered work');
      expect(failures.error).toMatch(/\S/);

      const failureRow = (tab: Page) => tab.locator(`.failures tr[data-kind="POST_PUBLISH"][data-subject-id="${postId}"][data-status="DEAD_LETTERED"]`);
      for (const tab of [page, accountTab.page]) {
        await shown(failureRow(tab).filter({ hasText: failures.error }));
      }

      // An account token may not retry: the refusal is shown on the row, which stays.
      await failureRow(accountTab.page).getByRole('button', { name: 'Retry' }).click();
      await failureRow(accountTab.page).getByRole('alert').filter({ hasText: /Retry refused: \S/ }).waitFor();

      // The organization's Retry runs the job again (the provider answers now): it leaves the failures and succeeds.
      await failureRow(page).getByRole('button', { name: 'Retry' }).click();
      await pollPost(t.url, org.token, accountId(), postId, (post) => post.state === 'LIVE');
      await shown(inStatus(latestRow(page, 'POST_PUBLISH', postId), 'SUCCEEDED'));
      await page.locator(`.failures tr[data-subject-id="${postId}"]`).waitFor({ state: 'detached', timeout: SHOWN_WITHIN_MS });
      // The account's tab follows the same change live.
      await shown(inStatus(latestRow(accountTab.page, 'POST_PUBLISH', postId), 'SUCCEEDED'));
    },
    90_000,
  );

  browserTest('shows provider health: calls, errors and the last error, read every 5 s', async () => {
    const { page } = await openDashboard();
    await signIn(page, org.token, 'Organization: Dashboard Org');
    // One 503 from the provider (the job's retry then succeeds): an error of the alpha provider, with its status.
    const location = org.accounts[0]!.locations[0]!;
    await sandboxOf(t.url).fail({ count: 1, status: 503, method: 'POST', pathContains: `/locations/${providerIdOf(location.alphaLocationName!)}/localPosts` });
    const postId = await createPost(location.id, 'Retried once');
    await pollPost(t.url, org.token, accountId(), postId, (post) => post.state === 'LIVE');
    // The next poll shows it.
    const alpha = page.locator('.health tr[data-provider="alpha"]');
    await alpha.locator('td.error').filter({ hasText: /503/ }).waitFor({ timeout: 5000 + SHOWN_WITHIN_MS });
    expect(Number(await alpha.getAttribute('data-errors'))).toBeGreaterThan(0);
  });

  browserTest('shows webhook endpoints: URL, last delivery, and a disabled one with the reason the service gave', async () => {
    receiver = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const gql = async (query: string, variables: Record<string, unknown>) => {
      const answer = await graphql(t.url, query, { token: org.token, variables });
      expect(answer.body.errors).toBeUndefined();
      return answer.body.data;
    };
    const create = 'mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }';
    // A type the other tests never produce: only the ping reaches the receiver.
    const healthy = (await gql(create, { input: { url: receiverUrl, eventTypes: ['COMPETITOR_SCAN_STATUS_CHANGED'], description: 'Dashboard receiver' } })).createWebhookEndpoint.endpoint.id as string;
    const dead = (await gql(create, { input: { url: 'https://hooks.example.com/gone', eventTypes: ['COMPETITOR_SCAN_STATUS_CHANGED'] } })).createWebhookEndpoint.endpoint.id as string;
    await gql('mutation ($id: ID!) { pingWebhookEndpoint(id: $id) { id } }', { id: healthy });
    await eventually(async () => {
      const found = await gql('query ($e: ID!) { webhookDeliveries(endpointId: $e, first: 1) { nodes { status } } }', { e: healthy });
      return found.webhookDeliveries.nodes[0]?.status === 'SUCCEEDED' ? true : undefined;
    }, 20_000, 'the ping to be delivered');
    // The service disables an endpoint after a day of failures; the panel shows the row as the worker leaves it.
    const reason = 'Deliveries failed for 24 hours without a success; the last: no answer: ECONNREFUSED';
    await t.em().getConnection().execute(
      "update webhook_endpoint set enabled = false, disabled_reason = ?, disabled_at = now(), failing_since = now() - interval '25 hours' where id = ?",
      [reason, dead],
    );

    const { page } = await openDashboard();
    await signIn(page, org.token, 'Organization: Dashboard Org');
    const healthyRow = page.locator(`.webhooks tr[data-endpoint-id="${healthy}"][data-enabled="true"]`);
    await healthyRow.filter({ hasText: receiverUrl }).waitFor();
    await healthyRow.locator('td[data-delivery-status="SUCCEEDED"]').filter({ hasText: 'HTTP 204' }).waitFor();
    expect(await healthyRow.getAttribute('data-backlog')).toBe('0');
    const deadRow = page.locator(`.webhooks tr[data-endpoint-id="${dead}"][data-enabled="false"]`);
    await deadRow.filter({ hasText: 'https://hooks.example.com/gone' }).filter({ hasText: reason }).waitFor();
    await deadRow.locator('td.bad').waitFor();
  });
});

describe('acting from the dashboard', () => {
  /** An organization of its own, with two accounts: its lists hold only what these tests make. */
  let acting: OrganizationFixture;
  let hooks: WebhookReceiver;
  /** Every time the page writes: the one format (docs/operations.md). */
  const ONE_FORMAT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

  beforeAll(async () => {
    acting = await createOrganizationFixture(t.em(), { name: 'Acting Org', accounts: 2, locationsEach: 1, connected: true });
    hooks = new WebhookReceiver();
    await hooks.start();
  });
  afterAll(() => hooks?.close());

  const accountOf = (index: number) => acting.accounts[index]!;

  async function post(index: number, summary: string): Promise<string> {
    const created = await http(t.url, 'POST', `/post?account_id=${accountOf(index).account.id}`, {
      token: acting.token,
      body: { location_id: accountOf(index).locations[0]!.id, params: { topicType: 'STANDARD', summary, languageCode: 'en' } },
    });
    expect(created.status).toBe(202);
    return created.body.payload.id as string;
  }

  async function gql(query: string, variables: Record<string, unknown> = {}): Promise<any> {
    const answer = await graphql(t.url, query, { token: acting.token, variables });
    expect(answer.body.errors).toBeUndefined();
    return answer.body.data;
  }

  async function signedIn(): Promise<Page> {
    const { page } = await openDashboard();
    await signIn(page, acting.token, 'Organization: Acting Org');
    return page;
  }

  /** Types an id into the search and opens what it finds. */
  async function find(page: Page, id: string): Promise<Locator> {
    await page.getByLabel('Find a record or work by its id').fill(id);
    await page.getByRole('button', { name: 'Find' }).click();
    return page.locator('.record');
  }

  browserTest('filters the latest work by kind, status and account, and finds a record or a unit of work by its id', async () => {
    const first = await post(0, 'Of the first account');
    const second = await post(1, 'Of the second account');
    for (const [index, id] of [[0, first], [1, second]] as const) await pollPost(t.url, acting.token, accountOf(index).account.id, id, (found) => found.state === 'LIVE');
    const page = await signedIn();
    const rowOf = (id: string) => page.locator(`.latest tr[data-kind="POST_PUBLISH"][data-subject-id="${id}"]`);
    await rowOf(first).waitFor();
    await rowOf(second).waitFor();

    await page.locator('select[name="account"]').selectOption({ label: accountOf(1).account.name });
    await rowOf(first).waitFor({ state: 'detached' });
    await rowOf(second).waitFor();
    await page.locator('select[name="kind"]').selectOption('POST_PUBLISH');
    await page.locator('select[name="status"]').selectOption('FAILED');
    await page.locator('.latest .empty').filter({ hasText: 'No work matches the filters.' }).waitFor();
    await page.locator('select[name="status"]').selectOption('SUCCEEDED');
    await rowOf(second).waitFor();
    await page.locator('select[name="account"]').selectOption('');
    await rowOf(first).waitFor();

    // A post's id: its detail, its state read now, its work with each attempt, its events, the records it belongs to.
    const detail = await find(page, first);
    await detail.and(page.locator(`[data-record-id="${first}"]`)).waitFor();
    await detail.locator('dd[data-state="LIVE"]').waitFor();
    await detail.locator('.work[data-kind="POST_PUBLISH"][data-status="SUCCEEDED"] tr[data-attempt="1"][data-outcome="SUCCEEDED"]').waitFor();
    await detail.locator('tr[data-event-type="POST_STATE_CHANGED"]').first().waitFor();
    expect(page.url()).toContain(`#record=${first}`);
    // To its location, read directly (it has no work of its own), and on to its account.
    await detail.locator('a.related[data-related="location"]').click();
    await page.locator(`.record[data-record-id="${accountOf(0).locations[0]!.id}"]`).locator('dd').filter({ hasText: accountOf(0).locations[0]!.name }).waitFor();
    await page.locator('.record a.related[data-related="account"]').click();
    await page.locator(`.record[data-record-id="${accountOf(0).account.id}"]`).locator('dd').filter({ hasText: accountOf(0).account.name }).waitFor();
    // Back returns to the post.
    await page.goBack();
    await page.goBack();
    await page.locator(`.record[data-record-id="${first}"]`).waitFor();

    // A unit of work's id opens its record; an id of nothing says so.
    const work = await gql('query ($s: ID!) { asyncWork(subjectId: $s) { nodes { id } } }', { s: second });
    const byWork = await find(page, work.asyncWork.nodes[0].id as string);
    await byWork.and(page.locator(`[data-record-id="${second}"]`)).filter({ hasText: 'is a unit of work of this record' }).waitFor();
    await (await find(page, '0195c0de-0000-7000-8000-000000000000')).locator('.not-found').waitFor();
    // A row opens its record too.
    await page.locator('.record a.close').click();
    await page.locator('.record').waitFor({ state: 'detached' });
    await rowOf(second).locator('td.attempts').click();
    await page.locator(`.record[data-record-id="${second}"]`).waitFor();
  }, 60_000);

  browserTest('folds a record’s polling checks into one row that unfolds to each check', async () => {
    const page = await signedIn();
    // Under review at the provider for a day: checked again after 1, 2, 4 … s.
    const reviewed = await post(0, 'Held for review [[review]]');
    await eventually(async () => {
      const checks = await gql('query ($s: ID!) { asyncWork(subjectId: $s, kinds: [POST_CHECK]) { totalCount } }', { s: reviewed });
      return checks.asyncWork.totalCount >= 3 ? true : undefined;
    }, 30_000, 'three checks of the post');
    const group = page.locator(`.latest tr.check-group[data-kind="POST_CHECK"][data-subject-id="${reviewed}"]`);
    await group.and(page.locator('[data-checks="3"], [data-checks="4"], [data-checks="5"], [data-checks="6"]')).waitFor({ timeout: SHOWN_WITHIN_MS });
    expect(await group.count()).toBe(1);
    expect(await page.locator(`.latest tr.check[data-subject-id="${reviewed}"]`).count()).toBe(0);
    await group.getByRole('button', { name: /\d+ checks/ }).click();
    const unfolded = page.locator(`.latest tr.check[data-kind="POST_CHECK"][data-subject-id="${reviewed}"]`);
    await unfolded.nth(2).waitFor();
    expect(await unfolded.count()).toBe(Number(await group.getAttribute('data-checks')));
  }, 60_000);

  browserTest('shows a failed record’s attempts with their errors, retries it from its detail, and counts attempts per run', async () => {
    const location = accountOf(1).locations[0]!;
    await sandboxOf(t.url).fail({ count: 1 + RETRY_LIMIT, status: 503, method: 'POST', pathContains: `/locations/${providerIdOf(location.alphaLocationName!)}/localPosts` });
    const failing = await post(1, 'Meets an outage, retried from its detail');
    await eventually(async () => {
      const work = await gql('query ($s: ID!) { asyncWork(subjectId: $s, statuses: [DEAD_LETTERED]) { totalCount } }', { s: failing });
      return work.asyncWork.totalCount === 1 ? true : undefined;
    }, 20_000, 'the publish to be dead-lettered');
    const page = await signedIn();
    // The failures panel leads to the record.
    await page.locator(`.failures tr[data-subject-id="${failing}"] a.record-link`).click();
    const work = page.locator(`.record[data-record-id="${failing}"] .work[data-kind="POST_PUBLISH"]`);
    await work.and(page.locator('[data-status="DEAD_LETTERED"]')).waitFor();
    await work.locator('tr[data-attempt="1"][data-outcome="RETRIED"] td.error').filter({ hasText: /\S/ }).waitFor();
    await work.locator('tr[data-attempt="2"][data-outcome="DEAD_LETTERED"] td.error').filter({ hasText: /\S/ }).waitFor();
    await page.locator(`.record[data-record-id="${failing}"] dd[data-state="ERROR"]`).waitFor();

    await work.getByRole('button', { name: 'Retry' }).click();
    await pollPost(t.url, acting.token, accountOf(1).account.id, failing, (found) => found.state === 'LIVE');
    await work.and(page.locator('[data-status="SUCCEEDED"][data-run="2"]')).waitFor({ timeout: RECORD_READ_MS + SHOWN_WITHIN_MS });
    await work.locator('tr[data-attempt="3"][data-run="2"][data-outcome="SUCCEEDED"]').filter({ hasText: '1/2, run 2' }).waitFor();
    // The list counts the attempts of the run, not 3/2.
    await page.locator(`.latest tr[data-kind="POST_PUBLISH"][data-subject-id="${failing}"][data-status="SUCCEEDED"] td.attempts`).filter({ hasText: /^1\/2, run 2$/ }).waitFor();
    await page.locator(`.record[data-record-id="${failing}"] dd[data-state="LIVE"]`).waitFor({ timeout: RECORD_READ_MS + SHOWN_WITHIN_MS });
  }, 90_000);

  browserTest('lists an endpoint’s deliveries with the request and each answer, redelivers one, and writes every time in one format', async () => {
    hooks.answer = (_request, response) => response.writeHead(503, { 'content-type': 'text/plain' }).end('receiver down for maintenance');
    const endpoint = (await gql('mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }', {
      input: { url: hooks.url, eventTypes: ['POST_STATE_CHANGED'], description: 'Acting receiver' },
    })).createWebhookEndpoint.endpoint.id as string;
    const told = await post(0, 'Told to the receiver');
    const sent = await hooks.nth((request) => request.json.record_id === told);
    await eventually(async () => {
      const data = await gql('query ($e: ID!, $id: ID!) { webhookDeliveries(endpointId: $e, eventId: $id) { nodes { attempts } } }', { e: endpoint, id: sent.json.id });
      return data.webhookDeliveries.nodes[0]?.attempts === 1 ? true : undefined;
    }, 20_000, 'the attempt to be recorded');
    hooks.answer = (_request, response) => response.end('thanks, got it');

    const page = await signedIn();
    const row = page.locator(`.webhooks tr[data-endpoint-id="${endpoint}"]`);
    await row.getByRole('button', { name: /Deliveries/ }).click();
    const delivery = page.locator(`.deliveries[data-endpoint-id="${endpoint}"] details[data-event-id="${sent.json.id}"]`).first();
    await delivery.locator('summary').click();
    const attempt = delivery.locator('.attempt[data-attempt="1"][data-status-code="503"]');
    await attempt.locator('.response-excerpt').filter({ hasText: 'receiver down for maintenance' }).waitFor();
    await attempt.locator('.headers tr').filter({ hasText: 'Listings-Signature' }).filter({ hasText: sent.headers['listings-signature'] as string }).waitFor();
    expect(await delivery.locator('.request-body').textContent()).toBe(sent.body);

    await delivery.getByRole('button', { name: 'Redeliver' }).click();
    const again = page.locator(`.deliveries[data-endpoint-id="${endpoint}"] details[data-event-id="${sent.json.id}"][data-delivery-status="SUCCEEDED"]`).filter({ hasText: 'a redelivery' });
    await again.waitFor({ timeout: 20_000 });
    await again.locator('summary').click();
    await again.locator('.attempt[data-status-code="200"] .response-excerpt').filter({ hasText: 'thanks, got it' }).waitFor();

    // Every panel's times, the webhooks' included, in the one format.
    await page.locator('.latest time').first().waitFor();
    const times = await page.locator('time').allTextContents();
    expect(times.length).toBeGreaterThan(3);
    expect(times.filter((text) => !ONE_FORMAT.test(text))).toEqual([]);
    expect(await page.locator('.webhooks time').count()).toBeGreaterThan(0);
  }, 90_000);
});
