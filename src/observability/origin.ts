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

/**
 * What a piece of work carries through its asynchronous calls: its origin, and the priority of its provider calls
 * (src/providers/shared/provider-budget.ts: a job's pg-boss priority). One AsyncLocalStorage for both: on Node 20
 * every enabled instance is copied onto every promise and callback the process makes (docs/benchmarks.md, "Issue
 * 27, fifth slice: fan-out"), so the process's own context costs one instance, not one per thing carried.
 */
interface Carried {
  origin?: Origin;
  callPriority?: number;
}

const storage = new AsyncLocalStorage<Carried>();

/**
 * Runs `run` carrying what `carried` names, and what it runs within for the rest (a job's priority stays within a
 * request's origin set inside it, and the other way round).
 */
export function runCarrying<T>(carried: Carried, run: () => T): T {
  const outer = storage.getStore();
  return storage.run(outer ? { ...outer, ...carried } : carried, run);
}

export function runWithOrigin<T>(origin: Origin, run: () => T): T {
  return runCarrying({ origin }, run);
}

export function currentOrigin(): Origin | undefined {
  return storage.getStore()?.origin;
}

/** The priority of the provider calls made now (runCarrying's `callPriority`), when one was set. */
export function currentCallPriority(): number | undefined {
  return storage.getStore()?.callPriority;
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
