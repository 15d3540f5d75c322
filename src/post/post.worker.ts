import type { EntityManager } from '@mikro-orm/postgresql';
import { accountAccessToken, type AlphaTokenDeps } from '../account/alpha-tokens';
import type { JobFailure } from '../jobs/failure-policy';
import { defineWorker, type AnyWorker, type JobContext, type JobEngine } from '../jobs/job-engine';
import type { JobPayload } from '../jobs/queue';
import type { AlphaCallOptions, AlphaClient } from '../providers/alpha/alpha.client';
import { AlphaProviderError } from '../providers/alpha/alpha.errors';
import type { AlphaLocalPost } from '../providers/alpha/alpha.types';
import { transitionedFrom, transitionRow } from '../db/row-transition';
import { changeLocked, lockRow } from '../db/row-lock';
import { alphaLocalPostOf } from './post.alpha-mapping';
import { Post, type PostLastError } from './post.entity';
import { PostState } from './post.enums';
import { announcePostChange, postChangeNews, postChangeWrites, type PostEventDeps } from './post.events';
import { postCheckQueue, postDeleteQueue, postPublishQueue } from './post.queues';
import { readPostsForJobs, type PostForJob } from './post.sql';
import { batchedReadWith } from '../db/batched-read';
import type { WriteAlong } from '../db/change-statement';
import type { Clock } from '../shared/clock';
import type { Database } from '../db/orm';

export type PostWorkerDeps = { database: Database; alpha: AlphaClient; jobs: JobEngine; clock: Clock } & PostEventDeps & AlphaTokenDeps;

/** Reads a post for its job, with the job's writes along; the reads of jobs starting together share a statement. */
type ReadPost = (postId: string, along: WriteAlong[]) => Promise<PostForJob | undefined>;

/** How long to wait before asking the provider again about a post under review: 1, 2, 4 … 60 s. */
export function checkDelayMs(attempt: number): number {
  return Math.min(60, 2 ** attempt) * 1000;
}

function lastErrorOf(failure: JobFailure, now: Date): PostLastError {
  return { status: failure.status, reason: failure.reason, message: failure.message, details: failure.details, at: now.toISOString() };
}

/** The provider call options of a post's job: its stop signal, and its account's access token. */
async function callOptionsOf(runtime: AlphaTokenDeps, accountId: string, job: JobContext): Promise<AlphaCallOptions> {
  return { signal: job.signal, accessToken: await accountAccessToken(runtime, accountId) };
}

/** `accounts/<a>/locations/<l>` -> the provider's account and location ids. */
function providerIds(alphaLocationName: string): { accountId: string; locationId: string } {
  const match = /^accounts\/([^/]+)\/locations\/([^/]+)$/.exec(alphaLocationName);
  if (!match) throw new Error(`Malformed alpha location name: ${alphaLocationName}`);
  return { accountId: match[1]!, locationId: match[2]! };
}

/**
 * Runs `change` on the post under its row lock (src/db/row-lock.ts) and commits (the ORM counts the version,
 * src/db/orm.ts stamps the update time); announces the change once committed when `change` returned true.
 * Returns the post as committed, or null when it is gone.
 */
async function changePost(
  runtime: PostEventDeps,
  postId: string,
  change: (post: Post, em: EntityManager) => Promise<boolean> | boolean,
): Promise<Post | null> {
  const changed = await changeLocked(runtime.database.orm.em.fork(), Post, { id: postId }, async (post, tx) => {
    const stateBefore = post.state;
    const announced = await change(post, tx);
    if (announced) announcePostChange(tx, runtime, post, stateBefore);
  });
  return changed?.row ?? null;
}

/**
 * A failure of a post's job, on the post: its last_error either way; a final one ends it in ERROR. Only a post still
 * waiting for that job's work (`waiting`) is changed, so a late or dead-lettered job never undoes a newer state.
 */
function postFailureRecorder(runtime: PostEventDeps & { clock: Clock }, waiting: (post: Post) => boolean) {
  return async ({ postId }: { postId: string }, failure: JobFailure): Promise<void> => {
    await changePost(runtime, postId, (post) => {
      if (post.state === PostState.DELETED || !waiting(post)) return false;
      post.lastError = lastErrorOf(failure, runtime.clock.now());
      if (failure.final) {
        post.state = PostState.ERROR;
        post.pendingAction = null;
      }
      return true;
    });
  };
}

/** The end the provider's answer puts a post in (LIVE, REJECTED), or undefined while it is still at work. */
function endFromProvider(remote: AlphaLocalPost): PostState.LIVE | PostState.REJECTED | undefined {
  if (remote.state === 'REJECTED') return PostState.REJECTED;
  if (remote.state === 'LIVE') return PostState.LIVE;
  return undefined;
}

/** The state a post takes from the provider's answer. */
function stateFromProvider(remote: AlphaLocalPost, post: Post, now: Date): PostState {
  return endFromProvider(remote) ?? (post.scheduledTime && post.scheduledTime > now ? PostState.SCHEDULED : PostState.PROCESSING);
}

