import type { ProviderCallObserver } from '../providers/shared/http';

/** The providers whose calls are watched, in the order they are shown. */
export const WATCHED_PROVIDERS = ['alpha', 'alpha-oauth', 'beta', 'beta-oauth'] as const;
export type WatchedProvider = (typeof WATCHED_PROVIDERS)[number];

/** How far back the figures look. */
export const HEALTH_WINDOW_SECONDS = 300;
/** Calls kept per provider: enough for the window at a steady ~15 calls a second; older ones drop first. */
const MAX_CALLS_KEPT = 5000;

interface Call {
  at: number;
  ms: number;
  failed: boolean;
  what: string;
}

export interface ProviderHealthFigures {
  provider: WatchedProvider;
  windowSeconds: number;
  calls: number;
  errors: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  lastError: string | null;
  lastErrorAt: Date | null;
}

/** A failure of the provider's (or of the way to it), not a refusal of what was asked: 5xx, 429, time-outs, network. */
function isProviderFailure(status: string): boolean {
  return status === 'timeout' || status === 'network' || status === '429' || status.startsWith('5');
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * The recent calls of this process to each provider, for the dashboard's provider health: how many, how many
 * failed, how fast. Per process (a worker process sees its jobs' calls; an API process its requests'): it is a view
 * for people, and /metrics carries the same calls for every process.
 */
export class ProviderHealthWindow {
  private readonly calls = new Map<WatchedProvider, Call[]>();

  constructor(private readonly now: () => number = Date.now) {}

  observer(provider: WatchedProvider): ProviderCallObserver {
    return ({ operation, status, seconds }) => {
      let kept = this.calls.get(provider);
      if (!kept) this.calls.set(provider, (kept = []));
      kept.push({ at: this.now(), ms: seconds * 1000, failed: isProviderFailure(status), what: `${operation}: ${status}` });
      if (kept.length > MAX_CALLS_KEPT) kept.splice(0, kept.length - MAX_CALLS_KEPT);
    };
  }

  figures(): ProviderHealthFigures[] {
    const since = this.now() - HEALTH_WINDOW_SECONDS * 1000;
    return WATCHED_PROVIDERS.map((provider) => {
      const recent = (this.calls.get(provider) ?? []).filter((call) => call.at >= since);
      const latencies = recent.map((call) => call.ms).sort((a, b) => a - b);
      const lastFailure = recent.filter((call) => call.failed).at(-1);
      return {
        provider,
        windowSeconds: HEALTH_WINDOW_SECONDS,
        calls: recent.length,
        errors: recent.filter((call) => call.failed).length,
        latencyP50Ms: percentile(latencies, 50),
        latencyP95Ms: percentile(latencies, 95),
        lastError: lastFailure?.what ?? null,
        lastErrorAt: lastFailure ? new Date(lastFailure.at) : null,
      };
    });
  }
}

/** Several observers of one call as one. */
export function observeAll(...observers: (ProviderCallObserver | undefined)[]): ProviderCallObserver {
  const present = observers.filter((observer): observer is ProviderCallObserver => observer !== undefined);
  return (call) => present.forEach((observe) => observe(call));
}
