import { registerEnumType } from 'type-graphql';

/**
 * The kinds of event, one per state change the activity log keeps (docs/activity-log.md). The value is the
 * event's type as REST and the future webhooks write it (`post.state_changed`); GraphQL names it by its key.
 */
export enum EventType {
  POST_STATE_CHANGED = 'post.state_changed',
  LOCATION_UPDATE_JOB_STATUS_CHANGED = 'location_update_job.status_changed',
  LOCATION_CONNECTED = 'location.connected',
  LOCATION_REFUSED = 'location.refused',
  LOCATION_CITATIONS_DISABLED = 'location.citations_disabled',
  ACCOUNT_IMPORT_PROGRESSED = 'account.import_progressed',
  ACCOUNT_IMPORT_ENDED = 'account.import_ended',
  ACCOUNT_CONNECTED = 'account.connected',
  ACCOUNT_DISCONNECTED = 'account.disconnected',
  ACCOUNT_RECONNECTED = 'account.reconnected',
  COMPETITOR_SCAN_STATUS_CHANGED = 'competitor_scan.status_changed',
  BETA_BRAND_SYNC_STATUS_CHANGED = 'beta_brand.sync_status_changed',
  REVIEW_REPLY_STATE_CHANGED = 'review.reply_state_changed',
}

registerEnumType(EventType, { name: 'EventType', description: 'What changed; the value is the type REST writes (post.state_changed).' });

/** The kind of record an event carries, by its entity: the `record_type` of REST and the `recordType` filter. */
export enum EventRecordType {
  POST = 'post',
  LOCATION = 'location',
  LOCATION_UPDATE_JOB = 'location_update_job',
  ACCOUNT = 'account',
  REVIEW = 'review',
  COMPETITOR_SCAN = 'competitor_scan',
  BETA_BRAND = 'beta_brand',
}

registerEnumType(EventRecordType, { name: 'EventRecordType' });

/** The record type of each event type: one place, read by the recorder (which checks it) and the docs. */
export const RECORD_TYPE_OF: Record<EventType, EventRecordType> = {
  [EventType.POST_STATE_CHANGED]: EventRecordType.POST,
  [EventType.LOCATION_UPDATE_JOB_STATUS_CHANGED]: EventRecordType.LOCATION_UPDATE_JOB,
  [EventType.LOCATION_CONNECTED]: EventRecordType.LOCATION,
  [EventType.LOCATION_REFUSED]: EventRecordType.LOCATION,
  [EventType.LOCATION_CITATIONS_DISABLED]: EventRecordType.LOCATION,
  [EventType.ACCOUNT_IMPORT_PROGRESSED]: EventRecordType.ACCOUNT,
  [EventType.ACCOUNT_IMPORT_ENDED]: EventRecordType.ACCOUNT,
  [EventType.ACCOUNT_CONNECTED]: EventRecordType.ACCOUNT,
  [EventType.ACCOUNT_DISCONNECTED]: EventRecordType.ACCOUNT,
  [EventType.ACCOUNT_RECONNECTED]: EventRecordType.ACCOUNT,
  [EventType.COMPETITOR_SCAN_STATUS_CHANGED]: EventRecordType.COMPETITOR_SCAN,
  [EventType.BETA_BRAND_SYNC_STATUS_CHANGED]: EventRecordType.BETA_BRAND,
  [EventType.REVIEW_REPLY_STATE_CHANGED]: EventRecordType.REVIEW,
};
