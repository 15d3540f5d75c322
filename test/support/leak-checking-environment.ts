import { createHook, type AsyncHook } from 'node:async_hooks';
import NodeEnvironment from 'jest-environment-node';

/**
 * The node test environment, plus one rule: a test file leaves nothing running. After the file's own afterAll
 * hooks, every handle and request that keeps the process alive (sockets, servers, timers, child processes) must be
 * back to what the worker had before the file started; otherwise the file fails, naming what is left. A leak shows
 * up where it is made, instead of as "a worker process has failed to exit gracefully" or a require after teardown
 * in whichever file runs next in the same worker.
 *
 * LEAK_STACKS=1 adds where each leftover was created (slow: a stack trace per handle).
 */

/** How long a closed handle may take to disappear (sockets finish closing on a later tick). */
const SETTLE_MS = 5000;

type Counts = Map<string, number>;

function countResources(): Counts {
  const counts: Counts = new Map();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

function excess(now: Counts, baseline: Counts): string[] {
  const extra: string[] = [];
  for (const [type, count] of now) {
    const more = count - (baseline.get(type) ?? 0);
    if (more > 0) extra.push(`${type} x${more}`);
  }
  return extra;
}

export default class LeakCheckingEnvironment extends NodeEnvironment {
  private baseline: Counts = new Map();
  private hook: AsyncHook | undefined;
  private readonly origins = new Map<number, { type: string; stack: string }>();

  override async setup(): Promise<void> {
    await super.setup();
    this.baseline = countResources();
    if (process.env.LEAK_STACKS === '1') {
      this.hook = createHook({
        init: (id, type) => {
          if (type !== 'PROMISE') this.origins.set(id, { type, stack: new Error().stack ?? '' });
        },
        destroy: (id) => void this.origins.delete(id),
      }).enable();
    }
  }

  override async teardown(): Promise<void> {
    const deadline = Date.now() + SETTLE_MS;
    let left = excess(countResources(), this.baseline);
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 20).unref());
      left = excess(countResources(), this.baseline);
    }
    this.hook?.disable();
    await super.teardown();
    if (left.length > 0) {
      const origins = [...this.origins.values()]
        .filter((origin) => left.some((entry) => entry.startsWith(origin.type)))
        .map((origin) => `${origin.type}\n${origin.stack}`)
        .slice(0, 10);
      throw new Error(
        `This test file left running: ${left.join(', ')}. Close what it started in afterAll.` +
          (origins.length > 0 ? `\nCreated at:\n${origins.join('\n\n')}` : '\n(LEAK_STACKS=1 shows where they were created.)'),
      );
    }
  }
}
