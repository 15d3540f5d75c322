import type { z } from 'zod';
import { excerptSuffix, parseAnswerBody, parseJson, parseRetryAfter } from '../shared/answer';
import {
  baseUrlNow,
  type BaseUrl,
  callProvider,
  pathTemplate,
  type ProviderCallObserver,
  jsonRequest,
  withQuery,
  type HttpAnswer,
  type HttpMethod,
  type TransportFailure,
} from '../shared/http';
import { unansweredMessage } from '../shared/provider-error';
import { ALPHA_CLIENT_REASONS, AlphaProviderError, alphaReasonForStatus, isRetryableAlphaStatus } from './alpha.errors';
import {
  ACCOUNT_NAME,
  LOCAL_POST_NAME,
  LOCATION_NAME,
  REVIEW_NAME,
  accountListSchema,
  accountSchema,
  errorEnvelopeSchema,
  localPostListSchema,
  locationListSchema,
  placeListSchema,
  reviewListSchema,
  reviewReplySchema,
  reviewSchema,
  servedLocalPostSchema,
  servedLocationSchema,
} from './alpha.schemas';
import type {
  AlphaAccount,
  AlphaLocalPost,
  AlphaLocation,
  AlphaLocationUpdatePath,
  AlphaPlace,
  AlphaPlaceSearch,
  AlphaReview,
  AlphaReviewPage,
  AlphaReviewReply,
} from './alpha.types';

/**
 * Per call: `signal` cancels the call (a stopping worker uses it); the client's own timeout still applies.
 * `accessToken` replaces the client's own for this call: a connected account calls with the token it was granted.
 */
export interface AlphaCallOptions {
  signal?: AbortSignal;
  accessToken?: string;
}

/**
 * The alpha provider's location and local-post API. Every method either returns checked data or throws an
 * AlphaProviderError; none retries (the job engine does, guided by `retryable`). Posts returned always carry `name`
 * and `state`; locations always carry `name`.
 */
export interface AlphaClient {
  /**
   * Publishes a post. `requestId` is ours and must be the same on every attempt for one post: the provider answers a
   * repeated requestId with the post it already created, so a retried create never publishes twice.
   */
  createLocalPost(
    input: { accountId: string; locationId: string; post: AlphaLocalPost; requestId: string },
    options?: AlphaCallOptions,
  ): Promise<AlphaLocalPost>;
  /** `name` is the resource name `accounts/{a}/locations/{l}/localPosts/{p}`. */
  getLocalPost(name: string, options?: AlphaCallOptions): Promise<AlphaLocalPost>;
  /** Newest first; pass `nextPageToken` back as `pageToken` for the next page. */
  listLocalPosts(input: {
    accountId: string;
    locationId: string;
    pageSize?: number;
    pageToken?: string;
  }, options?: AlphaCallOptions): Promise<{ localPosts: AlphaLocalPost[]; nextPageToken?: string }>;
  /** Resolves once the provider has deleted it; a post already gone fails with status 404, reason NOT_FOUND. */
  deleteLocalPost(name: string, options?: AlphaCallOptions): Promise<void>;
  /** Creates a location under the provider account; the same requestId answers the location it already created. */
  createLocation(
    input: { accountId: string; location: AlphaLocation; requestId: string },
    options?: AlphaCallOptions,
  ): Promise<AlphaLocation>;
  /** `name` is `accounts/{a}/locations/{l}`. */
  getLocation(name: string, options?: AlphaCallOptions): Promise<AlphaLocation>;
  /** Changes exactly the fields named in `updateMask` (paths of ALPHA_LOCATION_UPDATE_PATHS); answers the whole location after the change. */
  updateLocation(
    input: { name: string; location: AlphaLocation; updateMask: readonly AlphaLocationUpdatePath[] },
    options?: AlphaCallOptions,
  ): Promise<AlphaLocation>;
  /** Oldest first; pass `nextPageToken` back as `pageToken`. */
  listLocations(
    input: { accountId: string; pageSize?: number; pageToken?: string },
    options?: AlphaCallOptions,
  ): Promise<{ locations: AlphaLocation[]; nextPageToken?: string }>;
  /** The accounts the token may manage, oldest first; pass `nextPageToken` back as `pageToken`. */
  listAccounts(
    input?: { pageSize?: number; pageToken?: string },
    options?: AlphaCallOptions,
  ): Promise<{ accounts: AlphaAccount[]; nextPageToken?: string }>;
  /** `name` is `accounts/{a}`. */
  getAccount(name: string, options?: AlphaCallOptions): Promise<AlphaAccount>;
  /** Newest first; `averageRating` and `totalReviewCount` cover all the location's reviews, not just the page. */
  listReviews(
    input: { accountId: string; locationId: string; pageSize?: number; pageToken?: string },
    options?: AlphaCallOptions,
  ): Promise<AlphaReviewPage>;
  /** `name` is `accounts/{a}/locations/{l}/reviews/{r}`; a review its author deleted fails with 404 NOT_FOUND. */
  getReview(name: string, options?: AlphaCallOptions): Promise<AlphaReview>;
  /**
   * Replies to a review, replacing any earlier reply; answers the reply as submitted (PENDING while moderated). The
   * provider refuses a comment outside 1 to ALPHA_REVIEW_REPLY_MAX_BYTES bytes with 400 naming `comment`.
   */
  replyToReview(name: string, comment: string, options?: AlphaCallOptions): Promise<AlphaReviewReply>;
  /** Resolves once the reply is gone; a review without one fails with 404 NOT_FOUND. */
  deleteReviewReply(name: string, options?: AlphaCallOptions): Promise<void>;
  /**
   * The places near a point that match a text, in the provider's rank order (the first is rank 1): what a customer
   * searching there would see. The provider judges the input (the bounds of AlphaPlaceSearch), so its refusal reaches
   * the caller with its reasons.
   */
  searchPlaces(input: AlphaPlaceSearch, options?: AlphaCallOptions): Promise<AlphaPlace[]>;
}

