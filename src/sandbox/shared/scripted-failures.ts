import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';

/** A scripted failure: the next `count` calls that match fail with `status`. */
export interface ScriptedFailure {
  count: number;
  /** An HTTP status from 400 to 599, or 0: the connection is dropped without an answer. */
  status: number;
  /** Matches the HTTP method, case-insensitively; absent: any. */
  method?: string;
  /** Matches when the request's path and query contain it; absent: any call of the provider's API (never OAuth's). */
  pathContains?: string;
  /**
   * before (default): the call fails without effect. after: the call takes effect, then its answer fails, as when a
   * create succeeds but its response is lost.
   */
  when: 'before' | 'after';
}

/** The body of POST /_control/fail. */
export const scriptedFailureSchema = z.strictObject({
  count: z.number().int().min(1),
  status: z
    .number()
    .int()
    .refine((status) => status === 0 || (status >= 400 && status <= 599), 'must be 0 (drop the connection) or 400-599'),
  method: z.string().min(1).optional(),
  pathContains: z.string().min(1).optional(),
  when: z.enum(['before', 'after']).default('before'),
});

/** The failures a sandbox was told to script, used up call by call. */
export class ScriptedFailures {
  private failures: ScriptedFailure[] = [];

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

  /**
   * Uses up one call of the first scripted failure that matches, if any. `aimedOnly`: only a failure whose
   * pathContains names this call matches (OAuth's calls are not hit by failures aimed at no path).
   */
  take(method: string, url: string, options: { aimedOnly?: boolean } = {}): ScriptedFailure | undefined {
    const index = this.failures.findIndex(
      (failure) =>
        (failure.method === undefined || failure.method.toUpperCase() === method.toUpperCase()) &&
        (failure.pathContains === undefined ? !options.aimedOnly : url.includes(failure.pathContains)),
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
 * A call under its scripted failure, if any: `before` answers the failure without doing the work; `after` does the
 * work, whose effect stays, and answers the failure in place of its answer.
 */
export function answerOrFail<A>(
  failure: ScriptedFailure | undefined,
  fail: (status: number) => FastifyReply,
  work: () => A,
  send: (answer: A) => FastifyReply,
): FastifyReply {
  if (failure?.when === 'before') return fail(failure.status);
  const answer = work();
  if (failure?.when === 'after') return fail(failure.status);
  return send(answer);
}
