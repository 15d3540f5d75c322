import { jsonRequest, pathTemplate, withQuery, type HttpAnswer, type HttpMethod } from './http';
import { unansweredMessage } from './provider-error';
import {
  createTransport,
  type CallOptions,
  type ErrorAnswer,
  type Failure,
  type ProviderFailures,
  type Transport,
  type TransportOptions,
} from './transport';

/** What the alpha and beta business API clients share above the transport: JSON calls with a bearer token. */

/** Reasons a business API client assigns itself, where the provider gave none to read. */
export const API_CLIENT_REASONS = {
  /** No answer: connection refused or reset, DNS failure. */
  network: 'NETWORK_ERROR',
  /** No complete answer within the client's timeout. */
  timeout: 'TIMEOUT',
  /** Cancelled by the caller (a worker stopping) before an answer arrived. */
  cancelled: 'CANCELLED',
  /** An answer we cannot read as the documented shape. */
  badResponse: 'BAD_RESPONSE',
  /** A call we refused to send (a malformed resource name, an empty id or etag). */
  invalidArgument: 'INVALID_ARGUMENT',
} as const;

export interface ApiClientOptions extends TransportOptions {
  /** Asked before every call that has no token of its own, so a refreshed token is picked up without rebuilding the client. */
  accessToken: () => string | Promise<string>;
}

/** `accessToken` replaces the client's own for this call: a connected account calls with the token it was granted. */
export interface ApiCallOptions extends CallOptions {
  accessToken?: string;
}

/** Where an API sits below the provider's root, and the prefix its calls' operation names carry in metrics. */
export interface ApiRoot {
  path: string;
  metricPrefix: string;
}

export interface ApiRequest {
  method: HttpMethod;
  /** Below the API's root, ids encoded. */
  path: string;
  query?: Record<string, string | number | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** What is a business API's own in its failures. */
export interface ApiFailuresOwn<E extends Error> {
  /** As texts name it: `alpha provider`. */
  who: string;
  /** As texts name its error body: `its error envelope`. */
  errorFormat: string;
  error: (failure: Failure) => E;
  fromBody: (answer: ErrorAnswer) => E | undefined;
  /** The provider's reason for a status, for an error answer without its error body. */
  reasonForStatus: (status: number) => string;
}

export interface ApiFailures<E extends Error> extends ProviderFailures<E> {
  /** A call we did not send because its input is wrong: repeating it cannot help. */
  refusal: (message: string) => E;
  /** Throws a refusal naming the first field that is not a non-empty string. */
  requireNonEmpty: (values: Record<string, string>) => void;
}

export function apiFailures<E extends Error>(own: ApiFailuresOwn<E>): ApiFailures<E> {
  const { who, error } = own;
  const Who = who.charAt(0).toUpperCase() + who.slice(1);
  const refusal = (message: string) => error({ status: 0, reason: API_CLIENT_REASONS.invalidArgument, message, retryable: false });
  return {
    error,
    fromBody: own.fromBody,
    unanswered: (kind, call, timeoutMs) => ({ reason: API_CLIENT_REASONS[kind], message: unansweredMessage(who, kind, call, timeoutMs) }),
    unformatted: (status) => ({ reason: own.reasonForStatus(status), message: `${Who} answered HTTP ${status} without ${own.errorFormat}` }),
    unreadable: (call, problems) => ({
      reason: API_CLIENT_REASONS.badResponse,
      message: `${Who}'s answer to ${call} is not the expected shape: ${problems}`,
    }),
    refusal,
    requireNonEmpty(values) {
      for (const [field, value] of Object.entries(values)) {
        if (typeof value !== 'string' || value.length === 0) throw refusal(`${field} must be a non-empty string`);
      }
    },
  };
}

export interface ApiClient {
  send: (api: ApiRoot, request: ApiRequest, callOptions?: ApiCallOptions) => Promise<HttpAnswer>;
  read: Transport['read'];
}

export function createApiClient<E extends Error>(options: ApiClientOptions, failures: ApiFailures<E>): ApiClient {
  const transport = createTransport(options, failures);
  return {
    async send(api, { method, path, query = {}, body, headers = {} }, callOptions = {}) {
      const url = withQuery(`${transport.root()}/${api.path}/${path}`, query);
      const accessToken = callOptions.accessToken ?? (await options.accessToken());
      const request = jsonRequest(method, url, accessToken, body, `${method} ${api.metricPrefix}${pathTemplate(path)}`);
      Object.assign(request.headers, headers);
      return transport.send(request, `${method} ${path}`, callOptions.signal);
    },
    read: transport.read,
  };
}
