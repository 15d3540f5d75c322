import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { accountAccessToken } from '../account/alpha-tokens';
import type { JobContext } from '../jobs/job-engine';
import type { AlphaCallOptions } from '../providers/alpha/alpha.client';
import type { QueuePayloads } from '../jobs/queues';
import { AlphaProviderError } from '../providers/alpha/alpha.errors';
import type { AlphaLocalPost } from '../providers/alpha/alpha.types';
import type { Runtime } from '../runtime';
import { Post, type PostLastError } from './post.entity';
import { PostState } from './post.enums';
import { announcePostChange } from './post.events';

/** How long to wait before asking the provider again about a post under review: 1, 2, 4 … 60 s. */
export function checkDelayMs(attempt: number): number {
  return Math.min(60, 2 ** attempt) * 1000;
}

function lastErrorOf(error: AlphaProviderError, now: Date): PostLastError {
  return { status: error.status, reason: error.reason, message: error.message, details: error.details, at: now.toISOString() };
}

/** The provider call options of a post's job: its stop signal, and its account's access token. */
async function callOptionsOf(runtime: Runtime, accountId: string, job: JobContext): Promise<AlphaCallOptions> {
  return { signal: job.signal, accessToken: await accountAccessToken(runtime, accountId) };
}

/** `accounts/<a>/locations/<l>` -> the provider's account and location ids. */
function providerIds(alphaLocationName: string): { accountId: string; locationId: string } {
  const match = /^accounts\/([^/]+)\/locations\/([^/]+)$/.exec(alphaLocationName);
  if (!match) throw new Error(`Malformed alpha location name: ${alphaLocationName}`);
  return { accountId: match[1]!, locationId: match[2]! };
}

/**
 * Runs `change` on the post under a row lock and commits (the ORM counts the version, src/db/orm.ts stamps the
 * update time); announces the change (after commit) when `change` returned true. Returns the post as committed.
 */
async function changePost(
  runtime: Runtime,
  postId: string,
  change: (post: Post, em: EntityManager) => Promise<boolean> | boolean,
): Promise<Post | null> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const result = await em.transactional(async (tx) => {
    const post = await tx.findOne(Post, postId, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!post) return null;
    const changed = await change(post, tx);
    return { post, changed };
  });
  if (result?.changed) await announcePostChange(runtime, result.post);
  return result?.post ?? null;
}

/**
 * A provider failure: recorded as last_error either way; retryable ones are thrown again so the job engine
 * retries with backoff, until the last attempt, which (like a non-retryable error) ends the post in ERROR.
 */
async function recordProviderFailure(runtime: Runtime, postId: string, error: unknown, job: JobContext): Promise<void> {
  // Interrupted by a stop: not the provider's failure, so the post keeps its state and the job is retried.
  if (!(error instanceof AlphaProviderError) || job.signal.aborted) throw error;
  const final = !error.retryable || job.isLastAttempt;
  await changePost(runtime, postId, (post) => {
    if (post.state === PostState.DELETED) return false;
    post.lastError = lastErrorOf(error, runtime.clock.now());
    if (final) {
      post.state = PostState.ERROR;
      post.pendingAction = null;
    }
    return true;
  });
  // A retryable error on the last attempt is thrown too, so pg-boss moves the job to the dead-letter queue.
  if (error.retryable) throw error;
}

/** The state a post takes from the provider's answer. */
function stateFromProvider(remote: AlphaLocalPost, post: Post, now: Date): PostState {
  if (remote.state === 'REJECTED') return PostState.REJECTED;
  if (remote.state === 'LIVE') return PostState.LIVE;
  return post.scheduledTime && post.scheduledTime > now ? PostState.SCHEDULED : PostState.PROCESSING;
}

async function applyProviderState(runtime: Runtime, postId: string, remote: AlphaLocalPost, attempt: number, job: JobContext): Promise<void> {
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
    const state = stateFromProvider(remote, post, now);
    const changed = state !== post.state || post.providerName !== (remote.name ?? null);
    post.state = state;
    post.providerName = remote.name ?? post.providerName;
    post.searchUrl = remote.searchUrl ?? post.searchUrl;
    post.pendingAction = null;
    if (state === PostState.LIVE) post.publishedTime ??= now;
    if (state === PostState.PROCESSING || state === PostState.SCHEDULED) {
      followUp = state === PostState.SCHEDULED && post.scheduledTime ? post.scheduledTime : new Date(now.getTime() + checkDelayMs(attempt));
      await runtime.jobs.enqueue(em, 'post-check', { postId, attempt: attempt + 1 }, { startAfter: followUp });
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

export async function publishPost(runtime: Runtime, payload: QueuePayloads['post-publish'], job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const post = await em.findOne(Post, payload.postId, { populate: ['location'] });
  // Already handled (a retried or duplicated job), or deleted before it was sent: nothing to do.
  if (!post || post.state !== PostState.SENDING || post.pendingAction !== 'publish') return;
  let remote: AlphaLocalPost;
  try {
    remote = await runtime.alpha.createLocalPost({
      ...providerIds(post.location.alphaLocationName!),
      post: post.params as AlphaLocalPost,
      requestId: post.id,
    }, await callOptionsOf(runtime, post.account.id, job));
  } catch (error) {
    return recordProviderFailure(runtime, post.id, error, job);
  }
  await applyProviderState(runtime, post.id, remote, 0, job);
}

export async function checkPost(runtime: Runtime, payload: QueuePayloads['post-check'], job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const post = await em.findOne(Post, payload.postId);
  if (!post || !post.providerName || (post.state !== PostState.PROCESSING && post.state !== PostState.SCHEDULED)) return;
  let remote: AlphaLocalPost;
  try {
    remote = await runtime.alpha.getLocalPost(post.providerName, await callOptionsOf(runtime, post.account.id, job));
  } catch (error) {
    return recordProviderFailure(runtime, post.id, error, job);
  }
  await applyProviderState(runtime, post.id, remote, payload.attempt, job);
}

export async function deletePostAtProvider(runtime: Runtime, payload: QueuePayloads['post-delete'], job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const post = await em.findOne(Post, payload.postId);
  if (!post || post.pendingAction !== 'delete' || !post.providerName) return;
  try {
    await runtime.alpha.deleteLocalPost(post.providerName, await callOptionsOf(runtime, post.account.id, job));
  } catch (error) {
    // Already gone at the provider is what we wanted.
    if (!(error instanceof AlphaProviderError && error.status === 404)) return recordProviderFailure(runtime, post.id, error, job);
  }
  await changePost(runtime, post.id, (current) => {
    if (current.pendingAction !== 'delete') return false;
    current.state = PostState.DELETED;
    current.pendingAction = null;
    return true;
  });
}

/** Registers the post workers of this process. */
export async function registerPostWorkers(runtime: Runtime): Promise<void> {
  await runtime.jobs.work('post-publish', (payload, job) => publishPost(runtime, payload, job));
  await runtime.jobs.work('post-check', (payload, job) => checkPost(runtime, payload, job));
  await runtime.jobs.work('post-delete', (payload, job) => deletePostAtProvider(runtime, payload, job));
}
