import { RestEventsDocument } from '../../generated/graphql';
import { defineRoute, query, type RestRecord } from '../route';
import { brandRecord } from './beta.routes';
import { scanRecord } from './competitor-scan.routes';
import { locationRecord, updateJobRecord } from './location.routes';
import { organizationAccountRecord } from './organization.routes';
import { postRecord } from './post.routes';

/**
 * An event's record is written by the rules of the route that answers that record (names, verbatim parts, absent
 * fields, and the unit of its times): the rules are each route's own, merged, never restated here.
 */
const eventRecord = {
  times: 'epochMs',
  timesOf: { BetaBrand: brandRecord.times },
  names: { ...postRecord.names, ...locationRecord.names, ...updateJobRecord.names, ...scanRecord.names },
  verbatim: [...postRecord.verbatim, ...locationRecord.verbatim, ...scanRecord.verbatim],
  absentWhenNull: [...organizationAccountRecord.absentWhenNull],
  writesNulls: [...scanRecord.writesNulls],
} as const satisfies Omit<RestRecord, 'at'>;

/** GET /events: also what presents every webhook body (src/rest/event-presenter.ts). */
export const listEventsRoute = defineRoute({
  method: 'GET',
  path: '/events',
  operationId: 'listEvents',
  summary: 'The activity log: state changes of the organization’s records, newest first (an account token: its account’s only).',
  tag: 'Events',
  operation: RestEventsDocument,
  variables: {
    accountId: query('account_id', 'only this account’s events (an account token sees only its own account’s)'),
    type: query('type', 'only events of this type, e.g. post.state_changed'),
    recordType: query('record_type', 'only events about records of this type, e.g. post'),
    recordId: query('record_id', 'only the events of this record'),
    occurredAfter: query('occurred_after', 'only events at or after this time (ISO 8601)'),
    occurredBefore: query('occurred_before', 'only events before this time (ISO 8601)'),
    page: query('page', '1-based, default 1'),
    perPage: query('per_page', '1 to 100, default 20'),
  },
  successStatus: 200,
  payload: { ...eventRecord, at: 'eventsPage' },
});

export const eventRoutes = [listEventsRoute];
