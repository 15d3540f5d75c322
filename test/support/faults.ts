import { Writable } from 'node:stream';
import { Client } from 'pg';
import { UNAVAILABLE_MESSAGE, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../src/errors/dependency-unavailable';
import type { JsonResponse } from './http';

/**
 * What the fault tests share: a ledger that judges every answer a client got while a dependency was failing (the
 * documented outcomes only: a success, a 4xx the request deserves, or the documented 503), counts them for the
 * note, and keeps every answer that was anything else; a log the test reads; and an administrator's session on the
 * service's database.
 */

/** What a client must never read: a stack frame, SQL, or the words of a driver, the network or a library of ours. */
const INTERNALS: RegExp[] = [
  /\\n\s+at |\bat [\w.<>$]+ \(/,
  /\.(?:ts|js):\d+/,
  /\b(?:select .* from|insert into|delete from|update \w+ set)\b/i,
  /terminating connection|administrator command|connection terminated|connection is closed|not queryable|timeout acquiring/i,
  /ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|57P0\d|socket hang up|other side closed/,
  /mikro-?orm|knex|pg-boss|pgboss|node-postgres|redis/i,
];

export function internalsIn(body: unknown): string | undefined {
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? null);
  return INTERNALS.find((pattern) => pattern.test(text))?.source;
}

type Outcome = 'success' | 'unavailable' | 'refused';

export interface RestExpectation {
  /** Success statuses of the route. */
  success: number[];
  /** Other statuses the request may deserve (a 409 while another update runs), each with a check of its body. */
  deserved?: Record<number, (body: any) => boolean>;
  /** The route's own shape of a 503, where it has one (src/rest/route.ts errorShapes); default the generic one. */
  unavailableShape?: 'generic' | 'msg';
}

export interface GraphQLExpectation {
  /** Catalogue codes the operation may deserve besides SERVICE_UNAVAILABLE (LOCATION_UPDATE_IN_PROGRESS). */
  deserved?: string[];
}

/**
 * Every answer of a fault test goes through here: judged against the documented outcomes, counted by what it was
 * (`REST 503`, `GraphQL 200 SERVICE_UNAVAILABLE`, …) and by 5xx status, and kept when it is anything else.
 */
export class FaultLedger {
  sent = 0;
  readonly outcomes = new Map<string, number>();
  readonly serverErrors = new Map<number, number>();
  readonly problems: string[] = [];

  private count(key: string): void {
    this.outcomes.set(key, (this.outcomes.get(key) ?? 0) + 1);
  }

  private problem(label: string, what: string, answer?: JsonResponse): Outcome {
    this.problems.push(`${label}: ${what}${answer ? ` (${answer.status} ${JSON.stringify(answer.body).slice(0, 500)})` : ''}`);
    return 'refused';
  }

  /** Sends one request, never throws: a request with no answer at all is a problem like a wrong answer. */
  private async send(label: string, request: () => Promise<JsonResponse>): Promise<JsonResponse | undefined> {
    this.sent += 1;
    try {
      const answer = await request();
      if (answer.status >= 500) this.serverErrors.set(answer.status, (this.serverErrors.get(answer.status) ?? 0) + 1);
      const leak = internalsIn(answer.body);
      if (leak) this.problem(label, `the body shows internals (/${leak}/)`, answer);
      return answer;
    } catch (error) {
      // No answer, or one the route's OpenAPI document does not describe (test/support/openapi-check.ts).
      this.problem(label, `no documented answer: ${(error as Error).message.slice(0, 500)}`);
      return undefined;
    }
  }

  async rest(label: string, request: () => Promise<JsonResponse>, expected: RestExpectation): Promise<{ outcome: Outcome; answer?: JsonResponse }> {
    const answer = await this.send(label, request);
    if (!answer) return { outcome: 'refused' };
    const { status, body } = answer;
    if (expected.success.includes(status)) {
      this.count('REST 2xx');
      return { outcome: 'success', answer };
    }
    const deserved = expected.deserved?.[status];
    if (deserved) {
      if (!deserved(body)) return { outcome: this.problem(label, 'an unexpected body', answer), answer };
      this.count(`REST ${status}`);
      return { outcome: 'refused', answer };
    }
    if (status === 503) {
      const documented =
        expected.unavailableShape === 'msg' ? { success: false, msg: UNAVAILABLE_MESSAGE } : { error: 503, message: UNAVAILABLE_MESSAGE };
      if (JSON.stringify(body) !== JSON.stringify(documented)) return { outcome: this.problem(label, 'a 503 not in the documented shape', answer), answer };
      if (answer.headers.get('retry-after') !== String(UNAVAILABLE_RETRY_AFTER_SECONDS)) {
        return { outcome: this.problem(label, `a 503 with Retry-After ${answer.headers.get('retry-after')}`, answer), answer };
      }
      this.count('REST 503');
      return { outcome: 'unavailable', answer };
    }
    return { outcome: this.problem(label, 'an undocumented status for this request', answer), answer };
  }

  async graphql(label: string, request: () => Promise<JsonResponse>, expected: GraphQLExpectation = {}): Promise<{ outcome: Outcome; answer?: JsonResponse }> {
    const answer = await this.send(label, request);
    if (!answer) return { outcome: 'refused' };
    const errors = (answer.body?.errors ?? []) as { message: string; extensions?: { code?: string } }[];
    if (answer.status === 200 && errors.length === 0 && answer.body?.data) {
      this.count('GraphQL 200');
      return { outcome: 'success', answer };
    }
    const allowed = new Set(['SERVICE_UNAVAILABLE', ...(expected.deserved ?? [])]);
    for (const error of errors) {
      const code = error.extensions?.code ?? '';
      if (!allowed.has(code)) return { outcome: this.problem(label, `error code ${code}`, answer), answer };
      if (code === 'SERVICE_UNAVAILABLE' && error.message !== UNAVAILABLE_MESSAGE) return { outcome: this.problem(label, 'SERVICE_UNAVAILABLE with another message', answer), answer };
    }
    const codes = [...new Set(errors.map((error) => error.extensions!.code!))].sort().join(',');
    if (answer.status === 503) {
      // A failure while building the context, before the operation ran: HTTP 503 with Retry-After.
      if (codes !== 'SERVICE_UNAVAILABLE' || answer.headers.get('retry-after') !== String(UNAVAILABLE_RETRY_AFTER_SECONDS)) {
        return { outcome: this.problem(label, 'an HTTP 503 not in the documented form', answer), answer };
      }
      this.count('GraphQL 503');
      return { outcome: 'unavailable', answer };
    }
    if (answer.status !== 200 || errors.length === 0) return { outcome: this.problem(label, 'an undocumented answer', answer), answer };
    this.count(`GraphQL 200 ${codes}`);
    return { outcome: codes.includes('SERVICE_UNAVAILABLE') ? 'unavailable' : 'refused', answer };
  }

  /** One line for the note. */
  summary(): string {
    const outcomes = [...this.outcomes].sort(([a], [b]) => a.localeCompare(b)).map(([key, n]) => `${key}: ${n}`).join(', ');
    const fiveXX = [...this.serverErrors].map(([status, n]) => `${status}: ${n}`).join(', ') || 'none';
    return `requests sent ${this.sent} (${outcomes}); 5xx by status: ${fiveXX}; 500: ${this.serverErrors.get(500) ?? 0}; undocumented answers: ${this.problems.length}`;
  }
}

export interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  queue?: string;
  err?: { type?: string; message?: string; code?: string };
  [key: string]: unknown;
}

