import { createApiClient, type ApiCallOptions, type ApiClientOptions, type ApiRequest, type ApiRoot } from '../shared/api-client';
import { alphaFailures } from './alpha.errors';
import {
  ACCOUNT_NAME,
  LOCAL_POST_NAME,
  LOCATION_NAME,
  REVIEW_NAME,
  accountListSchema,
  accountSchema,
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

export type AlphaCallOptions = ApiCallOptions;

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

/** `baseUrl` is the root of the provider's APIs, without `/v4` or `/v1` (the sandbox: `http://127.0.0.1:4000/sandbox/alpha`). */
export type AlphaClientOptions = ApiClientOptions;

const BUSINESS_API: ApiRoot = { path: 'v4', metricPrefix: 'v4/' };
/** The places API is versioned apart from the business API. */
const PLACES_API: ApiRoot = { path: 'v1', metricPrefix: 'v1/' };

export function createAlphaClient(options: AlphaClientOptions): AlphaClient {
  const api = createApiClient(options, alphaFailures);
  const send = (request: ApiRequest, callOptions?: AlphaCallOptions) => api.send(BUSINESS_API, request, callOptions);
  const parseAnswer = api.read;

  return {
    async createLocalPost({ accountId, locationId, post, requestId }, callOptions) {
      alphaFailures.requireNonEmpty({ accountId, locationId, requestId });
      const path = `${locationPath(accountId, locationId)}/localPosts`;
      const answer = await send({ method: 'POST', path, query: { requestId }, body: post }, callOptions);
      return parseAnswer(servedLocalPostSchema, answer, 'create local post');
    },

    async getLocalPost(name, callOptions) {
      const answer = await send({ method: 'GET', path: resourcePath(name, LOCAL_POST_NAME, 'local post') }, callOptions);
      return parseAnswer(servedLocalPostSchema, answer, 'get local post');
    },

    async listLocalPosts({ accountId, locationId, pageSize, pageToken }, callOptions) {
      alphaFailures.requireNonEmpty({ accountId, locationId });
      const path = `${locationPath(accountId, locationId)}/localPosts`;
      const answer = await send({ method: 'GET', path, query: { pageSize, pageToken } }, callOptions);
      const page = parseAnswer(localPostListSchema, answer, 'list local posts');
      return page.nextPageToken === undefined ? { localPosts: page.localPosts } : page;
    },

    async deleteLocalPost(name, callOptions) {
      // The answer's body ({}) carries nothing: success is the 2xx status.
      await send({ method: 'DELETE', path: resourcePath(name, LOCAL_POST_NAME, 'local post') }, callOptions);
    },

    async createLocation({ accountId, location, requestId }, callOptions) {
      alphaFailures.requireNonEmpty({ accountId, requestId });
      const path = `${accountPath(accountId)}/locations`;
      const answer = await send({ method: 'POST', path, query: { requestId }, body: location }, callOptions);
      return parseAnswer(servedLocationSchema, answer, 'create location');
    },

    async getLocation(name, callOptions) {
      const answer = await send({ method: 'GET', path: resourcePath(name, LOCATION_NAME, 'location') }, callOptions);
      return parseAnswer(servedLocationSchema, answer, 'get location');
    },

    async updateLocation({ name, location, updateMask }, callOptions) {
      const path = resourcePath(name, LOCATION_NAME, 'location');
      // The provider judges the mask (an empty one included), so its refusal reaches the caller with its reasons.
      const answer = await send({ method: 'PATCH', path, query: { updateMask: updateMask.join(',') }, body: location }, callOptions);
      return parseAnswer(servedLocationSchema, answer, 'update location');
    },

    async listLocations({ accountId, pageSize, pageToken }, callOptions) {
      alphaFailures.requireNonEmpty({ accountId });
      const path = `${accountPath(accountId)}/locations`;
      const answer = await send({ method: 'GET', path, query: { pageSize, pageToken } }, callOptions);
      const page = parseAnswer(locationListSchema, answer, 'list locations');
      return page.nextPageToken === undefined ? { locations: page.locations } : page;
    },

    async listAccounts({ pageSize, pageToken } = {}, callOptions) {
      const answer = await send({ method: 'GET', path: 'accounts', query: { pageSize, pageToken } }, callOptions);
      const page = parseAnswer(accountListSchema, answer, 'list accounts');
      return page.nextPageToken === undefined ? { accounts: page.accounts } : page;
    },

    async getAccount(name, callOptions) {
      const answer = await send({ method: 'GET', path: resourcePath(name, ACCOUNT_NAME, 'account') }, callOptions);
      return parseAnswer(accountSchema, answer, 'get account');
    },

    async listReviews({ accountId, locationId, pageSize, pageToken }, callOptions) {
      alphaFailures.requireNonEmpty({ accountId, locationId });
      const path = `${locationPath(accountId, locationId)}/reviews`;
      const answer = await send({ method: 'GET', path, query: { pageSize, pageToken } }, callOptions);
      const { nextPageToken, ...page } = parseAnswer(reviewListSchema, answer, 'list reviews');
      return nextPageToken === undefined ? page : { ...page, nextPageToken };
    },

    async getReview(name, callOptions) {
      const answer = await send({ method: 'GET', path: resourcePath(name, REVIEW_NAME, 'review') }, callOptions);
      return parseAnswer(reviewSchema, answer, 'get review');
    },

    async replyToReview(name, comment, callOptions) {
      const path = `${resourcePath(name, REVIEW_NAME, 'review')}/reply`;
      // The provider judges the comment (its length included), so its refusal reaches the caller with its reasons.
      const answer = await send({ method: 'PUT', path, body: { comment } }, callOptions);
      return parseAnswer(reviewReplySchema, answer, 'reply to review');
    },

    async deleteReviewReply(name, callOptions) {
      await send({ method: 'DELETE', path: `${resourcePath(name, REVIEW_NAME, 'review')}/reply` }, callOptions);
    },

    async searchPlaces({ textQuery, latitude, longitude, radiusMeters, pageSize }, callOptions) {
      const body = {
        textQuery,
        locationBias: { circle: { center: { latitude, longitude }, radius: radiusMeters } },
        ...(pageSize === undefined ? {} : { pageSize }),
      };
      const answer = await api.send(PLACES_API, { method: 'POST', path: 'places:searchText', body }, callOptions);
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
    throw alphaFailures.refusal(`not a ${resource} resource name: ${JSON.stringify(name)}`);
  }
  return name.split('/').map(encodeURIComponent).join('/');
}
