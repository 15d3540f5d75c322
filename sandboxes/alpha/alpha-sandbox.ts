import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ALPHA_SCOPE_BUSINESS_MANAGE } from '../../src/providers/alpha/alpha.types';
import {
  answerControlsOnlyOnLoopback,
  answerStatusOf,
  commonConfigPatchShape,
  CONTROLS_ON_LOOPBACK_ONLY,
  describeIssues,
  registerCommonControls,
} from '../shared/control-routes';
import type { ProjectQuotaExceeded } from '../shared/project-quota';
import { retryAfterSecondsOf } from '../shared/rolling-window';
import type { SandboxPluginOptions } from '../shared/sandbox-server';
import { answerOrFail, bodyTextOf, dropConnection } from '../shared/scripted-failures';
import { closableSleeper } from '../shared/sleeper';
import { keepStateInFile } from '../shared/state-file';
import { accountView, identityInputSchema } from './alpha-sandbox.accounts';
import { ACCESS_TOKEN_PREFIX } from './alpha-sandbox.grants';
import { applyLocationUpdate, parseUpdateMask, validateLocation } from './alpha-sandbox.locations';
import { alphaSandboxOAuthPlugin } from './alpha-sandbox.oauth';
import { marketSchema, validatePlacesSearch } from './alpha-sandbox.places';
import { reviewInputSchema, validateReplyBody, type ReviewPosition } from './alpha-sandbox.reviews';
import { AlphaSandboxControlRefusal, AlphaSandboxStore, type AlphaSandboxCallKind } from './alpha-sandbox.state';
import { FieldViolation, validateLocalPost } from './alpha-sandbox.validation';

export { ALPHA_SANDBOX_SEED } from './alpha-sandbox.seed';
export type { AlphaSandboxIdentity, AlphaSandboxIdentityInput } from './alpha-sandbox.accounts';
export type { AlphaSandboxGrantCounts } from './alpha-sandbox.grants';
export type {
  AlphaSandboxMarket,
  AlphaSandboxMarketBusiness,
  AlphaSandboxMarketBusinessInput,
  AlphaSandboxMarketInput,
} from './alpha-sandbox.places';
export type { AlphaSandboxReviewInput } from './alpha-sandbox.reviews';
export {
  AlphaSandboxStore,
  DEFAULT_ALPHA_SANDBOX_CONFIG,
  type AlphaSandboxAccountCallKind,
  type AlphaSandboxCallKind,
  type AlphaSandboxConfig,
  type AlphaSandboxFailure,
  type AlphaSandboxIdentityResult,
  type AlphaSandboxLocationCallKind,
  type AlphaSandboxLocationSnapshot,
  type AlphaSandboxOAuthClient,
  type AlphaSandboxPersisted,
  type AlphaSandboxPlacesCallKind,
  type AlphaSandboxPostCallKind,
  type AlphaSandboxPostSnapshot,
  type AlphaSandboxReviewCallKind,
  type AlphaSandboxState,
} from './alpha-sandbox.state';

/** `stateFile`: see SandboxPluginOptions. */
export interface AlphaSandboxOptions extends SandboxPluginOptions {
  /**
   * Milliseconds since the epoch; drives createTime, processing periods, scheduled posts and the location edit
   * window. Default Date.now.
   */
  clock?: () => number;
  /**
   * Start with (and reset to) the seeded identities, accounts, locations and reviews. Default true; false gives an
   * empty provider, for tests of the location and post API alone.
   */
  seed?: boolean;
}

/** The provider's list defaults: posts and locations; accounts and reviews have their own, as on the provider. */
const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;
const ACCOUNT_PAGE = { defaultSize: 20, maxSize: 20 };
const REVIEW_PAGE = { defaultSize: 50, maxSize: 50 };

/** Who a provider call is made for: the service token reaches every account, an identity's token only its own. */
type Caller = { kind: 'service' } | { kind: 'identity'; sub: string };
const SERVICE_CALLER: Caller = { kind: 'service' };

