import { LockMode, type ObjectQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requirePrincipal } from '../access/guards';
import type { Page } from '../shared/page';
import { accountScopeFilter, resolveAccountScope } from '../account/account.access';
import { DomainError } from '../errors/domain-error';
import type { RateLimitState } from '../errors/domain-error';
import { countRequestInChange, type LimitDeps } from '../limits/request-limits';
import type { CountedInChange, InChangeOptions } from '../limits/rate-limiter';
import type { Location } from '../location/location.entity';
import { findLocationInScopeAfresh, findLocationInScopeOrRecent, findLocationOfAccount, findLocationsInScope } from '../location/location.service';
import { isLocationChanged } from '../location/recent-locations';
import type { RequestScope } from '../request-scope';
import { codecOf } from '../db/entity-codec';
import { runChange, type FollowingWrite } from '../db/change-statement';
import { transitionedFrom, transitionRow } from '../db/row-transition';
import { insertChange, insertRowsChange } from '../db/row-writes';
import { statementsApart } from '../db/statements';
import { findPlain, findPlainAndCount } from '../db/prepared-reads';
import { isId, newId, NO_MATCH_ID } from '../shared/ids';
import { sliceOf, type Slice, type SliceRequest } from '../shared/slice';
import { idempotencyKeyWrite, isKeyTaken, replayOf, requestHashOf } from './idempotency';
import type { CreatePostArgs, CreatePostCampaignInput, PostFilterArgs, PostsPageArgs } from './post.inputs';
import { Post } from './post.entity';
import { PostSource, PostState } from './post.enums';
import { announcePostChange, newPostsNews, newPostsWrites, postChangeNews, postChangeWrites, type PostEventDeps } from './post.events';
import { postDeleteQueue, postPublishQueue } from './post.queues';
import { preparePostParams } from './post.rules';
import type { JobEngine } from '../jobs/job-engine';

export type PostServiceDeps = { jobs: JobEngine } & PostEventDeps & LimitDeps;

/** A post's location must be connected to the alpha provider. */
function requirePostable(location: Location): Location {
  if (!location.connected || !location.alphaLocationName) {
    throw DomainError.badInput('The location is not connected to the alpha provider');
  }
  return location;
}

function sourceOf(scope: RequestScope<PostServiceDeps>): PostSource {
  return scope.source === 'external_api' ? PostSource.EXTERNAL_API : PostSource.APP;
}

/** What a new post takes from its request and its location, checked; its organization and campaign apart. */
function newPostFields(scope: RequestScope<PostServiceDeps>, location: Location, content: Parameters<typeof preparePostParams>[0], now: Date) {
  requirePostable(location);
  const { params, scheduledTime } = preparePostParams(content, location, now);
  return { account: location.account, location, source: sourceOf(scope), params, scheduledTime, createdAt: now };
}

/** What a create did: the post, whether it was an idempotent replay, and the rate limit's state (not for replays). */
export interface CreatePostOutcome {
  post: Post;
  replayed: boolean;
  rateLimit?: RateLimitState;
}

/**
 * Creates a post in SENDING and, in the same statement, the job that publishes it, its activity event and its unit of
 * work, counted against the rate limit and the monthly quota (docs/write-path.md). With an Idempotency-Key a replay
 * is answered before anything is counted, and the key's row is written by the same statement: of concurrent requests
 * with one key exactly one creates a post, the others answer it (a changed body is refused with 422).
 */
