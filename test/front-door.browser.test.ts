import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { launchChromium } from './support/chromium';
import { startServerProcess, type ServerProcess } from './support/process';
import { createTestDatabase } from './support/stack';

/**
 * A newcomer's first minute in a real browser (Chromium), on `npm start` as a developer runs it (development: the
 * demo seeded, its token known): the front door shows the token and links the reference page, which draws the REST
 * paths with the token filled in under Authorize, so "Try it out" answers at once.
 */

const UP = /GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/;
const DEMO_TOKEN = /its token \(also in .*demo\.json\):\n\s+(lgo_\S+)/;

const undo: (() => unknown)[] = [];
let url: string;
let token: string;
let browser: Awaited<ReturnType<typeof launchChromium>>['context'];

beforeAll(async () => {
  const database = await createTestDatabase();
  undo.push(() => database.drop());
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-front-'));
  undo.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const server: ServerProcess = startServerProcess({ DATABASE_URL: database.url, DATA_DIR: dataDir, NODE_ENV: 'development', PORT: '0' });
  undo.push(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
    await server.exited();
  });
  [, url] = (await server.waitFor(UP, 90_000)) as unknown as [string, string];
  [, token] = (await server.waitFor(DEMO_TOKEN)) as unknown as [string, string];
  const chromium = await launchChromium();
  undo.push(() => chromium.close());
  browser = chromium.context;
}, 120_000);

afterAll(async () => {
  for (const step of undo.splice(0).reverse()) await step();
});

test('the front door shows the demo token and leads to the reference page, which has it filled in', async () => {
  const page = await browser.newPage();
  const failed: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
  });
  await page.goto(url);
  await expect(page.locator('h1').textContent()).resolves.toBe('Listings Gateway');
  await expect(page.locator('#demo-token').textContent()).resolves.toBe(token);

  await page.getByRole('link', { name: 'REST reference' }).click();
  await page.waitForURL(`${url}/docs`);
  // Swagger UI has drawn the operations, and Authorize is locked: the token is in.
  await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
  await page.locator('.auth-wrapper .authorize.locked').waitFor();

  // Try it out on GET /organization: the request carries the demo token and is answered.
  const operation = page.locator('.opblock[id$="-getOrganization"]');
  await operation.locator('.opblock-summary').click();
  await operation.getByRole('button', { name: 'Try it out' }).click();
  const [request] = await Promise.all([
    page.waitForRequest((candidate) => new URL(candidate.url()).pathname === '/organization'),
    operation.getByRole('button', { name: 'Execute' }).click(),
  ]);
  expect(await request.headerValue('authorization')).toBe(`Bearer ${token}`);
  expect((await request.response())?.status()).toBe(200);
  expect(failed).toEqual([]);
  await page.close();
}, 120_000);
