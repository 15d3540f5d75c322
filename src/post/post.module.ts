import { defineWorkType } from '../async-work/work-type.resolver';
import { defineWorkKind, retryWith } from '../async-work/work-kinds';
import { defineModule } from '../resource-module';
import { IdempotencyKey } from './idempotency-key.entity';
import { Post } from './post.entity';
import { postRecordType, postStateChanged } from './post.events';
import { postCheckQueue, postDeleteQueue, postPublishQueue } from './post.queues';
import { PostResolver } from './post.resolver';
import { postWorkers, reopenPublish } from './post.worker';

const postWork = defineWorkType({ name: 'PostWork', description: 'Work on a post: publishing, checking, deleting it.', field: 'post', record: Post });

export const postModule = defineModule({
  name: 'post',
  entities: [Post, IdempotencyKey],
  resolvers: [PostResolver],
  queues: [postPublishQueue, postCheckQueue, postDeleteQueue],
  workKinds: [
    // A publish that ran out of retries starts again from SENDING; checks and deletions are settled by acting on the post.
    defineWorkKind({ name: 'POST_PUBLISH', type: postWork, retry: retryWith(postPublishQueue, reopenPublish) }),
    defineWorkKind({ name: 'POST_CHECK', type: postWork }),
    defineWorkKind({ name: 'POST_DELETE', type: postWork }),
  ],
  recordTypes: [postRecordType],
  eventTypes: [postStateChanged],
  workers: postWorkers,
});
