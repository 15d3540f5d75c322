import type { ProviderName } from './provider-error';

/**
 * A provider's request budget (docs/jobs.md, "Provider budgets"): every call of the whole deployment to the provider
 * takes a slot, slots are spaced at the budget's rate, and every process reserves them from one store (PostgreSQL's
 * `provider_budget`, or Redis), so N processes together never go faster than the budget. A process reserves a few
 * slots at a time for the calls waiting then (one statement for several calls), holds at most a quarter of a second
 * of slots ahead (so a call asked later is not queued behind a long reservation), and hands them to its waiting calls
 * by priority: the work a person asked for (priority 0) before bulk work (a campaign's posts, below 0).
 */

/**
 * Where the deployment's slots and pauses are kept (PostgreSQL, or Redis with REDIS_URL: src/limits/). Slots are
 * times on the store's clock, the one clock every process shares; each process maps them onto its own (StoreClock).
 */
export interface SlotStore {
  /** Reserves `count` slots `intervalMs` apart for `provider`, none before its pause ends: when the first is. */
  reserve(provider: ProviderName, count: number, intervalMs: number): Promise<ReservedSlots>;
  /** No process calls `provider` for `forMs` from now (a 429 naming its project quota): its next slots come after. */
  pause(provider: ProviderName, forMs: number): Promise<void>;
  /** The pauses not over yet, with how long each has left. */
  pauses(): Promise<{ provider: ProviderName; leftMs: number }[]>;
}

/** Times on the store's clock, in ms since the epoch. */
export interface ReservedSlots {
  /** The first slot reserved. */
  firstAtMs: number;
  /** The store's clock as it answered. */
  nowMs: number;
}

/**
 * The store's clock against this process's, NTP's way: the store read its clock somewhere between the question and
 * the answer, so the exchange that took least time bounds the offset best. A slow exchange (a pool's queue, a row
 * lock, a busy event loop) would date its slots off by up to half its time, and two processes' slots would then
 * bunch at the provider; its slots are dated with the best offset seen instead. A best exchange ages (a millisecond
 * every AGEING_MS), so a clock that moved is followed within seconds.
 */
export class StoreClock {
  private best: { offsetMs: number; roundTripMs: number; atMs: number } | undefined;

  static readonly AGEING_MS = 10_000;

  /** An exchange asked at `askedAtMs` and answered at `answeredAtMs` (this process's clock), the store's clock `storeNowMs`. */
  observe(askedAtMs: number, answeredAtMs: number, storeNowMs: number): void {
    const roundTripMs = answeredAtMs - askedAtMs;
    const best = this.best;
    if (best && roundTripMs > best.roundTripMs + (answeredAtMs - best.atMs) / StoreClock.AGEING_MS) return;
    this.best = { offsetMs: storeNowMs - (askedAtMs + answeredAtMs) / 2, roundTripMs, atMs: answeredAtMs };
  }

  /** A time of the store's clock on this process's; the first exchange must have been observed. */
  local(storeMs: number): number {
    return storeMs - this.best!.offsetMs;
  }
}

/** What the budget tells of itself (metrics, the dashboard). */
export interface BudgetReading {
  provider: ProviderName;
  perSecond: number;
  /** Calls of this process waiting for a slot now. */
  waiting: number;
  /** Calls this process has made in a slot, since it started. */
  granted: number;
  /** Slots given up because their call could not start within the budget's lateness of them (a busy process). */
  late: number;
}

/** A budget as it is set: `count` calls in any `windowMs` (`20/s`: 20 in 1,000 ms; `300/min`: 300 in 60,000 ms). */
export interface BudgetRate {
  count: number;
  windowMs: number;
}

/** What a cancelled wait rejects with: the signal's reason when it is an error. */
function cancellation(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('the call was cancelled while it waited for its slot');
}

