import type { FilterQuery } from '@mikro-orm/core';
import { ActivityEvent } from '../activity/activity-event.entity';
import { retainedSince, type RetentionDeps } from '../activity/event-retention';
import { requirePrincipal } from '../access/guards';
import { accountsWithinReach } from '../access/reach';
import type { RequestScope } from '../request-scope';
import { findPlainAndCount } from '../db/prepared-reads';
import { isId, NO_MATCH_ID } from '../shared/ids';
import type { Page } from '../shared/page';
import { sliceOf, type Slice, type SliceRequest } from '../shared/slice';

export type EventLogDeps = RetentionDeps;

export interface EventFilter {
  ids?: readonly string[] | null;
  accountId?: string | null;
  type?: ActivityEvent['type'] | null;
  recordType?: ActivityEvent['recordType'] | null;
  recordId?: string | null;
  occurredAfter?: Date | null;
  occurredBefore?: Date | null;
}

/**
 * The events a request may see that match its filters: its organization's, only its account's for an account
 * token (src/access/reach.ts), and only those within the retention (a sweep deletes older ones later).
 */
function whereOf(scope: RequestScope<EventLogDeps>, filter: EventFilter): FilterQuery<ActivityEvent> {
  const reach = accountsWithinReach(requirePrincipal(scope));
  const where: FilterQuery<ActivityEvent> & Record<string, unknown> = { organizationId: reach.organization };
  // An id that is not one matches nothing (rather than failing the query's uuid cast).
  const id = (value: string) => (isId(value) ? value.toLowerCase() : NO_MATCH_ID);
  if (reach.id !== undefined) where.accountId = filter.accountId && id(filter.accountId) !== reach.id ? NO_MATCH_ID : reach.id;
  else if (filter.accountId) where.accountId = id(filter.accountId);
  if (filter.ids) where.id = { $in: filter.ids.map(id) };
  if (filter.type) where.type = filter.type;
  if (filter.recordType) where.recordType = filter.recordType;
  if (filter.recordId) where.recordId = id(filter.recordId);
  const since = retainedSince(scope.runtime);
  const after = filter.occurredAfter && filter.occurredAfter > since ? filter.occurredAfter : since;
  where.occurredAt = filter.occurredBefore ? { $gte: after, $lt: filter.occurredBefore } : { $gte: after };
  return where;
}

/** The activity log, newest first, a slice at a time (GraphQL `events`). */
export async function listEventSlice(scope: RequestScope<EventLogDeps>, filter: EventFilter, slice: SliceRequest): Promise<Slice<ActivityEvent>> {
  const where = whereOf(scope, filter);
  const [rows, totalCount] = await Promise.all([
    scope.em.find(ActivityEvent, slice.afterId ? { $and: [where, { id: { $lt: slice.afterId } }] } : where, {
      orderBy: { id: 'desc' },
      limit: slice.first + 1,
      disableIdentityMap: true,
    }),
    scope.em.count(ActivityEvent, where),
  ]);
  return sliceOf(rows, slice.first, totalCount);
}

/** The activity log, newest first, by page number (GET /events). */
export async function listEventsPage(
  scope: RequestScope<EventLogDeps>,
  args: EventFilter & { page: number; perPage: number },
): Promise<Page<'events', ActivityEvent>> {
  // Rows and count in one statement: counted apart, an event recorded between the two gave a page whose found
  // disagreed with its rows.
  const [events, found] = await findPlainAndCount(scope.em, ActivityEvent, whereOf(scope, args), {
    orderBy: { id: 'desc' },
    limit: args.perPage,
    offset: (args.page - 1) * args.perPage,
  });
  return { found, page: args.page, perPage: args.perPage, events };
}
