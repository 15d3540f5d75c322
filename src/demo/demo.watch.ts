import type { EventBus } from '../events/event-bus';

/** How often a wait looks again when no event came (an event may be lost: the bus is best effort). */
const FALLBACK_MS = 1000;

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
    events: EventBus,
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
    for (;;) {
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
