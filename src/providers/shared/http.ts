import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * One HTTP call to a provider, as every provider client makes it: its own timeout, the caller's cancellation, no
 * redirect followed. What the answer means is transport.ts's to say.
 */

/**
 * Where a provider is: a URL, or a function asked at every call when the URL is known only later (a provider
 * mounted on this very server is reachable once it listens).
 */
export type BaseUrl = string | (() => string);

/** The root of a provider's URLs without a trailing slash, as known now. */
export function baseUrlNow(baseUrl: BaseUrl): string {
  return (typeof baseUrl === 'string' ? baseUrl : baseUrl()).replace(/\/+$/, '');
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpRequest {
  method: HttpMethod;
  url: string;
  /** What the call is, as a bounded name (method and path template): for metrics, never with an id in it. */
  operation: string;
  headers: Record<string, string>;
  body?: string;
}

/** An answer's headers, by name in any case: what the transport reads of them (Retry-After). */
export interface AnswerHeaders {
  get(name: string): string | null;
}

/** Any answer that arrived whole, whatever its status. */
export interface HttpAnswer {
  status: number;
  text: string;
  headers: AnswerHeaders;
}

export interface HttpCallOptions {
  /** Covers the answer's body too. */
  timeoutMs: number;
  /** The caller's: cancels the call. */
  signal?: AbortSignal;
  /** Told of every call as it ends (metrics). */
  observe?: ProviderCallObserver;
}

/** One call as metrics see it: `status` is the HTTP status, or the transport failure's kind. */
export type ProviderCallObserver = (call: { operation: string; status: string; seconds: number }) => void;

/**
 * A path's template as an operation name: the provider APIs name resources as collection/id pairs
 * (`accounts/1/locations/2/localPosts`), so every second segment is an id and becomes `{id}`.
 */
export function pathTemplate(path: string): string {
  return path
    .split('/')
    .map((segment, index) => (index % 2 === 1 ? '{id}' : segment))
    .join('/');
}

/** cancelled: by the caller's signal; timeout: by our timer; network: anything else before a whole answer. */
export type TransportFailureKind = 'cancelled' | 'timeout' | 'network';

/** No whole answer arrived; transport.ts names it in the client's error class. `cause` is what the call failed with. */
export class TransportFailure extends Error {
  override readonly name = 'TransportFailure';

  constructor(
    readonly kind: TransportFailureKind,
    cause: unknown,
  ) {
    super(`HTTP call failed: ${kind}`, { cause });
  }
}

/**
 * Connections kept open between calls. A connection idle for 4 s is closed here first: a server closes its idle ones
 * (Node's after 5 s), and a call sent on one it has just closed fails.
 */
const IDLE_CONNECTION_MS = 4000;
const agents = {
  'http:': new HttpAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
  'https:': new HttpsAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
};

function answerHeaders(headers: IncomingHttpHeaders): AnswerHeaders {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/**
 * The answer, or a TransportFailure. Over node:http rather than fetch, whose web streams and request, response and
 * signal objects were a sixth of a post's worker CPU (docs/benchmarks.md, "Seventh slice"). A redirect is not part of
 * these APIs, and following one could carry a token or a secret elsewhere: node:http follows none.
 */
export async function sendHttp(request: HttpRequest, options: HttpCallOptions): Promise<HttpAnswer> {
  const callerSignal = options.signal;
  // A timer of our own, cleared when the call ends: AbortSignal.timeout would leave one behind per call.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  const cancel = () => controller.abort();
  callerSignal?.addEventListener('abort', cancel, { once: true });
  if (callerSignal?.aborted) controller.abort();
  const { signal } = controller;
  const started = performance.now();
  let status = 'network';
  try {
    const answer = await exchange(request, signal);
    status = String(answer.status);
    return answer;
  } catch (error) {
    const kind = callerSignal?.aborted ? 'cancelled' : signal.aborted ? 'timeout' : 'network';
    status = kind;
    throw new TransportFailure(kind, error);
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', cancel);
    options.observe?.({ operation: request.operation, status, seconds: (performance.now() - started) / 1000 });
  }
}

/** One request and its whole answer; `signal` ends it (a redirect is an answer like any other: never followed). */
function exchange(request: HttpRequest, signal: AbortSignal): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted before it was sent'));
    const url = new URL(request.url);
    const protocol = url.protocol === 'https:' ? 'https:' : url.protocol === 'http:' ? 'http:' : undefined;
    if (!protocol) return reject(new Error(`not an http(s) URL: ${url.protocol}`));
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    const headers = body ? { ...request.headers, 'content-length': String(body.length) } : request.headers;
    const send = protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send(url, { method: request.method, headers, agent: agents[protocol], signal }, (answer: IncomingMessage) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('error', reject);
      answer.on('aborted', () => reject(new Error('the answer was cut short')));
      answer.on('end', () => {
        // A body shorter than its length (the connection closed early) is no whole answer.
        if (!answer.complete) return reject(new Error('the answer was cut short'));
        resolve({ status: answer.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: answerHeaders(answer.headers) });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** A JSON API call with a bearer token; `body`, when given, is sent as JSON. */
export function jsonRequest(method: HttpMethod, url: string, accessToken: string, body: unknown, operation: string): HttpRequest {
  const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, accept: 'application/json' };
  if (body === undefined) return { method, url, operation, headers };
  headers['content-type'] = 'application/json';
  return { method, url, operation, headers, body: JSON.stringify(body) };
}

/** `base` with the query's defined values, or `base` alone when there are none. */
export function withQuery(base: string, query: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
  return search.size > 0 ? `${base}?${search.toString()}` : base;
}