export async function createPost(scope: RequestScope<PostServiceDeps>, args: CreatePostArgs): Promise<CreatePostOutcome> {
  const principal = requirePrincipal(scope);
  const key = args.idempotencyKey?.trim() || null;
  const now = scope.runtime.clock.now();
  let accountId: string;
  let location: Location;
  let unchanged: InChangeOptions['checkFirst'];
  let requestHash: string | null = null;
  if (key) {
    // A replay is answered before the location is looked at again: it may have changed since.
    accountId = await resolveAccountScope(scope, args.accountId);
    requestHash = requestHashOf(accountId, args.input);
    const earlier = await replayOf(scope.em, accountId, key, requestHash, now);
    if (earlier) return { post: earlier, replayed: true };
    location = await findLocationOfAccount(scope.em, accountId, args.input.locationId);
  } else {
    // A location this process read before is checked by the statement itself (docs/write-path.md).
    ({ accountId, location, unchanged } = await findLocationInScopeOrRecent(scope, args.accountId, args.input.locationId));
  }
  const keyWrite = key ? [idempotencyKeyWrite(scope.em.getMetadata(), key, requestHash!, now)] : [];
  for (let attempt = 1; ; attempt++) {
    // Written by its own statement (insertChange): a plain instance, not the ORM's entity (0.5 ms of CPU a post).
    const post = codecOf(scope.em.getMetadata(), Post).create({ ...newPostFields(scope, location, args.input, now), organization: { id: principal.organizationId } });
    // Requests of one key take their turns before they count (docs/write-path.md, "A keyed create").
    const counted = countRequestInChange(scope, 'posts', { accountId, monthlyPosts: { amount: 1, now } }, key ? { lockFirst: `idempotency:${accountId}:${key}` } : { checkFirst: unchanged });
    try {
      return { post, replayed: false, rateLimit: await insertPostWithJob(scope, post, counted, keyWrite) };
    } catch (error) {
      if (unchanged && isLocationChanged(error)) {
        // The location changed since this process read it (nothing was counted or written): read it now.
        ({ accountId, location } = await findLocationInScopeAfresh(scope, args.accountId, args.input.locationId));
        unchanged = undefined;
        continue;
      }
      // A second refusal would mean the key's row came back between two statements: not a replay, left to the
      // error formatter (logged, a generic answer).
      if (!key || !isKeyTaken(error) || attempt > 1) throw error;
    }
    // Another request created the key's post since the first look (this statement wrote nothing, counts included):
    // its post is the answer. Read afresh, not from this request's identity map, which holds the first look's row.
    const earlier = await replayOf(scope.em.fork(), accountId, key, requestHash!, now);
    if (earlier) return { post: earlier, replayed: true };
  }
}

/**
 * A new post, its activity event, its publish job and the job's unit of work, in one statement that also counts the
 * post against its rate limit and monthly quota (docs/write-path.md), with `along` (an Idempotency-Key's row); their
 * news once it has run. Answers the rate limit's state.
 */
async function insertPostWithJob(scope: RequestScope<PostServiceDeps>, post: Post, counted: CountedInChange, along: FollowingWrite[]): Promise<RateLimitState> {
  const { runtime, em } = scope;
  const job = await runtime.jobs.enqueueWrites(postPublishQueue, { postId: post.id });
  const change = { ...insertChange(em.getMetadata(), em.getPlatform(), Post, post, { admittedBy: counted.admittedBy }), locks: counted.preamble };
  // The change's news before the wake-up of the worker that moves it on.
  const news = postChangeNews(runtime, post);
  job.tell(news);
  try {
    await job.within(() => runChange(statementsApart(em), change, [...counted.writes, ...postChangeWrites(runtime, post, null), ...along, ...job.writes, ...news.writes()]));
  } catch (error) {
    throw counted.refusal(error) ?? error;
  }
  await news.announced();
  return counted.state();
}

/**
 * One post per location under one campaign id, all or none, in one statement (docs/write-path.md, "A campaign"):
 * the locations are read together and checked as a single post's location is; then the posts, their events, their
 * bulk jobs in turn with other organizations' (`enqueueBulkWrites`), their units of work and their news are written
 * by one statement, which counts the campaign as one request by the per-minute rate limit and as one post per
 * location by the monthly quota, and writes nothing when either refuses it.
 */
