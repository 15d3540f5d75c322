import type { EntityManager } from '@mikro-orm/postgresql';
import { defineEventType, defineRecordType } from '../activity/activity.enums';
import { eventsWrite, eventWrite, recordEvent } from '../activity/record-event';
import type { FollowingWrite } from '../db/change-statement';
import { announceOnCommit } from '../events/announce-on-commit';
import { ChangeNews } from '../events/change-news';
import type { TopicPayloads } from '../events/topics';
import { entityOfEvent, eventSnapshot } from '../events/entity-events';
import { Post } from './post.entity';
import type { PostState } from './post.enums';
import type { Clock } from '../shared/clock';
import type { Database } from '../db/orm';
import type { EventBus } from '../events/event-bus';

export const postRecordType = defineRecordType({ name: 'post', key: 'POST', entity: Post });

export const postStateChanged = defineEventType({ name: 'post.state_changed', key: 'POST_STATE_CHANGED', record: postRecordType });

export type PostEventDeps = { events: EventBus; database: Database; clock: Clock };

/**
 * Tells every subscriber, in every process, that a post changed, once the transaction of `em` commits (best
 * effort: a lost event never fails the change; src/events/announce-on-commit.ts). The event carries the post as
 * committed at this change, so each subscriber sees every transition, in order, even when the next one has
 * already happened. A change of its state (`stateBefore`: null for a new post) is also recorded in the activity log,
 * in the same transaction (src/activity/record-event.ts); a failure noted in last_error alone is not.
 */
export function announcePostChange(em: EntityManager, runtime: PostEventDeps, post: Post, stateBefore: PostState | null): void {
  if (post.state !== stateBefore) recordEvent(em, runtime, postStateChanged, post);
  announceOnCommit(em, runtime.events, 'post.updated', () => postUpdated(runtime, post));
}

function postUpdated(runtime: PostEventDeps, post: Post): TopicPayloads['post.updated'] {
  return {
    id: post.id,
    organizationId: post.organization.id,
    accountId: post.account.id,
    locationId: post.location.id,
    version: post.version,
    snapshot: eventSnapshot(runtime.database.orm, Post, post),
  };
}

/**
 * The same for a change made by one statement (src/db/change-statement.ts): its activity event as a write of that
 * statement (`after`: the post as the statement leaves it), and its news (`postChangeNews`), which the statement sends.
 */
export function postChangeWrites(runtime: PostEventDeps, after: Post, stateBefore: PostState | null): FollowingWrite[] {
  return after.state === stateBefore ? [] : [eventWrite(runtime.database.orm.getMetadata(), runtime, postStateChanged, after)];
}

/** The news of a change made by one statement: the post as the statement leaves it (`after`), first of its news. */
export function postChangeNews(runtime: PostEventDeps, after: Post): ChangeNews {
  return new ChangeNews(runtime.events).add('post.updated', postUpdated(runtime, after));
}

/** The same for new posts created together by one statement (a campaign's): their events, as one write of it. */
export function newPostsWrites(runtime: PostEventDeps, posts: readonly Post[]): FollowingWrite[] {
  return [eventsWrite(runtime.database.orm.getMetadata(), runtime, postStateChanged, posts)];
}

/** The news of new posts created together by one statement, each as `postChangeNews` tells one. */
export function newPostsNews(runtime: PostEventDeps, posts: readonly Post[]): ChangeNews {
  return posts.reduce((news, post) => news.add('post.updated', postUpdated(runtime, post)), new ChangeNews(runtime.events));
}

export function loadPostForEvent(runtime: { database: Database }, event: TopicPayloads['post.updated']): Promise<Post> {
  return entityOfEvent(runtime.database.orm, Post, event);
}