/**
 * How late a call may start after its slot, as a share of the budget's window, and at most. The provider counts its
 * calls in a rolling window; a budget set a share m of the quota under it spaces Q + 1 calls about m of a window
 * wider than the window, and a call that starts d late narrows that by d. Lateness within 1.5% of the window keeps
 * a budget 2.5% under the quota within it, with a millisecond or ten left for the network (docs/jobs.md).
 */
const LATE_SHARE_OF_WINDOW = 0.015;
const LATE_SLOT_MAX_MS = 50;

/** How far ahead a process holds slots, at most. */
const HORIZON_MS = 250;

interface Waiter {
  priority: number;
  /** Given its slot's time (ms since the epoch, this process's clock). */
  start: (atMs: number) => void;
  /** While it holds a slot: when the slot is, and how to give it up (its timer cleared). */
  slotAtMs?: number;
  release?: () => void;
}

export interface BudgetLog {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

export class ProviderBudget {
  private readonly waiting: Waiter[] = [];
  private reserving = false;
  /** When the last slot this process holds is. */
  private heldUntilMs = 0;
  private granted = 0;
  /** Slots given up because their call could not start in time. */
  private late = 0;
  /** The calls holding a slot, waiting for its time. */
  private readonly held = new Set<Waiter>();
  /** Until when the provider is paused, as this process heard (a 429 naming its project quota). */
  private pausedUntilMs = 0;
  /** Set while the store cannot be reached: calls then go unpaced (a 429 still makes their jobs wait). */
  private storeDown = false;
  private readonly storeClock = new StoreClock();
  readonly perSecond: number;
  readonly intervalMs: number;
  /** How late a call may start after its slot (LATE_SHARE_OF_WINDOW). */
  readonly lateLimitMs: number;
  private readonly chunk: number;

  constructor(
    readonly provider: ProviderName,
    rate: BudgetRate,
    private readonly store: SlotStore,
    private readonly log: BudgetLog,
    /**
     * The priority of the call being made (src/observability/origin.ts's `currentCallPriority`, given by the stack:
     * observability already reads the providers' names, so the providers do not import it back).
     */
    private readonly callPriority: () => number | undefined = () => undefined,
  ) {
    this.perSecond = (rate.count * 1000) / rate.windowMs;
    this.intervalMs = rate.windowMs / rate.count;
    this.lateLimitMs = Math.min(LATE_SLOT_MAX_MS, LATE_SHARE_OF_WINDOW * rate.windowMs);
    this.chunk = Math.max(1, Math.ceil(HORIZON_MS / this.intervalMs));
  }