/** The state (and pending action) a post's job found it in, and which it must still be in to apply the answer. */
interface WaitingPost {
  state: PostState;
  pendingAction: 'publish' | null;
}

/**
 * Moves the post as its job read it (its version guards it, with `guard`) in one statement (src/db/change-statement.ts)
 * that also writes its activity event and completes the job with its unit of work; no lock, no transaction around
 * it. False when the post moved on meanwhile: the caller then decides under the row lock.
 */
async function transitionAtOnce(
  runtime: PostEventDeps,
  post: Post,
  guard: { state?: PostState; pendingAction: Post['pendingAction'] },
  set: Partial<Record<keyof Post & string, string | Date | null>>,
  job: JobContext,
): Promise<boolean> {
  const now = runtime.clock.now();
  // Statements, metadata and the row mapper only: no unit of work, so no fork of the ORM's manager either.
  const em = runtime.database.orm.em;
  // The post as the statement leaves it, for its event: the version guard makes it the one read, changed by `set`.
  const after = transitionedFrom(em, Post, post, set, now);
  const where = { id: post.id, version: post.version, ...guard };
  const news = postChangeNews(runtime, after);
  const changed = await transitionRow(em, Post, where, set, now, [...postChangeWrites(runtime, after, post.state), ...job.completion(news), ...news.writes()]);
  if (!changed) return false;
  await news.announced();
  return true;
}

/**
 * The common case of an answer that ends the post (LIVE, REJECTED) for a post still as its job read it, at once
 * (transitionAtOnce); otherwise applyProviderState decides under the row lock, as for every other answer. Same rule
 * as applyProviderState's: a post waiting for its job was never LIVE, so its publishedTime is null and becomes now.
 */
async function endAtOnce(runtime: PostWorkerDeps, post: Post, remote: AlphaLocalPost, waiting: WaitingPost, job: JobContext): Promise<boolean> {
  const end = endFromProvider(remote);
  if (!end) return false;
  return transitionAtOnce(
    runtime,
    post,
    waiting,
    {
      state: end,
      pendingAction: null,
      ...(remote.name ? { providerName: remote.name } : {}),
      ...(remote.searchUrl ? { searchUrl: remote.searchUrl } : {}),
      ...(end === PostState.LIVE ? { publishedTime: runtime.clock.now() } : {}),
    },
    job,
  );
}

async function applyProviderState(runtime: PostWorkerDeps, postId: string, remote: AlphaLocalPost, attempt: number, job: JobContext): Promise<void> {
  const now = runtime.clock.now();
  let followUp: Date | null = null;
  let orphan: string | null = null;
  let accountId = '';
  await changePost(runtime, postId, async (post, em) => {
    accountId = post.account.id;
    if (post.state === PostState.DELETED) {
      // Deleted while the provider was creating it: remove what was created.
      orphan = remote.name ?? null;
      post.providerName = remote.name ?? post.providerName;
      return false;
    }
    // Its deletion is under way (asked while this job read the provider): the post is the delete job's now, which
    // ends it DELETED; a state read before it would undo the deletion.
    if (post.pendingAction === 'delete') return false;
    const state = stateFromProvider(remote, post, now);
    const changed = state !== post.state || post.providerName !== (remote.name ?? null);
    post.state = state;
    post.providerName = remote.name ?? post.providerName;
    post.searchUrl = remote.searchUrl ?? post.searchUrl;
    post.pendingAction = null;
    if (state === PostState.LIVE) post.publishedTime ??= now;
    if (state === PostState.PROCESSING || state === PostState.SCHEDULED) {
      followUp = state === PostState.SCHEDULED && post.scheduledTime ? post.scheduledTime : new Date(now.getTime() + checkDelayMs(attempt));
      await runtime.jobs.enqueue(em, postCheckQueue, { postId, attempt: attempt + 1 }, { startAfter: followUp });
    }
    return changed;
  });
  if (orphan) {
    // The post is DELETED either way; a provider copy that could not be removed is worth an operator's look.
    await runtime.alpha.deleteLocalPost(orphan, await callOptionsOf(runtime, accountId, job)).catch((error: unknown) => {
      job.log.warn({ err: error, providerName: orphan }, 'could not delete the provider copy of a post deleted while it was published');
    });
  }
}

export async function publishPost(runtime: PostWorkerDeps, readPost: ReadPost, payload: JobPayload<typeof postPublishQueue>, job: JobContext): Promise<void> {
  const read = await readPost(payload.postId, job.running());
  // Already handled (a retried or duplicated job), or deleted before it was sent: nothing to do.
  if (!read || read.post.state !== PostState.SENDING || read.post.pendingAction !== 'publish') return;
  const { post } = read;
  const remote = await runtime.alpha.createLocalPost({
    ...providerIds(read.alphaLocationName!),
    post: alphaLocalPostOf(post.params),
    requestId: post.id,
  }, await callOptionsOf(runtime, post.account.id, job));
  if (await endAtOnce(runtime, post, remote, { state: PostState.SENDING, pendingAction: 'publish' }, job)) return;
  await applyProviderState(runtime, post.id, remote, 0, job);
}

