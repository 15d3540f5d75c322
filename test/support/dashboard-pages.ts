import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { ROOT } from './process';

/** Where a failed dashboard test leaves each open page's screenshot and console log. */
const RESULTS_DIR = path.join(ROOT, 'test-results');

/**
 * The dashboard's tabs of a browser test file (test/dashboard.browser.test.ts and the others that drive /dashboard):
 * each opened with its console and requests kept, closed when the test ends, and left as evidence when it failed.
 */
export class DashboardPages {
  /** The pages the running test opened, with their console lines. */
  private readonly consoles = new Map<Page, string[]>();

  constructor(
    /** The service's base URL and the browser's context, once the file's beforeAll made them. */
    private readonly serverUrl: () => string,
    private readonly context: () => BrowserContext,
  ) {}

  /** A test that, when it fails, leaves each open page's screenshot and console log under test-results/. */
  test(name: string, run: () => Promise<void>, timeoutMs?: number): void {
    it(
      name,
      async () => {
        try {
          await run();
        } catch (error) {
          await this.keepEvidence(name);
          throw error;
        } finally {
          for (const page of this.consoles.keys()) await page.close();
          this.consoles.clear();
        }
      },
      timeoutMs,
    );
  }

  private async keepEvidence(name: string): Promise<void> {
    mkdirSync(RESULTS_DIR, { recursive: true });
    const slug = name.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').slice(0, 80);
    let n = 0;
    for (const [page, lines] of this.consoles) {
      n += 1;
      const file = path.join(RESULTS_DIR, `dashboard-${slug}-${n}`);
      await page.screenshot({ path: `${file}.png`, fullPage: true }).catch((error: unknown) => lines.push(`(no screenshot: ${String(error)})`));
      writeFileSync(`${file}.console.txt`, `${page.url()}\n${lines.join('\n')}\n`);
      console.log(`dashboard test failed: ${file}.png and ${file}.console.txt`);
    }
  }

  /** A new tab on the dashboard, its console kept (and every request it makes, to check where they go). */
  async open(): Promise<{ page: Page; requests: string[] }> {
    const page = await this.context().newPage();
    const lines: string[] = [];
    const requests: string[] = [];
    this.consoles.set(page, lines);
    page.on('console', (message) => lines.push(`[${message.type()}] ${message.text()}`));
    page.on('pageerror', (error) => lines.push(`[pageerror] ${error.message}`));
    page.on('request', (request) => requests.push(request.url()));
    page.on('websocket', (socket) => requests.push(socket.url()));
    await page.goto(`${this.serverUrl()}/dashboard`);
    return { page, requests };
  }
}

/** Signs in as a person does: types the token, presses the button, and waits for the live connection. */
export async function signIn(page: Page, token: string, who: string | RegExp): Promise<void> {
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('header .who').filter({ hasText: who }).waitFor();
  await page.locator('[data-connectivity="live"]').waitFor();
}
