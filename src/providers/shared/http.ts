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

/** Any answer that arrived whole, whatever its status. */
export interface HttpAnswer {
  status: number;
  text: string;
  headers: Headers;
}

export interface HttpCallOptions {
  fetchFn: typeof fetch;
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

/** No whole answer arrived; transport.ts names it in the client's error class. `cause` is what fetch threw. */
export class TransportFailure extends Error {
  override readonly name = 'TransportFailure';

  constructor(
    readonly kind: TransportFailureKind,
    cause: unknown,
  ) {
    super(`HTTP call failed: ${kind}`, { cause });
  }
}

/** The answer, or a TransportFailure. */
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
    // A redirect is not part of these APIs, and following one could carry a token or a secret elsewhere.
    const response = await options.fetchFn(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal,
      redirect: 'manual',
    });
    const text = await response.text();
    status = String(response.status);
    return { status: response.status, text, headers: response.headers };
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
