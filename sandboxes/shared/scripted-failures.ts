import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Sleeper } from './sleeper';

/**
 * A scripted fault: the next `count` calls that match are held `delayMs` (slow), then fail with `status`, or, without
 * a `status`, are answered as usual once the delay is over (a slow call: its effect happens even when the caller
 * has given up waiting, as at a real provider).
 */
export interface ScriptedFailure {
  count: number;
  /** An HTTP status from 400 to 599, or 0: the connection is dropped without an answer. Absent: no failure, only the delay. */
  status?: number;
  /** How long each matching call is held before anything else happens (ms); absent: 0. */
  delayMs?: number;
  /** Matches the HTTP method, case-insensitively; absent: any. */
  method?: string;
  /** Matches when the request's path and query contain it; absent: any call of the provider's API (never OAuth's). */
  pathContains?: string;
  /** Matches when the request's body (its JSON as sent, or its form) contains it: calls of one path told apart. */
  bodyContains?: string;
  /**
   * before (default): the call fails without effect. after: the call takes effect, then its answer fails, as when a
   * create succeeds but its response is lost.
   */
  when: 'before' | 'after';
}

/** The longest a scripted delay may hold a call: ten minutes. */
export const MAX_SCRIPTED_DELAY_MS = 600_000;

/** The body of POST /_control/fail. */
export const scriptedFailureSchema = z
  .strictObject({
    count: z.number().int().min(1),
    status: z
      .number()
      .int()
      .refine((status) => status === 0 || (status >= 400 && status <= 599), 'must be 0 (drop the connection) or 400-599')
      .optional(),
    delayMs: z.number().int().min(0).max(MAX_SCRIPTED_DELAY_MS).optional(),
    method: z.string().min(1).optional(),
    pathContains: z.string().min(1).optional(),
    bodyContains: z.string().min(1).optional(),
    when: z.enum(['before', 'after']).default('before'),
  })
  .refine((failure) => failure.status !== undefined || (failure.delayMs ?? 0) > 0, {
    message: 'is required unless delayMs holds the calls',
    path: ['status'],
  });

export interface TakeOptions {
  /** Only a rule whose pathContains names the call matches (OAuth's endpoints). */
  aimedOnly?: boolean;
  /** The call's body as text (bodyTextOf), for bodyContains. */
  body?: string;
}

/** A parsed request body as the text a rule's bodyContains is looked for in. */
export function bodyTextOf(body: unknown): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  return JSON.stringify(body);
}

/** The failures a sandbox was told to script, used up call by call, and the calls held by a delay now. */
export class ScriptedFailures {
  private failures: ScriptedFailure[] = [];
  private heldNow = 0;

  add(failure: ScriptedFailure): void {
    this.failures.push(failure);
  }

  clear(): void {
    this.failures = [];
  }

  /** Those not used up yet. */
  list(): ScriptedFailure[] {
    return this.failures.map((failure) => ({ ...failure }));
  }

  /** Calls waiting out a delay (the configured latency or a scripted delayMs) at this moment. */
  get held(): number {
    return this.heldNow;
  }

  /** Waits `ms` (nothing for 0), counted in `held` meanwhile. */
  async hold(ms: number, sleeper: Sleeper): Promise<void> {
    if (ms <= 0) return;
    this.heldNow += 1;
    try {
      await sleeper.sleep(ms);
    } finally {
      this.heldNow -= 1;
    }
  }

  /**
   * Uses up one call of the first scripted failure that matches, if any. `aimedOnly`: only a failure whose
   * pathContains names this call matches (OAuth's calls are not hit by failures aimed at no path).
   */
  take(method: string, url: string, options: TakeOptions = {}): ScriptedFailure | undefined {
    const index = this.failures.findIndex(
      (failure) =>
        (failure.method === undefined || failure.method.toUpperCase() === method.toUpperCase()) &&
        (failure.pathContains === undefined ? !options.aimedOnly : url.includes(failure.pathContains)) &&
        (failure.bodyContains === undefined || (options.body ?? '').includes(failure.bodyContains)),
    );
    if (index < 0) return undefined;
    const failure = this.failures[index]!;
    if (failure.count <= 1) this.failures.splice(index, 1);
    else this.failures[index] = { ...failure, count: failure.count - 1 };
    return failure;
  }
}

/** Status 0 of a scripted failure: no answer at all, so the client sees the connection close, a network error. */
export function dropConnection(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.hijack();
  request.raw.socket.destroy();
  return reply;
}

/**
 * A call under its scripted failure, if any (its delay already waited out): `before` answers the failure without
 * doing the work; `after` does the work, whose effect stays, and answers the failure in place of its answer. A rule
 * without a status only delayed the call: it is answered as usual.
 */
export function answerOrFail<A>(
  failure: ScriptedFailure | undefined,
  fail: (status: number) => FastifyReply,
  work: () => A,
  send: (answer: A) => FastifyReply,
): FastifyReply {
  const status = failure?.status;
  if (status !== undefined && failure?.when === 'before') return fail(status);
  const answer = work();
  if (status !== undefined && failure?.when === 'after') return fail(status);
  return send(answer);
}
