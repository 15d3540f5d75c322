import { defineEventType, defineRecordType } from '../activity/activity.enums';
import { Review } from './review.entity';

export const reviewRecordType = defineRecordType({ name: 'review', key: 'REVIEW', entity: Review });

export const replyStateChanged = defineEventType({ name: 'review.reply_state_changed', key: 'REVIEW_REPLY_STATE_CHANGED', record: reviewRecordType });
