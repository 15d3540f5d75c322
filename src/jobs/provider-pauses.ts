import type { ProviderName } from '../providers/shared/provider-error';

/**
 * Providers paused because a 429 named their project's quota (docs/jobs.md, "Waiting is not failing"): when each may
 * be called again, in this process. Every process hears of a pause on the event bus (`provider.paused`), so none calls
 * a paused provider; a process that starts during a pause reads it from the database (`provider_budget`).
 */
export class ProviderPauses {
  private readonly until = new Map<ProviderName, number>();
  private readonly listeners = new Set<(provider: ProviderName, untilMs: number) => void>();

  /** `provider` is paused until `untilMs` (ms since the epoch), or longer if it already was. */
  note(provider: ProviderName, untilMs: number): void {
    if (untilMs <= (this.until.get(provider) ?? 0)) return;
    this.until.set(provider, untilMs);
    for (const listener of this.listeners) listener(provider, untilMs);
  }

  /** Told of every pause that starts or grows, met here or heard of (the providers' budgets give up their slots). */
  listen(listener: (provider: ProviderName, untilMs: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The pauses not over at `nowMs`. */
  current(nowMs = Date.now()): { provider: ProviderName; untilMs: number }[] {
    return [...this.until].filter(([, untilMs]) => untilMs > nowMs).map(([provider, untilMs]) => ({ provider, untilMs }));
  }

  /** How long `provider` stays paused from `nowMs`: 0 when it is not. */
  remainingMs(provider: ProviderName, nowMs = Date.now()): number {
    return Math.max(0, (this.until.get(provider) ?? 0) - nowMs);
  }
}