/** Canonical reason and message the provider answers each status with. */
const STATUS_ANSWERS: Record<number, { reason: string; message: string }> = {
  400: { reason: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' },
  401: { reason: 'UNAUTHENTICATED', message: 'Request is missing a valid bearer access token.' },
  403: { reason: 'PERMISSION_DENIED', message: 'The caller does not have permission.' },
  404: { reason: 'NOT_FOUND', message: 'Requested entity was not found.' },
  409: { reason: 'ABORTED', message: 'The operation was aborted.' },
  429: { reason: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded. Retry later.' },
  500: { reason: 'INTERNAL', message: 'Internal error encountered.' },
  503: { reason: 'UNAVAILABLE', message: 'The service is currently unavailable.' },
  504: { reason: 'DEADLINE_EXCEEDED', message: 'The deadline expired before the operation could complete.' },
};

function statusAnswer(status: number): { reason: string; message: string } {
  return (
    STATUS_ANSWERS[status] ??
    (status >= 500
      ? { reason: 'INTERNAL', message: `Internal error encountered (${status}).` }
      : { reason: 'FAILED_PRECONDITION', message: `The request was refused (${status}).` })
  );
}

/** A provider answer other than success, rendered in its error envelope. */
class SandboxError extends Error {
  constructor(
    readonly status: number,
    message?: string,
    readonly details: unknown[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? statusAnswer(status).message);
  }
}

interface SandboxAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

type AccountParams = { accountId: string };
type LocationParams = AccountParams & { locationId: string };
type PostParams = LocationParams & { postId: string };
type ReviewParams = LocationParams & { reviewId: string };
type Query = Record<string, unknown>;

const configPatchSchema = z.strictObject({
  ...commonConfigPatchShape,
  processingMs: z.number().int().min(0).optional(),
  reviewMarker: z.string().min(1).nullable().optional(),
  locationEditsPerMinute: z.number().int().min(1).optional(),
  moderationMs: z.number().int().min(0).optional(),
});

const SANDBOX_LOCATION_NAME = /^accounts\/[^/]+\/locations\/[^/]+$/;
const SANDBOX_REVIEW_NAME = /^accounts\/[^/]+\/locations\/[^/]+\/reviews\/[^/]+$/;

const addReviewsSchema = z.strictObject({
  location: z.string().regex(SANDBOX_LOCATION_NAME, 'must be accounts/{a}/locations/{l}'),
  reviews: z.array(reviewInputSchema).min(1).max(500),
});

const deleteReviewSchema = z.strictObject({
  name: z.string().regex(SANDBOX_REVIEW_NAME, 'must be accounts/{a}/locations/{l}/reviews/{r}'),
});

/**
 * A simulator of the alpha provider's business API (accounts, locations, local posts, reviews), its places API's
 * nearby text search (under /v1), its identity provider (under /oauth) and its controls, relative to the prefix it is registered under. Its state is its own (it is the provider, not our database) and lives as long as the Fastify
 * instance, or in `stateFile` across instances.
 */
export async function alphaSandboxPlugin(app: FastifyInstance, options: AlphaSandboxOptions): Promise<void> {
  const clock = options.clock ?? Date.now;
  // Latencies and scripted delays end early when the server closes, so a close never waits them out.
  const store = new AlphaSandboxStore(clock, { seed: options.seed, sleeper: closableSleeper(app), quota: options.quota });
  if (options.stateFile !== undefined) {
    await keepStateInFile(app, store, options.stateFile, {
      name: 'alpha sandbox',
      freshStart: 'starting empty',
      reasonOf: (error) =>
        error instanceof FieldViolation || error instanceof z.ZodError ? error.message : String(error),
    });
  }

  // Everything this plugin answers, including Fastify's own refusals (bad JSON), is in the provider's envelope.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = answerStatusOf(error);
    if (status === 500) request.log.error({ err: error }, 'alpha sandbox failure');
    return sendError(reply, status, status === 500 ? undefined : error.message);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, `No such method: ${request.method} ${request.url.split('?')[0]}`),
  );
  answerControlsOnlyOnLoopback(app, (reply) => sendError(reply, 403, CONTROLS_ON_LOOPBACK_ONLY));

  /**
   * The bearer token's caller. The identity provider's access tokens (ya29.…) must be valid and carry the
   * business.manage scope; any other token is the service's (the sandbox's service-token leniency).
   */
  function authenticate(request: FastifyRequest): Caller {
    const token = /^Bearer\s+(\S+)/i.exec(request.headers.authorization ?? '')?.[1];
    if (token === undefined) throw new SandboxError(401, undefined, [], { 'www-authenticate': 'Bearer' });
    if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return SERVICE_CALLER;
    const found = store.grants.lookupAccessToken(token);
    if (found.status !== 'valid') {
      const expired = found.status === 'expired';
      throw new SandboxError(
        401,
        expired
          ? 'Request had invalid authentication credentials: the access token expired.'
          : 'Request had invalid authentication credentials: the access token is not valid (revoked, or never issued).',
        [errorInfo(expired ? 'ACCESS_TOKEN_EXPIRED' : 'ACCESS_TOKEN_INVALID')],
        { 'www-authenticate': 'Bearer realm="alpha-sandbox", error="invalid_token"' },
      );
    }
    if (!found.scopes.includes(ALPHA_SCOPE_BUSINESS_MANAGE)) {
      const challenge = `Bearer realm="alpha-sandbox", error="insufficient_scope", scope="${ALPHA_SCOPE_BUSINESS_MANAGE}"`;
      throw new SandboxError(
        403,
        'Request had insufficient authentication scopes.',
        [errorInfo('ACCESS_TOKEN_SCOPE_INSUFFICIENT')],
        { 'www-authenticate': challenge },
      );
    }
    return { kind: 'identity', sub: found.sub };
  }

  /** An identity reaches only the accounts it owns; an unknown account is not its own either. */
  function requireAccountAccess(caller: Caller, request: FastifyRequest): void {
    const accountId = (request.params as { accountId?: unknown } | undefined)?.accountId;
    if (caller.kind === 'identity' && typeof accountId === 'string' && !store.directory.owns(caller.sub, accountId)) {
      throw new SandboxError(403);
    }
  }

  /** The steps every provider call goes through, in the order a real provider would show them. */
  async function provider(
    kind: AlphaSandboxCallKind,
    request: FastifyRequest,
    reply: FastifyReply,
    work: (caller: Caller) => SandboxAnswer,
  ): Promise<FastifyReply> {
    store.countCall(kind);
    // At the door, as the call arrives: a call over the quota takes no scripted rule and does nothing.
    const overQuota = store.takeQuota();
    if (overQuota) {
      await store.hold(store.config.latencyMs);
      return sendError(reply, projectQuotaExceeded(overQuota));
    }
    const failure = store.takeFailure(request.method, request.url, { body: bodyTextOf(request.body) });
    await store.hold(store.config.latencyMs + (failure?.delayMs ?? 0));
    return answerOrFail(
      failure,
      (status) => sendFailure(request, reply, status),
      (): SandboxAnswer => {
        try {
          const caller = authenticate(request);
          requireAccountAccess(caller, request);
          return work(caller);
        } catch (error) {
          if (error instanceof FieldViolation) {
            return errorAnswer(
              new SandboxError(400, error.message, [
                {
                  '@type': 'type.googleapis.com/google.rpc.BadRequest',
                  fieldViolations: [{ field: error.field, description: error.description }],
                },
              ]),
            );
          }
          if (error instanceof SandboxError) return { ...errorAnswer(error), headers: error.headers };
          throw error;
        }
      },
      (answer) =>
        reply
          .code(answer.status)
          .headers(answer.headers ?? {})
          .send(answer.body),
    );
  }

  const localPostsPath = '/v4/accounts/:accountId/locations/:locationId/localPosts';
  const postPath = `${localPostsPath}/:postId`;

  app.post<{ Params: LocationParams; Querystring: Query; Body: unknown }>(localPostsPath, (request, reply) =>
    provider('create', request, reply, () => {
      const requestId = optionalQueryString(request.query, 'requestId');
      const content = validateLocalPost(request.body);
      const { post } = store.create({
        accountId: request.params.accountId,
        locationId: request.params.locationId,
        requestId: requestId || null,
        content,
      });
      return { status: 200, body: post };
    }),
  );

  app.get<{ Params: LocationParams; Querystring: Query }>(localPostsPath, (request, reply) =>
    provider('list', request, reply, () => {
      const pageSize = parsePageSize(optionalQueryString(request.query, 'pageSize'));
      const pageToken = optionalQueryString(request.query, 'pageToken');
      const page = store.list({
        accountId: request.params.accountId,
        locationId: request.params.locationId,
        pageSize,
        beforeSeq: pageToken ? decodePageToken(pageToken, 'before') : undefined,
      });
      // Like the provider, an empty list and a last page leave their fields out.
      return {
        status: 200,
        body: {
          ...(page.posts.length > 0 ? { localPosts: page.posts } : {}),
          ...(page.nextBeforeSeq !== undefined ? { nextPageToken: encodePageToken('before', page.nextBeforeSeq) } : {}),
        },
      };
    }),
  );

  app.get<{ Params: PostParams }>(postPath, (request, reply) =>
    provider('get', request, reply, () => {
      const post = store.get(postName(request.params));
      if (!post) throw new SandboxError(404);
      return { status: 200, body: post };
    }),
  );

  app.delete<{ Params: PostParams }>(postPath, (request, reply) =>
    provider('delete', request, reply, () => {
      if (!store.delete(postName(request.params))) throw new SandboxError(404);
      return { status: 200, body: {} };
    }),
  );

  const locationsPath = '/v4/accounts/:accountId/locations';
  const locationPath = `${locationsPath}/:locationId`;

  app.post<{ Params: AccountParams; Querystring: Query; Body: unknown }>(locationsPath, (request, reply) =>
    provider('location-create', request, reply, () => {
      const requestId = optionalQueryString(request.query, 'requestId');
      const content = validateLocation(request.body);
      const { location } = store.createLocation({ accountId: request.params.accountId, requestId: requestId || null, content });
      return { status: 200, body: location };
    }),
  );

  app.get<{ Params: AccountParams; Querystring: Query }>(locationsPath, (request, reply) =>
    provider('location-list', request, reply, () => {
      const pageSize = parsePageSize(optionalQueryString(request.query, 'pageSize'));
      const pageToken = optionalQueryString(request.query, 'pageToken');
      const page = store.listLocations({
        accountId: request.params.accountId,
        pageSize,
        afterSeq: pageToken ? decodePageToken(pageToken, 'after') : undefined,
      });
      return {
        status: 200,
        body: {
          ...(page.locations.length > 0 ? { locations: page.locations } : {}),
          ...(page.nextAfterSeq !== undefined ? { nextPageToken: encodePageToken('after', page.nextAfterSeq) } : {}),
        },
      };
    }),
  );

  app.get<{ Params: LocationParams }>(locationPath, (request, reply) =>
    provider('location-get', request, reply, () => {
      const location = store.getLocation(locationName(request.params));
      if (!location) throw new SandboxError(404);
      return { status: 200, body: location };
    }),
  );

  // Checked in the provider's order: the location, its edit quota, then the mask and the result.
  app.patch<{ Params: LocationParams; Querystring: Query; Body: unknown }>(locationPath, (request, reply) =>
    provider('location-update', request, reply, () => {
      const result = store.updateLocation(locationName(request.params), (current) =>
        applyLocationUpdate(current, request.body, parseUpdateMask(optionalQueryString(request.query, 'updateMask'))),
      );
      if (!result) throw new SandboxError(404);
      if ('retryAfterMs' in result) {
        const seconds = retryAfterSecondsOf(result.retryAfterMs);
        throw resourceExhausted(seconds, 'Quota exceeded for location edits per minute. Retry later.');
      }
      return { status: 200, body: result.location };
    }),
  );

  app.get<{ Querystring: Query }>('/v4/accounts', (request, reply) =>
    provider('account-list', request, reply, (caller) => {
      const pageSize = parsePageSize(optionalQueryString(request.query, 'pageSize'), ACCOUNT_PAGE);
      const pageToken = optionalQueryString(request.query, 'pageToken');
      const page = store.directory.listAccounts({
        ownerSub: caller.kind === 'identity' ? caller.sub : undefined,
        pageSize,
        afterSeq: pageToken ? decodePageToken(pageToken, 'accounts') : undefined,
      });
      return {
        status: 200,
        body: {
          ...(page.accounts.length > 0 ? { accounts: page.accounts.map(accountView) } : {}),
          ...(page.nextAfterSeq !== undefined ? { nextPageToken: encodePageToken('accounts', page.nextAfterSeq) } : {}),
        },
      };
    }),
  );

  app.get<{ Params: AccountParams }>('/v4/accounts/:accountId', (request, reply) =>
    provider('account-get', request, reply, () => {
      const account = store.directory.account(request.params.accountId);
      if (!account) throw new SandboxError(404);
      return { status: 200, body: accountView(account) };
    }),
  );

  const reviewsPath = `${locationPath}/reviews`;
  const reviewPath = `${reviewsPath}/:reviewId`;
  const replyPath = `${reviewPath}/reply`;

  app.get<{ Params: LocationParams; Querystring: Query }>(reviewsPath, (request, reply) =>
    provider('review-list', request, reply, () => {
      if (!store.getLocation(locationName(request.params))) throw new SandboxError(404);
      const pageSize = parsePageSize(optionalQueryString(request.query, 'pageSize'), REVIEW_PAGE);
      const pageToken = optionalQueryString(request.query, 'pageToken');
      const page = store.reviews.list({
        accountId: request.params.accountId,
        locationId: request.params.locationId,
        pageSize,
        after: pageToken ? decodeReviewPageToken(pageToken) : undefined,
      });
      // Zero values and empty lists are left out, as the provider's JSON leaves them out.
      return {
        status: 200,
        body: {
          ...(page.reviews.length > 0 ? { reviews: page.reviews } : {}),
          ...(page.averageRating !== 0 ? { averageRating: page.averageRating } : {}),
          ...(page.totalReviewCount !== 0 ? { totalReviewCount: page.totalReviewCount } : {}),
          ...(page.next !== undefined ? { nextPageToken: encodeReviewPageToken(page.next) } : {}),
        },
      };
    }),
  );

  app.get<{ Params: ReviewParams }>(reviewPath, (request, reply) =>
    provider('review-get', request, reply, () => {
      const review = store.reviews.get(reviewName(request.params));
      if (!review) throw new SandboxError(404);
      return { status: 200, body: review };
    }),
  );

  // Checked in the provider's order: the review, then the comment.
  app.put<{ Params: ReviewParams; Body: unknown }>(replyPath, (request, reply) =>
    provider('review-reply', request, reply, () => {
      const name = reviewName(request.params);
      if (!store.reviews.has(name)) throw new SandboxError(404);
      const comment = validateReplyBody(request.body);
      const { moderationMs, rejectMarker } = store.config;
      return { status: 200, body: store.reviews.reply(name, comment, { moderationMs, rejectMarker }) };
    }),
  );

  app.delete<{ Params: ReviewParams }>(replyPath, (request, reply) =>
    provider('review-reply-delete', request, reply, () => {
      const result = store.reviews.deleteReply(reviewName(request.params));
      if (result === undefined) throw new SandboxError(404);
      if (result === 'no-reply') throw new SandboxError(404, 'The review has no reply.');
      return { status: 200, body: {} };
    }),
  );

  // `::` is a literal colon to Fastify: the provider's method suffix, not a path parameter.
  app.post<{ Body: unknown }>('/v1/places::searchText', (request, reply) =>
    provider('places-search', request, reply, () => {
      const places = store.searchPlaces(validatePlacesSearch(request.body));
      // Like the provider, no match answers {}.
      return { status: 200, body: places.length > 0 ? { places } : {} };
    }),
  );

  // The controls: for tests and demonstrations, not part of the provider's API, hence no authentication (loopback only).
  registerCommonControls(app, store, configPatchSchema, (reply, error) => sendError(reply, 400, describeIssues(error)));
  app.put<{ Body: unknown }>('/_control/market', async (request, reply) => {
    const market = marketSchema.safeParse(request.body);
    if (!market.success) return sendError(reply, 400, describeIssues(market.error));
    return store.setMarket(market.data);
  });
  app.delete('/_control/market', async () => store.resetMarket());
  app.post<{ Body: unknown }>('/_control/identities', async (request, reply) => {
    const input = identityInputSchema.safeParse(request.body);
    if (!input.success) return sendError(reply, 400, describeIssues(input.error));
    return controlCall(reply, () => store.addIdentity(input.data));
  });
  app.post<{ Body: unknown }>('/_control/reviews', async (request, reply) => {
    const input = addReviewsSchema.safeParse(request.body);
    if (!input.success) return sendError(reply, 400, describeIssues(input.error));
    return controlCall(reply, () => ({ reviews: store.addReviews(input.data.location, input.data.reviews) }));
  });
  // As when the author deletes a review: every call about it answers 404 from now on.
  app.delete<{ Body: unknown }>('/_control/reviews', async (request, reply) => {
    const input = deleteReviewSchema.safeParse(request.body);
    if (!input.success) return sendError(reply, 400, describeIssues(input.error));
    if (!store.reviews.delete(input.data.name)) return sendError(reply, 404, `No review ${input.data.name}`);
    return { deleted: input.data.name };
  });

  await app.register(alphaSandboxOAuthPlugin, { prefix: '/oauth', store, clock });
}

