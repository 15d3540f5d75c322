import { defineQueue, ownedRow } from '../jobs/queue';

/** Send a SENDING post to the alpha provider. */
export const postPublishQueue = defineQueue({
  name: 'post-publish',
  payload: { postId: 'string' },
  work: { kind: 'POST_PUBLISH', subject: (payload) => payload.postId, owner: ownedRow('post') },
  provider: 'alpha',
});

/** Ask the provider how a PROCESSING or SCHEDULED post is doing. */
export const postCheckQueue = defineQueue({
  name: 'post-check',
  payload: { postId: 'string', attempt: 'number' },
  work: { kind: 'POST_CHECK', subject: (payload) => payload.postId, owner: ownedRow('post') },
  provider: 'alpha',
});

/** Delete a post at the provider, then mark it DELETED. */
export const postDeleteQueue = defineQueue({
  name: 'post-delete',
  payload: { postId: 'string' },
  work: { kind: 'POST_DELETE', subject: (payload) => payload.postId, owner: ownedRow('post') },
  provider: 'alpha',
});
