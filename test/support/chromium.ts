import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (.ci/run installs it when missing): the browser every browser test drives. */
export const CHROMIUM = '/usr/bin/chromium';

/** Flags for this machine's closed network (docs of the machine kind): no background connections, no QUIC. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium with a profile of its own; `close` ends it and removes the profile. Never skips: a Chromium that cannot start fails. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'lg-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw new Error(
      `Chromium could not start from ${CHROMIUM} (Debian's package: apt-get install chromium; .ci/run installs it when missing): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  context.setDefaultTimeout(15_000);
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
