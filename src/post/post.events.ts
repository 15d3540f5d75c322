import type { EntityManager } from '@mikro-orm/postgresql';
import { codecOf, type SnapshotCodec } from '../shared/entity-snapshot';
import type { TopicPayloads } from '../events/topics';
import type { Runtime } from '../runtime';
import { Post } from './post.entity';

/** PostgreSQL NOTIFY carries at most 8000 bytes; larger posts travel as ids and are loaded by the receiver. */
const MAX_SNAPSHOT_BYTES = 7000;

/** The post's snapshot follows the entity's own field list (src/shared/entity-snapshot.ts). */
function postCodec(runtime: Runtime): SnapshotCodec<Post> {
  return codecOf(runtime.database.orm.getMetadata(), Post);
}

/**
 * Tells every subscriber, in every process, that a post changed; call after the change committed. The event
 * carries the post as it was at this change, so each subscriber sees every transition, in order, even when
 * the next one has already happened.
 */
export async function announcePostChange(runtime: Runtime, post: Post): Promise<void> {
  const event: TopicPayloads['post.updated'] = {
    postId: post.id,
    organizationId: post.organization.id,
    accountId: post.account.id,
    locationId: post.location.id,
    version: post.version,
  };
  const snapshot = postCodec(runtime).encode(post);
  if (Buffer.byteLength(JSON.stringify(snapshot)) <= MAX_SNAPSHOT_BYTES) event.snapshot = snapshot;
  await runtime.events.publish('post.updated', event);
}

/** Loads for events without a snapshot, shared by the subscribers of one event in this process. */
const inFlight = new Map<string, Promise<Post>>();

/** The post of each event, built once however many subscribers it reaches (the event object is shared). */
const fromEvent = new WeakMap<TopicPayloads['post.updated'], Promise<Post>>();

export function loadPostForEvent(runtime: Runtime, event: TopicPayloads['post.updated']): Promise<Post> {
  if (event.snapshot) {
    let built = fromEvent.get(event);
    if (!built) fromEvent.set(event, (built = Promise.resolve(postCodec(runtime).decode(event.snapshot))));
    return built;
  }
  const key = `${event.postId}:${event.version}`;
  let load = inFlight.get(key);
  if (!load) {
    const em = runtime.database.orm.em.fork() as EntityManager;
    load = em.findOneOrFail(Post, event.postId);
    inFlight.set(key, load);
    const forget = () => setTimeout(() => inFlight.delete(key), 1000).unref();
    load.then(forget, forget);
  }
  return load;
}
