import type { EventBus } from '../events/event-bus';

/** How often a wait looks again when no event came (an event may be lost: the bus is best effort). */
const FALLBACK_MS = 1000;

/**
 * The least time between two looks. Each look is several counts, and an organization's events may come hundreds a
 * second (a bench posting to the demo organization while its preparation waits): a look at each of them kept a
 * connection busy with counts (five statements per event, docs/benchmarks.md, "Seventh slice").
 */
const MIN_LOOK_INTERVAL_MS = 200;

/** A wait whose condition did not hold in time: what it waited for, and what was still missing. */
export class DemoWaitTimeout extends Error {
  override readonly name = 'DemoWaitTimeout';

  constructor(
    readonly what: string,
    readonly missing: string[],
  ) {
    super(`${what}: still waiting for ${missing.join(', ')}`);
  }
}

/**
 * Waits for one organization's records to reach a state. Its checks run again at each event of the organization
 * (a unit of work, a post or a location update changed: whichever process made the change, the event bus brings it)
 * and at least every second. Ends early when `signal` aborts (the process stops).
 */
export class OrganizationWatch {
  private poked = false;
  private wake: (() => void) | undefined;
  private readonly unsubscribes: (() => void)[];

  constructor(
    events: Pick<EventBus, 'subscribe'>,
    private readonly organizationId: string,
    private readonly signal: AbortSignal,
  ) {
    const onEvent = (payload: { organizationId: string }): void => {
      if (payload.organizationId === this.organizationId) this.poke();
    };
    this.unsubscribes = [
      events.subscribe('async-work.updated', onEvent),
      events.subscribe('post.updated', onEvent),
      events.subscribe('location-update-job.updated', onEvent),
    ];
    signal.addEventListener('abort', () => this.poke(), { once: true });
  }

  /**
   * Resolves once `missing()` answers nothing missing; throws DemoWaitTimeout after `timeoutMs`, and the signal's
   * reason when it aborts.
   */
  async until(what: string, missing: () => Promise<string[]>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (let lookedAt = -Infinity; ; ) {
      // A look waits out the interval since the one before; the events meanwhile make one look.
      const early = lookedAt + MIN_LOOK_INTERVAL_MS - Date.now();
      if (early > 0) await this.pause(early);
      lookedAt = Date.now();
      this.signal.throwIfAborted();
      this.poked = false;
      const left = await missing();
      if (left.length === 0) return;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new DemoWaitTimeout(what, left);
      await this.nextChange(Math.min(remaining, FALLBACK_MS));
    }
  }

  close(): void {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    this.poke();
  }

  private poke(): void {
    this.poked = true;
    this.wake?.();
  }

  /** `ms`, or until the abort; events meanwhile are kept for the next `nextChange`. */
  private pause(ms: number): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Until an event of the organization (one that came during the last check counts), `ms`, or the abort. */
  private nextChange(ms: number): Promise<void> {
    if (this.poked || this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
