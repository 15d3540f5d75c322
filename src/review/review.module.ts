import { defineWorkType } from '../async-work/work-type.resolver';
import { defineWorkKind } from '../async-work/work-kinds';
import { defineModule } from '../resource-module';
import { Review } from './review.entity';
import { replyStateChanged, reviewRecordType } from './review.events';
import { replyCheckQueue, replySendQueue } from './review.queues';
import { ReviewResolver } from './review.resolver';
import { reviewWorkers } from './review.worker';

const reviewWork = defineWorkType({ name: 'ReviewWork', description: "A review's reply: sending it, following its moderation.", field: 'review', record: Review });

export const reviewModule = defineModule({
  name: 'review',
  entities: [Review],
  resolvers: [ReviewResolver],
  queues: [replySendQueue, replyCheckQueue],
  // A reply that failed is settled by sending a new one.
  workKinds: [defineWorkKind({ name: 'REVIEW_REPLY_SEND', type: reviewWork }), defineWorkKind({ name: 'REVIEW_REPLY_CHECK', type: reviewWork })],
  recordTypes: [reviewRecordType],
  eventTypes: [replyStateChanged],
  workers: reviewWorkers,
});