export interface AlphaClientOptions {
  /** Root of the provider's APIs, without `/v4` or `/v1` (the sandbox: `http://127.0.0.1:4000/sandbox/alpha`). */
  baseUrl: BaseUrl;
  /** Asked before every call, so a refreshed token is picked up without rebuilding the client. */
  accessToken: () => string | Promise<string>;
  /** Per call, covering the answer's body too. Default 10000. */
  timeoutMs?: number;
  /** Told of every call as it ends (metrics). */
  observe?: ProviderCallObserver;
  fetchFn?: typeof fetch;
}

export const DEFAULT_ALPHA_TIMEOUT_MS = 10_000;

/** Part of this client's surface (index.ts exports it from here). */
export { parseRetryAfter };

export function createAlphaClient(options: AlphaClientOptions): AlphaClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_ALPHA_TIMEOUT_MS;
  const fetchFn = options.fetchFn ?? fetch;

  /** A call to the business API (/v4). */
  function send(
    method: HttpMethod,
    path: string,
    query: Record<string, string | number | undefined>,
    body: unknown,
    callOptions: AlphaCallOptions = {},
  ): Promise<HttpAnswer> {
    return sendTo('v4', method, path, query, body, callOptions);
  }

  /** The places API is versioned apart from the business API, under /v1. */
  async function sendTo(
    api: 'v4' | 'v1',
    method: HttpMethod,
    path: string,
    query: Record<string, string | number | undefined>,
    body: unknown,
    callOptions: AlphaCallOptions,
  ): Promise<HttpAnswer> {
    const url = withQuery(`${baseUrlNow(options.baseUrl)}/${api}/${path}`, query);
    const accessToken = callOptions.accessToken ?? (await options.accessToken());
    return callProvider(
      jsonRequest(method, url, accessToken, body, `${method} ${api}/${pathTemplate(path)}`),
      { fetchFn, timeoutMs, signal: callOptions.signal, observe: options.observe },
      { transport: (failure) => transportError(failure, timeoutMs, `${method} ${path}`), answer: answerError },
    );
  }

  return {
    async createLocalPost({ accountId, locationId, post, requestId }, callOptions) {
      requireNonEmpty({ accountId, locationId, requestId });
      const answer = await send('POST', `${locationPath(accountId, locationId)}/localPosts`, { requestId }, post, callOptions);
      return parseAnswer(servedLocalPostSchema, answer, 'create local post');
    },

    async getLocalPost(name, callOptions) {
      const answer = await send('GET', resourcePath(name, LOCAL_POST_NAME, 'local post'), {}, undefined, callOptions);
      return parseAnswer(servedLocalPostSchema, answer, 'get local post');
    },

    async listLocalPosts({ accountId, locationId, pageSize, pageToken }, callOptions) {
      requireNonEmpty({ accountId, locationId });
      const answer = await send('GET', `${locationPath(accountId, locationId)}/localPosts`, { pageSize, pageToken }, undefined, callOptions);
      const page = parseAnswer(localPostListSchema, answer, 'list local posts');
      return page.nextPageToken === undefined ? { localPosts: page.localPosts } : page;
    },

    async deleteLocalPost(name, callOptions) {
      // The answer's body ({}) carries nothing: success is the 2xx status.
      await send('DELETE', resourcePath(name, LOCAL_POST_NAME, 'local post'), {}, undefined, callOptions);
    },

    async createLocation({ accountId, location, requestId }, callOptions) {
      requireNonEmpty({ accountId, requestId });
      const answer = await send('POST', `${accountPath(accountId)}/locations`, { requestId }, location, callOptions);
      return parseAnswer(servedLocationSchema, answer, 'create location');
    },

    async getLocation(name, callOptions) {
      const answer = await send('GET', resourcePath(name, LOCATION_NAME, 'location'), {}, undefined, callOptions);
      return parseAnswer(servedLocationSchema, answer, 'get location');
    },

    async updateLocation({ name, location, updateMask }, callOptions) {
      const path = resourcePath(name, LOCATION_NAME, 'location');
      // The provider judges the mask (an empty one included), so its refusal reaches the caller with its reasons.
      const answer = await send('PATCH', path, { updateMask: updateMask.join(',') }, location, callOptions);
      return parseAnswer(servedLocationSchema, answer, 'update location');
    },

    async listLocations({ accountId, pageSize, pageToken }, callOptions) {
      requireNonEmpty({ accountId });
      const answer = await send('GET', `${accountPath(accountId)}/locations`, { pageSize, pageToken }, undefined, callOptions);
      const page = parseAnswer(locationListSchema, answer, 'list locations');
      return page.nextPageToken === undefined ? { locations: page.locations } : page;
    },

    async listAccounts({ pageSize, pageToken } = {}, callOptions) {
      const answer = await send('GET', 'accounts', { pageSize, pageToken }, undefined, callOptions);
      const page = parseAnswer(accountListSchema, answer, 'list accounts');
      return page.nextPageToken === undefined ? { accounts: page.accounts } : page;
    },

    async getAccount(name, callOptions) {
      const answer = await send('GET', resourcePath(name, ACCOUNT_NAME, 'account'), {}, undefined, callOptions);
      return parseAnswer(accountSchema, answer, 'get account');
    },

    async listReviews({ accountId, locationId, pageSize, pageToken }, callOptions) {
      requireNonEmpty({ accountId, locationId });
      const path = `${locationPath(accountId, locationId)}/reviews`;
      const answer = await send('GET', path, { pageSize, pageToken }, undefined, callOptions);
      const { nextPageToken, ...page } = parseAnswer(reviewListSchema, answer, 'list reviews');
      return nextPageToken === undefined ? page : { ...page, nextPageToken };
    },

    async getReview(name, callOptions) {
      const answer = await send('GET', resourcePath(name, REVIEW_NAME, 'review'), {}, undefined, callOptions);
      return parseAnswer(reviewSchema, answer, 'get review');
    },

    async replyToReview(name, comment, callOptions) {
      const path = `${resourcePath(name, REVIEW_NAME, 'review')}/reply`;
      // The provider judges the comment (its length included), so its refusal reaches the caller with its reasons.
      const answer = await send('PUT', path, {}, { comment }, callOptions);
      return parseAnswer(reviewReplySchema, answer, 'reply to review');
    },

    async deleteReviewReply(name, callOptions) {
      await send('DELETE', `${resourcePath(name, REVIEW_NAME, 'review')}/reply`, {}, undefined, callOptions);
    },

    async searchPlaces({ textQuery, latitude, longitude, radiusMeters, pageSize }, callOptions) {
      const body = {
        textQuery,
        locationBias: { circle: { center: { latitude, longitude }, radius: radiusMeters } },
        ...(pageSize === undefined ? {} : { pageSize }),
      };
      const answer = await sendTo('v1', 'POST', 'places:searchText', {}, body, callOptions ?? {});
      return parseAnswer(placeListSchema, answer, 'search places').places;
    },
  };
}

