import { LockMode, type EntityClass, type FilterQuery } from '@mikro-orm/core';
import { ActivityEvent } from '../activity/activity-event.entity';
import { eventTypeNamed } from '../activity/activity.enums';
import { retainedSince, type RetentionDeps } from '../activity/event-retention';
import { recordEvent, type EventRecordDeps } from '../activity/record-event';
import { requireOrganizationToken, requirePrincipal } from '../access/guards';
import { DomainError } from '../errors/domain-error';
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

/** A record an event may be about: of the organization, or of one of its accounts. */
interface OwnedRecord {
  id: string;
  organization?: { id: string };
  account?: { id: string; organization: { id: string } };
}

/**
 * A test event of `type` (docs/webhooks.md, "Developing locally"): a real event of the activity log about the
 * organization's newest record of that kind, carrying the record as it is now. So it is listed, sent to the webhook
 * endpoints wanting its type and to event streams exactly as any other; only the record did not change (its
 * `sequence` goes on). Recorded under the record's row lock, as every event of a record is, to keep their order.
 */
export async function triggerTestEvent(scope: RequestScope<EventLogDeps & EventRecordDeps>, typeName: string): Promise<ActivityEvent> {
  const { organizationId } = requireOrganizationToken(scope);
  const type = eventTypeNamed(typeName);
  if (!type) throw DomainError.badInput(`type must be an event type, not ${typeName}`);
  const entity = type.record.entity as EntityClass<OwnedRecord>;
  // Whose a record is, read from its relations: the organization's own, or its accounts'.
  const properties: Record<string, unknown> = scope.em.getMetadata().get(entity).properties;
  const owned: FilterQuery<OwnedRecord> = properties.organization ? { organization: organizationId } : { account: { organization: organizationId } };
  if (!properties.organization && !properties.account) throw new Error(`record type ${type.record.name} has neither an organization nor an account`);
  const newest = await scope.em.findOne(entity, owned, { orderBy: { id: 'desc' }, fields: ['id'], disableIdentityMap: true });
  if (!newest) {
    throw new DomainError('NOT_FOUND', `No ${type.record.name} of the organization to make a test ${type.name} event about: a test event repeats a record's current state, so make one first`);
  }
  const id = await scope.em.fork().transactional(async (tx) => {
    const record = await tx.findOneOrFail(entity, newest.id, { lockMode: LockMode.PESSIMISTIC_WRITE });
    return recordEvent(tx, scope.runtime, type, record);
  });
  return scope.em.findOneOrFail(ActivityEvent, id, { disableIdentityMap: true });
}