export async function checkPost(runtime: PostWorkerDeps, readPost: ReadPost, payload: JobPayload<typeof postCheckQueue>, job: JobContext): Promise<void> {
  const post = (await readPost(payload.postId, job.running()))?.post;
  if (!post || !post.providerName || (post.state !== PostState.PROCESSING && post.state !== PostState.SCHEDULED)) return;
  let remote: AlphaLocalPost;
  try {
    remote = await runtime.alpha.getLocalPost(post.providerName, await callOptionsOf(runtime, post.account.id, job));
  } catch (error) {
    // Deleted at the provider by its deletion, asked after this check read the post: nothing is left to check.
    if (error instanceof AlphaProviderError && error.status === 404 && (await deletionAsked(readPost, post.id))) return;
    throw error;
  }
  // A post under its provider's review has no pending action (its deletion would have one).
  if (post.pendingAction === null && (await endAtOnce(runtime, post, remote, { state: post.state, pendingAction: null }, job))) return;
  await applyProviderState(runtime, post.id, remote, payload.attempt, job);
}

/** Whether the post is deleted, or its deletion under way (read afresh, nothing written along). */
async function deletionAsked(readPost: ReadPost, postId: string): Promise<boolean> {
  const current = (await readPost(postId, []))?.post;
  return !current || current.state === PostState.DELETED || current.pendingAction === 'delete';
}

export async function deletePostAtProvider(
  runtime: { database: Database; alpha: AlphaClient } & PostEventDeps & AlphaTokenDeps,
  readPost: ReadPost,
  payload: JobPayload<typeof postDeleteQueue>,
  job: JobContext,
): Promise<void> {
  const post = (await readPost(payload.postId, job.running()))?.post;
  if (!post || post.pendingAction !== 'delete' || !post.providerName) return;
  try {
    await runtime.alpha.deleteLocalPost(post.providerName, await callOptionsOf(runtime, post.account.id, job));
  } catch (error) {
    // Already gone at the provider is what we wanted.
    if (!(error instanceof AlphaProviderError && error.status === 404)) throw error;
  }
  if (await transitionAtOnce(runtime, post, { pendingAction: 'delete' }, { state: PostState.DELETED, pendingAction: null }, job)) return;
  await changePost(runtime, post.id, (current) => {
    if (current.pendingAction !== 'delete') return false;
    current.state = PostState.DELETED;
    current.pendingAction = null;
    return true;
  });
}

/**
 * Publishes a process runs at once. A publish waits on the provider and the pool most of its time: 32 keep the process
 * busy; 16 left it idle half the time under a backlog (docs/benchmarks.md, "Sixth slice").
 */
export const PUBLISHES_AT_ONCE = 32;

export function postWorkers(runtime: PostWorkerDeps): AnyWorker[] {
  const readPost: ReadPost = batchedReadWith((postIds, along) => readPostsForJobs(runtime.database.orm.em, postIds, along));
  return [
    defineWorker({
      queue: postPublishQueue,
      run: (payload, job) => publishPost(runtime, readPost, payload, job),
      marksRunning: true,
      batchSize: PUBLISHES_AT_ONCE,
      recordFailure: postFailureRecorder(runtime, (post) => post.state === PostState.SENDING && post.pendingAction === 'publish'),
    }),
    defineWorker({
      queue: postCheckQueue,
      run: (payload, job) => checkPost(runtime, readPost, payload, job),
      marksRunning: true,
      recordFailure: postFailureRecorder(runtime, (post) => post.state === PostState.PROCESSING || post.state === PostState.SCHEDULED),
    }),
    defineWorker({
      queue: postDeleteQueue,
      run: (payload, job) => deletePostAtProvider(runtime, readPost, payload, job),
      marksRunning: true,
      recordFailure: postFailureRecorder(runtime, (post) => post.pendingAction === 'delete'),
    }),
  ];
}

/**
 * A post whose publish ran out of retries, made ready to publish again (a retry from the async-work view): ERROR
 * and never published -> SENDING, in the caller's transaction. False when the post has moved on (deleted,
 * published meanwhile): nothing to retry.
 */
export async function reopenPublish(tx: EntityManager, runtime: PostEventDeps, { postId }: { postId: string }): Promise<boolean> {
  const post = await lockRow(tx, Post, { id: postId });
  if (!post || post.state !== PostState.ERROR || post.providerName !== null) return false;
  post.state = PostState.SENDING;
  post.pendingAction = 'publish';
  post.lastError = null;
  await tx.flush();
  announcePostChange(tx, runtime, post, PostState.ERROR);
  return true;
}