export async function createPostCampaign(
  scope: RequestScope<PostServiceDeps>,
  args: { accountId?: string | null; input: CreatePostCampaignInput },
): Promise<{ campaignId: string; posts: Post[]; rateLimit: RateLimitState }> {
  const principal = requirePrincipal(scope);
  const campaignId = newId();
  const now = scope.runtime.clock.now();
  const codec = codecOf(scope.em.getMetadata(), Post);
  const { accountId, results: posts } = await findLocationsInScope(scope, args.accountId, [...new Set(args.input.locationIds)], (location) =>
    codec.create({ ...newPostFields(scope, location, args.input, now), organization: { id: principal.organizationId }, campaignId }),
  );
  const counted = countRequestInChange(scope, 'posts', { accountId, monthlyPosts: { amount: posts.length, now } });
  const { runtime, em } = scope;
  const jobs = await runtime.jobs.enqueueBulkWrites(postPublishQueue, principal.organizationId, posts.map((post) => ({ postId: post.id })));
  const change = { ...insertRowsChange(em.getMetadata(), em.getPlatform(), Post, posts, { admittedBy: counted.admittedBy }), locks: counted.preamble };
  // The posts' news before the wake-up of the worker that moves them on.
  const news = newPostsNews(runtime, posts);
  jobs.tell(news);
  try {
    await jobs.within(() => runChange(statementsApart(em, { prepared: false }), change, [...counted.writes, ...newPostsWrites(runtime, posts), ...jobs.writes, ...news.writes()]));
  } catch (error) {
    throw counted.refusal(error) ?? error;
  }
  await news.announced();
  return { campaignId, posts, rateLimit: counted.state() };
}

async function findPost(em: EntityManager, accountId: string, id: string, lock = false): Promise<Post> {
  const post = isId(id)
    ? await em.findOne(Post, { id, account: accountId }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {})
    : null;
  if (!post) throw DomainError.notFound('Post');
  return post;
}

/** One post, read plainly (src/db/prepared-reads.ts): the answer changes nothing. */
export async function getPost(scope: RequestScope<PostServiceDeps>, args: { accountId?: string | null; id: string }): Promise<Post> {
  const accountId = await resolveAccountScope(scope, args.accountId);
  const [post] = isId(args.id) ? await findPlain(scope.em, Post, { id: args.id, account: accountId }, { limit: 1 }) : [];
  if (!post) throw DomainError.notFound('Post');
  return post;
}

/** The filters of the `posts` connection: those of GET /post, and a campaign. */
export type PostsFilter = PostFilterArgs & { campaignId?: string | null };

function postWhere(accountId: string, filter: PostFilterArgs & { campaignId?: string | null }): ObjectQuery<Post> {
  const where: ObjectQuery<Post> = { account: accountId };
  if (filter.locationId) where.location = isId(filter.locationId) ? filter.locationId : NO_MATCH_ID;
  where.state = filter.state ?? { $ne: PostState.DELETED };
  if (filter.source) where.source = filter.source;
  // Campaign posts are listed only when their campaign is asked for.
  where.campaignId = filter.campaignId ? (isId(filter.campaignId) ? filter.campaignId : NO_MATCH_ID) : null;
  if (filter.q?.trim()) where.searchVector = { $fulltext: filter.q.trim() };
  return where;
}

/** The page-numbered list of GET /post: newest first. */
export async function listPostsPage(
  scope: RequestScope<PostServiceDeps>,
  args: PostsPageArgs,
): Promise<Page<'posts', Post>> {
  const accountId = await resolveAccountScope(scope, args.accountId);
  const where = postWhere(accountId, args);
  const [posts, found] = await findPlainAndCount(scope.em, Post, where, {
    orderBy: { createdAt: 'desc', id: 'desc' },
    limit: args.perPage,
    offset: (args.page - 1) * args.perPage,
  });
  return { found, page: args.page, perPage: args.perPage, posts };
}

/** Posts newest first (ids are time-ordered), a slice at a time: the `posts` connection. */
export async function listPosts(scope: RequestScope<PostServiceDeps>, filter: PostsFilter, slice: SliceRequest): Promise<Slice<Post>> {
  const accountId = await resolveAccountScope(scope, filter.accountId);
  const where = postWhere(accountId, filter);
  const [rows, totalCount] = await Promise.all([
    findPlain(scope.em, Post, slice.afterId ? { ...where, id: { $lt: slice.afterId } } : where, { orderBy: { id: 'desc' }, limit: slice.first + 1 }),
    scope.em.count(Post, where),
  ]);
  return sliceOf(rows, slice.first, totalCount);
}

