import type { z } from 'zod';
import { excerptSuffix, isRetryableStatus, parseAnswerBody, parseJson, parseRetryAfter } from './answer';
import {
  baseUrlNow,
  sendHttp,
  TransportFailure,
  type BaseUrl,
  type HttpAnswer,
  type HttpRequest,
  type ProviderCallObserver,
  type TransportFailureKind,
} from './http';
import type { ProviderBudget } from './provider-budget';
import type { ProviderErrorInit } from './provider-error';

/**
 * How every provider client calls its provider: sendHttp with the client's timeout and observer, and every failure
 * judged here (retryable or not, Retry-After, what to quote of a body it cannot read) and named in the client's
 * own error class by its ProviderFailures. A client keeps its paths, its wire types and its ProviderFailures.
 */

export interface TransportOptions {
  baseUrl: BaseUrl;
  /** Per call, covering the answer's body too. Default 10000. */
  timeoutMs?: number;
  /** Told of every call as it ends (metrics, provider health). */
  observe?: ProviderCallObserver;
  /** The provider's request budget: every call waits for its slot (src/providers/shared/provider-budget.ts). */
  budget?: Pick<ProviderBudget, 'take'>;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** Per call: `signal` cancels the call (a stopping worker uses it); the client's own timeout still applies. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** A failure's provider-neutral facts, for the client's error class. */
export type Failure = Omit<ProviderErrorInit, 'provider'>;

/** A non-2xx answer, read. */
export interface ErrorAnswer {
  status: number;
  /** The body as JSON; undefined when it is not JSON. */
  json: unknown;
  retryable: boolean;
  retryAfterSeconds?: number;
}

export interface FailureName {
  reason: string;
  message: string;
}

/**
 * What is a client's own in its failures: its error class, its error body's format, its reasons and texts. `call`
 * is the name the client gave the call it made (`GET accounts/1`, `create local post`, the `token` endpoint).
 */
export interface ProviderFailures<E extends Error> {
  error: (failure: Failure) => E;
  /** The error of a body in the provider's own error format; undefined for any other (a proxy's HTML page). */
  fromBody: (answer: ErrorAnswer) => E | undefined;
  /** No whole answer arrived. */
  unanswered: (kind: TransportFailureKind, call: string, timeoutMs: number) => FailureName;
  /** A non-2xx answer without the provider's format: the transport adds the start of its body to the message. */
  unformatted: (status: number, call: string) => FailureName;
  /** A 2xx answer that is not the expected shape; `problems` are the first ones found. */
  unreadable: (call: string, problems: string) => FailureName;
}

export interface Transport {
  /** The provider's root URL as known now, without a trailing slash. */
  root: () => string;
  /** A 2xx answer; anything else throws the client's error. */
  send: (request: HttpRequest, call: string, signal: AbortSignal | undefined) => Promise<HttpAnswer>;
  /** The answer's body checked against `schema`, or the client's error. */
  read: <S extends z.ZodType>(schema: S, answer: HttpAnswer, call: string) => z.output<S>;
}

export function createTransport<E extends Error>(options: TransportOptions, failures: ProviderFailures<E>): Transport {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  function refused(answer: HttpAnswer, call: string): E {
    const { status, text } = answer;
    const read: ErrorAnswer = {
      status,
      json: parseJson(text),
      retryable: isRetryableStatus(status),
      retryAfterSeconds: parseRetryAfter(answer.headers.get('retry-after')),
    };
    const own = failures.fromBody(read);
    if (own) return own;
    // A proxy or load balancer in front of the provider answers in HTML or plain text.
    const { reason, message } = failures.unformatted(status, call);
    const { retryable, retryAfterSeconds } = read;
    return failures.error({ status, reason, message: `${message}${excerptSuffix(text)}`, retryable, retryAfterSeconds });
  }

  return {
    root: () => baseUrlNow(options.baseUrl),

    async send(request, call, signal) {
      let answer: HttpAnswer;
      try {
        // Cancelled while it waits for its slot: no call was made, as for one cancelled in flight.
        await options.budget?.take(signal).catch((error: unknown) => {
          throw new TransportFailure('cancelled', error);
        });
        answer = await sendHttp(request, { timeoutMs, signal, observe: options.observe });
      } catch (error) {
        if (!(error instanceof TransportFailure)) throw error;
        // No whole answer: the same call may succeed later.
        const named = failures.unanswered(error.kind, call, timeoutMs);
        throw failures.error({ status: 0, ...named, retryable: true, cause: error.cause });
      }
      if (answer.status < 200 || answer.status > 299) throw refused(answer, call);
      return answer;
    },

    read: (schema, answer, call) =>
      parseAnswerBody(schema, answer.text, (problems) =>
        failures.error({ status: answer.status, ...failures.unreadable(call, problems), retryable: false }),
      ),
  };
}
