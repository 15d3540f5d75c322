import { Arg, Args, createUnionType, Ctx, Field, FieldResolver, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { ActivityEvent } from '../activity/activity-event.entity';
import { allRecordTypes, EventTypeEnum, recordTypeNamed, type EventTypeName } from '../activity/activity.enums';
import { requireOrganizationToken } from '../access/guards';
import { DomainError } from '../errors/domain-error';
import type { Context } from '../graphql/context';
import { PageType, type Page } from '../graphql/page';
import { ConnectionType, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { codecOf } from '../db/entity-codec';
import { EventsConnectionArgs, EventsPageArgs } from './activity-log.inputs';
import { listEventSlice, listEventsPage, triggerTestEvent } from './activity-log.service';
import { openEventStream, type EventStreamRoot } from './activity-log.stream';

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

@ObjectType({ description: 'A message of `eventStream`: the first has no event and says the stream listens; each later one carries an event.' })
export class EventStreamMessage {
  @Field(() => ActivityEvent, { nullable: true, description: 'Null in the first message, sent once the stream listens: every event committed after it is sent.' })
  event!: ActivityEvent | null;
}

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

  @Mutation(() => ActivityEvent, {
    description:
      'Records a test event of this type about the organization’s record of its kind with the latest event, as that record is now: listed, sent to webhook endpoints and event streams as any event (docs/webhooks.md, “Developing locally”). Organization tokens only.',
  })
  triggerTestEvent(@Arg('type', () => EventTypeEnum.type) type: EventTypeName, @Ctx() ctx: Context): Promise<ActivityEvent> {
    return triggerTestEvent(ctx, type);
  }

  @Subscription(() => EventStreamMessage, {
    description:
      'The organization’s activity events as they are committed (of these types, when given): what `npm run cli -- webhooks listen` forwards. Organization tokens only. The first message has no event: it says the stream listens.',
    subscribe: ({ args, context }) => openEventStream(context as Context, (args as { types?: EventTypeName[] | null }).types),
  })
  async eventStream(
    @Root() message: EventStreamRoot,
    @Arg('types', () => [EventTypeEnum.type], { nullable: true }) _types: EventTypeName[] | null,
    @Ctx() ctx: Context,
  ): Promise<EventStreamMessage> {
    if (message.eventId === null) return { event: null };
    const { organizationId } = requireOrganizationToken(ctx);
    const event = await ctx.em.findOne(ActivityEvent, { id: message.eventId, organizationId }, { disableIdentityMap: true });
    // Committed a moment ago: gone only if a retention sweep took it meanwhile.
    if (!event) throw DomainError.notFound('Event');
    return { event };
  }

  @FieldResolver(() => String, {
    description:
      'The event as the body of its webhook deliveries: its `GET /events` item, as JSON text, to the byte (docs/webhooks.md, “Bodies”). Organization tokens only.',
  })
  async webhookBody(@Root() event: ActivityEvent, @Ctx() ctx: Context): Promise<string> {
    requireOrganizationToken(ctx);
    const body = (await ctx.runtime.presentEvents(ctx.em, event.organizationId, [event.id])).get(event.id);
    if (body === undefined) throw DomainError.notFound('Event');
    return body;
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
