/**
 * How a benchmark stops early: a global time limit, Ctrl-C or SIGTERM abort its signal once, with a reason to
 * report; cleaning up must not hang either, so a minute later the process goes, killing what is left.
 */
export interface BenchAbort {
  signal: AbortSignal;
  /** Why it stopped early; undefined when it ran to the end. */
  reason(): string | undefined;
  /** The run ended: the time limit no longer applies. */
  finished(): void;
}

export function abortOnLimits(timeoutMs: number, forceStop: () => void): BenchAbort {
  const controller = new AbortController();
  let reason: string | undefined;
  const abort = (why: string) => {
    if (reason) return;
    reason = why;
    console.log(`\n${why}: stopping…`);
    controller.abort();
    setTimeout(() => {
      console.error('cleanup took over 60 s: exiting');
      forceStop();
      process.exit(3);
    }, 60_000).unref();
  };
  const timer = setTimeout(() => abort(`global timeout of ${timeoutMs / 1000} s reached`), timeoutMs);
  process.once('SIGINT', () => abort('interrupted (SIGINT)'));
  process.once('SIGTERM', () => abort('terminated (SIGTERM)'));
  return { signal: controller.signal, reason: () => reason, finished: () => clearTimeout(timer) };
}

/** Waits `ms`, or less when `signal` aborts first: a stopped run does not wait out its pauses. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