/** A control's answer, or its refusal in the envelope: 400 naming the field, 404 or 409 saying what is in the way. */
function controlCall(reply: FastifyReply, work: () => unknown): unknown {
  try {
    return work();
  } catch (error) {
    if (error instanceof FieldViolation) return sendError(reply, 400, error.message);
    if (error instanceof AlphaSandboxControlRefusal) return sendError(reply, error.status, error.message);
    throw error;
  }
}

function errorInfo(reason: string, metadata?: Record<string, string>): unknown {
  return { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'alpha.example', ...(metadata ? { metadata } : {}) };
}

/** A 429 as the provider answers it: RetryInfo in the envelope, and Retry-After, both in whole seconds. */
function resourceExhausted(seconds: number, message?: string, details: unknown[] = []): SandboxError {
  return new SandboxError(
    429,
    message,
    [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` }, ...details],
    { 'retry-after': String(seconds) },
  );
}

/** The per-project quota's 429, naming the limit as the provider's ErrorInfo does. */
function projectQuotaExceeded(exceeded: ProjectQuotaExceeded): SandboxError {
  const [limitName, per] =
    exceeded.limit === 'quotaPerSecond' ? ['RequestsPerSecondPerProject', 'second'] : ['RequestsPerMinutePerProject', 'minute'];
  return resourceExhausted(
    exceeded.retryAfterSeconds,
    `Quota exceeded for quota metric 'Requests' and limit 'Requests per ${per} per project' (${exceeded.limitValue}). Retry later.`,
    [errorInfo('RATE_LIMIT_EXCEEDED', { quota_metric: 'requests', quota_limit: limitName, quota_limit_value: String(exceeded.limitValue) })],
  );
}

function reviewName(params: ReviewParams): string {
  return `accounts/${params.accountId}/locations/${params.locationId}/reviews/${params.reviewId}`;
}

function locationName(params: LocationParams): string {
  return `accounts/${params.accountId}/locations/${params.locationId}`;
}

function postName(params: PostParams): string {
  return `accounts/${params.accountId}/locations/${params.locationId}/localPosts/${params.postId}`;
}

function errorAnswer(error: SandboxError): SandboxAnswer {
  return {
    status: error.status,
    body: { error: { code: error.status, message: error.message, status: statusAnswer(error.status).reason, details: error.details } },
  };
}

/** The error in the envelope, with its headers; a status alone is answered with its canonical message. */
function sendError(reply: FastifyReply, error: SandboxError | number, message?: string): FastifyReply {
  const sandboxError = typeof error === 'number' ? new SandboxError(error, message) : error;
  const answer = errorAnswer(sandboxError);
  return reply.code(answer.status).headers(sandboxError.headers).send(answer.body);
}

function sendFailure(request: FastifyRequest, reply: FastifyReply, status: number): FastifyReply {
  if (status === 0) return dropConnection(request, reply);
  return sendError(reply, status === 429 ? resourceExhausted(1) : new SandboxError(status));
}

function optionalQueryString(query: Query, field: string): string | undefined {
  const value = query[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new FieldViolation(field, 'must be given once');
  return value;
}

function parsePageSize(
  text: string | undefined,
  limits: { defaultSize: number; maxSize: number } = { defaultSize: DEFAULT_PAGE_SIZE, maxSize: MAX_PAGE_SIZE },
): number {
  if (text === undefined || text === '') return limits.defaultSize;
  if (!/^\d+$/.test(text)) throw new FieldViolation('pageSize', 'must be a non-negative integer');
  const size = Number(text);
  // 0 means the default; above the maximum is capped, as the provider does.
  return size === 0 ? limits.defaultSize : Math.min(size, limits.maxSize);
}

/**
 * Page tokens are opaque to clients; inside, the creation position the next page starts below (posts, newest first)
 * or after (locations and accounts, oldest first), and which list it is, so one list's token is refused by another.
 */
function encodePageToken(list: 'before' | 'after' | 'accounts', seq: number): string {
  return Buffer.from(`${list}:${seq}`).toString('base64url');
}

function decodePageToken(token: string, list: 'before' | 'after' | 'accounts'): number {
  const match = /^(before|after|accounts):(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  if (!match || match[1] !== list) throw new FieldViolation('pageToken', 'is not a page token of this list');
  return Number(match[2]);
}

/** Reviews are newest first by createTime, which a control may set in any order: the position holds both keys. */
function encodeReviewPageToken(position: ReviewPosition): string {
  return Buffer.from(`reviews:${position.createdAt}:${position.seq}`).toString('base64url');
}

function decodeReviewPageToken(token: string): ReviewPosition {
  const match = /^reviews:(-?\d+):(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  if (!match) throw new FieldViolation('pageToken', 'is not a page token of this list');
  return { createdAt: Number(match[1]), seq: Number(match[2]) };
}