  /** Resolves when the call may be made; rejects with the signal's reason when it is cancelled first. */
  take(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(cancellation(signal));
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const cancel = () => {
        clearTimeout(timer);
        this.held.delete(waiter);
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(cancellation(signal!));
      };
      signal?.addEventListener('abort', cancel, { once: true });
      const waiter: Waiter = {
        // Its job's priority (pg-boss's: 0 for a person's work, below for bulk), carried by runCarrying (src/jobs/run-job.ts).
        priority: this.callPriority() ?? 0,
        start: (atMs) => {
          waiter.slotAtMs = atMs;
          waiter.release = () => clearTimeout(timer);
          this.held.add(waiter);
          const go = () => {
            const now = Date.now();
            this.held.delete(waiter);
            // A slot used late narrows the provider's window over it and the calls after it (a busy event loop, a
            // slow answer from the store): past the budget's lateness it is given up and the call waits for a new
            // one, ahead of its priority's. Each call keeps to its own slot: spacing a call from a late one instead
            // would carry the lateness, and each timer's overshoot, on to every call after it.
            if (now - atMs > this.lateLimitMs && !this.storeDown) {
              this.late += 1;
              this.enqueue(waiter, true);
              return;
            }
            signal?.removeEventListener('abort', cancel);
            this.granted += 1;
            resolve();
          };
          const delay = atMs - Date.now();
          if (delay <= 0) go();
          else timer = setTimeout(go, delay);
        },
      };
      this.enqueue(waiter, false);
    });
  }

  /** Higher priority first; in order of arrival within one, or first of its priority when its slot was given up. */
  private enqueue(waiter: Waiter, first: boolean): void {
    let at = this.waiting.length;
    while (at > 0 && (this.waiting[at - 1]!.priority < waiter.priority || (first && this.waiting[at - 1]!.priority === waiter.priority))) at -= 1;
    this.waiting.splice(at, 0, waiter);
    void this.reserve();
  }

  /**
   * The provider is paused until `untilMs` (a 429 naming its project quota, heard on the event bus): the calls of this
   * process holding a slot before then give it up and wait for new ones, which come after the pause (the store keeps
   * it too; this process waits for it even when the store could not be told).
   */
  pauseUntil(untilMs: number): void {
    if (untilMs <= this.pausedUntilMs) return;
    this.pausedUntilMs = untilMs;
    for (const waiter of [...this.held]) {
      if (waiter.slotAtMs! >= untilMs) continue;
      waiter.release!();
      this.held.delete(waiter);
      this.enqueue(waiter, true);
    }
  }

  reading(): BudgetReading {
    return { provider: this.provider, perSecond: this.perSecond, waiting: this.waiting.length, granted: this.granted, late: this.late };
  }

  /** Reserves slots for the calls waiting, a chunk at a time, holding no more than HORIZON_MS of them ahead. */
  private async reserve(): Promise<void> {
    if (this.reserving) return;
    this.reserving = true;
    try {
      while (this.waiting.length > 0) {
        const aheadMs = Math.max(this.heldUntilMs - Date.now() - HORIZON_MS, this.pausedUntilMs - Date.now());
        if (aheadMs > 0) await new Promise((resolve) => setTimeout(resolve, aheadMs));
        const count = Math.min(this.waiting.length, this.chunk);
        if (count === 0) break;
        let firstAtMs: number;
        try {
          const askedAt = Date.now();
          const reserved = await this.store.reserve(this.provider, count, this.intervalMs);
          this.storeClock.observe(askedAt, Date.now(), reserved.nowMs);
          firstAtMs = this.storeClock.local(reserved.firstAtMs);
          if (this.storeDown) this.log.info({ provider: this.provider }, 'provider budget reachable again: calls are paced');
          this.storeDown = false;
        } catch (error) {
          // Without the store no slot can be shared: the calls go now (a 429 from the provider still makes their jobs
          // wait) rather than fail work that may succeed. Said once per outage.
          if (!this.storeDown) this.log.warn({ err: error, provider: this.provider }, 'provider budget unreachable: calls go unpaced until it is back');
          this.storeDown = true;
          firstAtMs = Date.now();
        }
        const taken = this.waiting.splice(0, count);
        const spacingMs = this.storeDown ? 0 : this.intervalMs;
        taken.forEach((waiter, index) => waiter.start(firstAtMs + index * spacingMs));
        this.heldUntilMs = Math.max(this.heldUntilMs, firstAtMs + (taken.length - 1) * spacingMs);
      }
    } finally {
      this.reserving = false;
    }
  }
}

/** Each provider's budget in this process; a provider without one is called as fast as its work runs. */
export type ProviderBudgets = Partial<Record<ProviderName, ProviderBudget>>;

/** The budgets of the configuration (undefined: none). */
export function providerBudgetsOf(
  rates: Partial<Record<ProviderName, BudgetRate | undefined>>,
  store: SlotStore,
  log: BudgetLog,
  callPriority: () => number | undefined,
): ProviderBudgets {
  const budgets: ProviderBudgets = {};
  for (const provider of ['alpha', 'beta'] as const) {
    const rate = rates[provider];
    if (rate) budgets[provider] = new ProviderBudget(provider, rate, store, log, callPriority);
  }
  return budgets;
}