function accountPath(accountId: string): string {
  return `accounts/${encodeURIComponent(accountId)}`;
}

function locationPath(accountId: string, locationId: string): string {
  return `${accountPath(accountId)}/locations/${encodeURIComponent(locationId)}`;
}

/** A resource name becomes a path only when it has the exact shape, so a stored value cannot aim elsewhere. */
function resourcePath(name: string, shape: RegExp, resource: string): string {
  if (!shape.test(name)) {
    throw clientRefusal(`not a ${resource} resource name: ${JSON.stringify(name)}`);
  }
  return name.split('/').map(encodeURIComponent).join('/');
}

function requireNonEmpty(values: Record<string, string>): void {
  for (const [field, value] of Object.entries(values)) {
    if (typeof value !== 'string' || value.length === 0) throw clientRefusal(`${field} must be a non-empty string`);
  }
}

/** A call we did not send because its input is wrong: repeating it cannot help. */
function clientRefusal(message: string): AlphaProviderError {
  return new AlphaProviderError({ status: 0, code: 0, reason: ALPHA_CLIENT_REASONS.invalidArgument, message, retryable: false });
}

function transportError(failure: TransportFailure, timeoutMs: number, call: string): AlphaProviderError {
  const reason = { cancelled: ALPHA_CLIENT_REASONS.cancelled, timeout: ALPHA_CLIENT_REASONS.timeout, network: ALPHA_CLIENT_REASONS.network }[failure.kind];
  return new AlphaProviderError({
    status: 0,
    code: 0,
    reason,
    message: unansweredMessage('alpha provider', failure.kind, call, timeoutMs),
    retryable: true,
    cause: failure.cause,
  });
}