export interface DeletePostResult {
  id: string;
  postId: string | null;
  state: PostState;
  message: string;
}

/**
 * A post that never reached the provider is deleted at once; one that did is put back in SENDING with its
 * deletion queued, and becomes DELETED when the provider confirms. Deleting a deleted post changes nothing. The post
 * is read plainly and changed by one statement guarded by its version (with its event, and its job when one is
 * queued; docs/write-path.md); a post that moved on between the two is decided again under its row lock.
 */
export async function deletePost(scope: RequestScope<PostServiceDeps>, args: { accountId?: string | null; id: string }): Promise<DeletePostResult> {
  const { accountId, account } = accountScopeFilter(scope, args.accountId);
  const [read] = isId(args.id) ? await findPlain(scope.em, Post, { id: args.id, account }, { limit: 1 }) : [];
  if (!read) {
    // Tells an unknown account (or one out of reach) from an unknown post.
    await resolveAccountScope(scope, args.accountId);
    throw DomainError.notFound('Post');
  }
  const { post, changed } = (await deleteAtOnce(scope, read)) ?? (await deleteLocked(scope, accountId, args.id));
  const message =
    post.state === PostState.DELETED
      ? changed ? 'Post deleted' : 'Post already deleted'
      : 'Post deletion queued';
  return { id: post.id, postId: post.providerName, state: post.state, message };
}

/** What a deletion did to its post. */
interface Deletion {
  post: Post;
  changed: boolean;
}

/** What deleting `post` sets: DELETED at once when the provider never had it, else its deletion pending. */
function deletionOf(post: Post): { state: PostState; pendingAction: 'delete' | null } {
  return post.providerName ? { state: PostState.SENDING, pendingAction: 'delete' } : { state: PostState.DELETED, pendingAction: null };
}

/** Deletes the post as read, in one statement; null when it moved on since (its version changed). */
async function deleteAtOnce(scope: RequestScope<PostServiceDeps>, read: Post): Promise<Deletion | null> {
  if (read.state === PostState.DELETED || read.pendingAction === 'delete') return { post: read, changed: false };
  const { runtime, em } = scope;
  const now = runtime.clock.now();
  const set = deletionOf(read);
  const job = read.providerName ? await runtime.jobs.enqueueWrites(postDeleteQueue, { postId: read.id }) : undefined;
  const after = transitionedFrom(em, Post, read, set, now);
  const writes = postChangeWrites(runtime, after, read.state);
  // The change's news before the wake-up of the worker that moves it on.
  const news = postChangeNews(runtime, after);
  job?.tell(news);
  const transition = (following: FollowingWrite[]) => transitionRow(em, Post, { id: read.id, version: read.version }, set, now, [...following, ...news.writes()]);
  const changed = job ? await job.within(() => transition([...writes, ...job.writes])) : await transition(writes);
  if (!changed) return null;
  await news.announced();
  return { post: changed, changed: true };
}

/** Deletes the post under its row lock, in a transaction: for a post that moved on after it was read. */
async function deleteLocked(scope: RequestScope<PostServiceDeps>, accountId: string, id: string): Promise<Deletion> {
  return scope.em.transactional(async (em) => {
    const post = await findPost(em, accountId, id, true);
    if (post.state === PostState.DELETED || post.pendingAction === 'delete') return { post, changed: false };
    const stateBefore = post.state;
    // A post the provider never had is DELETED at once: a publish job still running sees it and removes what it made.
    const deletion = deletionOf(post);
    post.state = deletion.state;
    post.pendingAction = deletion.pendingAction;
    if (deletion.pendingAction === 'delete') {
      await em.flush();
      await scope.runtime.jobs.enqueue(em, postDeleteQueue, { postId: post.id });
    }
    announcePostChange(em, scope.runtime, post, stateBefore);
    return { post, changed: true };
  });
}
