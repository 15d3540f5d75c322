import { AsyncLocalStorage } from 'node:async_hooks';
import { traceContextIn, type TraceContext } from './trace-context';

/**
 * Where a piece of work started: the request whose id its log lines carry (as `reqId`, the key Fastify uses). Set for a request's whole lifecycle
 * (src/http/edge.ts), kept in every job the request enqueues (src/jobs/enqueue.ts), and set again while such a job
 * runs, so that jobs the job enqueues carry it on. In a job's data it also holds the W3C trace context of the span
 * that enqueued it (when tracing is on), so the job's span continues that trace.
 */
export interface Origin extends Partial<TraceContext> {
  requestId: string;
  /**
   * The work is meant to be refused by the provider (the demo's deliberate refusals): such a refusal is its
   * expected outcome, logged at info, not a warning (src/jobs/run-job.ts, docs/jobs.md). Carried on like the rest.
   */
  refusalExpected?: true;
}

const storage = new AsyncLocalStorage<Origin>();

export function runWithOrigin<T>(origin: Origin, run: () => T): T {
  return storage.run(origin, run);
}

export function currentOrigin(): Origin | undefined {
  return storage.getStore();
}

/** The origin kept in a job's data, when there is a well-formed one. */
export function originIn(data: unknown): Origin | undefined {
  if (typeof data !== 'object' || data === null || !('origin' in data)) return undefined;
  const { origin } = data;
  if (typeof origin !== 'object' || origin === null || !('requestId' in origin)) return undefined;
  if (typeof origin.requestId !== 'string') return undefined;
  const refusalExpected = 'refusalExpected' in origin && origin.refusalExpected === true;
  return { requestId: origin.requestId, ...(refusalExpected ? { refusalExpected } : {}), ...traceContextIn(origin) };
}
