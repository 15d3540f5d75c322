import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { launchChromium } from './support/chromium';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { minimalLocationBody } from './support/locations';
import { eventually, pollPost, providerIdOf, sandboxOf } from './support/posts';
import { ROOT } from './support/process';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The operations dashboard (/dashboard) in a real browser: Debian's Chromium, driven by playwright-core, against
 * the whole service and its provider sandbox. A person signs in with a token and watches work move through its
 * states: each change must show within 2 s of it happening at the service (waited for as an event, never slept).
 * A failed test leaves a screenshot and the page's console under test-results/. There is no skipping: a Chromium
 * that cannot start fails the file.
 */

const RESULTS_DIR = path.join(ROOT, 'test-results');
/** A change at the service must be on the page within this. */
const SHOWN_WITHIN_MS = 2000;
/** How long a provider call is held, so that a job is seen RUNNING. */
const HELD_MS = 3000;
const RETRY_LIMIT = 1;

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
/** The pages the running test opened, with their console lines: closed when it ends. */
const consoles = new Map<Page, string[]>();

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

/** A test that, when it fails, leaves each open page's screenshot and console log under test-results/. */
function browserTest(name: string, run: () => Promise<void>, timeoutMs?: number): void {
  it(
    name,
    async () => {
      try {
        await run();
      } catch (error) {
        await keepEvidence(name);
        throw error;
      } finally {
        for (const page of consoles.keys()) await page.close();
        consoles.clear();
      }
    },
    timeoutMs,
  );
}

async function keepEvidence(name: string): Promise<void> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const slug = name.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').slice(0, 80);
  let n = 0;
  for (const [page, lines] of consoles) {
    n += 1;
    const file = path.join(RESULTS_DIR, `dashboard-${slug}-${n}`);
    await page.screenshot({ path: `${file}.png`, fullPage: true }).catch((error: unknown) => lines.push(`(no screenshot: ${String(error)})`));
    writeFileSync(`${file}.console.txt`, `${page.url()}\n${lines.join('\n')}\n`);
    console.log(`dashboard test failed: ${file}.png and ${file}.console.txt`);
  }
}

/** A new tab on the dashboard, its console kept (and every request it makes, to check where they go). */
async function openDashboard(): Promise<{ page: Page; requests: string[] }> {
  const page = await context.newPage();
  const lines: string[] = [];
  const requests: string[] = [];
  consoles.set(page, lines);
  page.on('console', (message) => lines.push(`[${message.type()}] ${message.text()}`));
  page.on('pageerror', (error) => lines.push(`[pageerror] ${error.message}`));
  page.on('request', (request) => requests.push(request.url()));
  page.on('websocket', (socket) => requests.push(socket.url()));
  await page.goto(`${t.url}/dashboard`);
  return { page, requests };
}

/** Signs in as a person does: types the token, presses the button, and waits for the live connection. */
async function signIn(page: Page, token: string, who: string | RegExp): Promise<void> {
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('header .who').filter({ hasText: who }).waitFor();
  await page.locator('[data-connectivity="live"]').waitFor();
}

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
