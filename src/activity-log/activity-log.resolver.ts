import { Args, createUnionType, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import { ActivityEvent } from '../activity/activity-event.entity';
import { allRecordTypes, recordTypeNamed } from '../activity/activity.enums';
import type { Context } from '../graphql/context';
import { PageType, type Page } from '../graphql/page';
import { ConnectionType, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { codecOf } from '../db/entity-codec';
import { EventsConnectionArgs, EventsPageArgs } from './activity-log.inputs';
import { listEventSlice, listEventsPage } from './activity-log.service';

/** The record types' entities, which are also their GraphQL object types. */
const recordEntities = () => allRecordTypes().map((type) => type.entity as new () => object);

export const EventRecord = createUnionType({
  name: 'EventRecord',
  description: 'The record an event is about, as that change committed it.',
  types: recordEntities,
  // Decoded snapshots are instances of their entity's class (src/db/entity-codec.ts).
  resolveType: (value) => recordEntities().find((type) => value instanceof type)?.name,
});

export const EventPage = PageType(ActivityEvent, 'EventPage', 'events');
export const EventConnection = ConnectionType(ActivityEvent, 'Event');

/**
 * Each event's record, decoded once per read: REST's operation selects `record` once per kind of record, under an
 * alias each (src/rest/operations/events.graphql), and every webhook body is such an item.
 */
const decodedRecords = new WeakMap<ActivityEvent, object>();

@Resolver(() => ActivityEvent)
export class ActivityLogResolver {
  @Query(() => EventConnection, { description: 'The activity log: state changes of the organization’s records, newest first (docs/activity-log.md).' })
  async events(@Args() args: EventsConnectionArgs, @Ctx() ctx: Context): Promise<Connection<ActivityEvent>> {
    return toConnection(await listEventSlice(ctx, args, sliceRequestOf(args)), args.after);
  }

  @Query(() => EventPage, { description: 'The activity log by page number, newest first (the GET /events list).' })
  eventsPage(@Args() args: EventsPageArgs, @Ctx() ctx: Context): Promise<Page<'events', ActivityEvent>> {
    return listEventsPage(ctx, args);
  }

  /**
   * The record as the change committed it, decoded from the event's snapshot (the entity's own fields, by its ORM
   * metadata): each surface shows it in its own names, REST as its documented record (docs/activity-log.md).
   */
  @FieldResolver(() => EventRecord)
  record(@Root() event: ActivityEvent, @Ctx() ctx: Context): object {
    let record = decodedRecords.get(event);
    if (!record) {
      const recordType = recordTypeNamed(event.recordType);
      if (!recordType) throw new Error(`no module declares the record type ${event.recordType}`);
      record = codecOf<object>(ctx.runtime.database.orm.getMetadata(), recordType.entity).decode(event.record);
      decodedRecords.set(event, record);
    }
    return record;
  }
}