export const WARN = 40;
export const ERROR = 50;

export interface CapturedLog {
  destination: Writable;
  lines: LogLine[];
  /** How many lines so far match. */
  count(match: (line: LogLine) => boolean): number;
  /** Resolves when `done` holds, checked again on every new line (rejects after `timeoutMs`). */
  until(done: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** The first line that matches, once there is one. */
  waitFor(match: (line: LogLine) => boolean, what: string, timeoutMs?: number): Promise<LogLine>;
}

/** A log destination whose lines (pino JSON) the test reads, and waits for. */
export function captureLog(): CapturedLog {
  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(text) as LogLine);
      waiters.forEach((wake) => wake());
      done();
    },
  });
  const until = (done: () => boolean, what: string, timeoutMs = 30000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${what} in the log`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  const count = (match: (line: LogLine) => boolean) => lines.filter(match).length;
  return {
    destination,
    lines,
    count,
    until,
    async waitFor(match, what, timeoutMs) {
      await until(() => lines.some(match), what, timeoutMs);
      return lines.find(match)!;
    },
  };
}

/**
 * The log lines of requests logged as errors: those of a request (Fastify gives them a reqId; a job's lines carry
 * the reqId of the request that caused it too, but also its queue: they are not the request's) and the masked errors
 * of GraphQL operations (logged by the formatter, which has no request). A 503 is a warning; a 500 is one of these.
 */
export function requestErrors(lines: LogLine[]): LogLine[] {
  return lines.filter((line) => line.level >= ERROR && ((line.reqId !== undefined && line.queue === undefined) || line.msg.startsWith('unexpected error in')));
}

/** Request errors as short text, for the test's output when there are any: where the cause of a 500 is read. */
export function describeErrors(lines: LogLine[]): string {
  return requestErrors(lines)
    .map((line) => `${line.msg}: ${line.err?.type} ${line.err?.message}\n${String((line.err as { stack?: string } | undefined)?.stack ?? '').split('\n').slice(0, 12).join('\n')}`)
    .join('\n\n');
}

/** A superuser's session on the service's database, apart from the service's own connections. */
export async function openAdmin(databaseUrl: string, name = 'lg-fault-admin'): Promise<Client> {
  const client = new Client({ connectionString: databaseUrl, application_name: name });
  // A session lost at the end (the database dropped) shows in the test's assertions, never as an unhandled error.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