function answerError(answer: HttpAnswer): AlphaProviderError {
  const { status, text } = answer;
  const retryable = isRetryableAlphaStatus(status);
  const retryAfterSeconds = parseRetryAfter(answer.headers.get('retry-after'));
  const envelope = errorEnvelopeSchema.safeParse(parseJson(text));
  if (envelope.success) {
    const { code, message, status: reason, details } = envelope.data.error;
    return new AlphaProviderError({
      status,
      code: code ?? status,
      reason: reason ?? alphaReasonForStatus(status),
      message: message ?? `Alpha provider answered HTTP ${status}`,
      details: details ?? [],
      retryable,
      retryAfterSeconds,
    });
  }
  // A proxy or load balancer in front of the provider answers in HTML or plain text.
  return new AlphaProviderError({
    status,
    code: status,
    reason: alphaReasonForStatus(status),
    message: `Alpha provider answered HTTP ${status} without its error envelope${excerptSuffix(text)}`,
    retryable,
    retryAfterSeconds,
  });
}

function parseAnswer<S extends z.ZodType>(schema: S, answer: HttpAnswer, call: string): z.output<S> {
  return parseAnswerBody(schema, answer.text, (problems) =>
    badResponse(answer.status, `Alpha provider's answer to ${call} is not the expected shape: ${problems}`),
  );
}

function badResponse(status: number, message: string): AlphaProviderError {
  return new AlphaProviderError({ status, code: status, reason: ALPHA_CLIENT_REASONS.badResponse, message, retryable: false });
}
