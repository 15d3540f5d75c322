import { Args, createUnionType, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import { Account } from '../account/account.entity';
import { ActivityEvent } from '../activity/activity-event.entity';
import { EventRecordType } from '../activity/activity.enums';
import { BetaBrand } from '../beta-brand/beta-brand.entity';
import { CompetitorScan } from '../competitor-scan/competitor-scan.entity';
import type { Context } from '../graphql/context';
import { PageType, type Page } from '../graphql/page';
import { ConnectionType, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { LocationUpdateJob } from '../location/location-update-job.entity';
import { Location } from '../location/location.entity';
import { Post } from '../post/post.entity';
import { Review } from '../review/review.entity';
import { codecOf } from '../shared/entity-snapshot';
import { EventsConnectionArgs, EventsPageArgs } from './activity-log.inputs';
import { listEventSlice, listEventsPage } from './activity-log.service';

/** The entity of each record type: what an event's snapshot decodes to, and the GraphQL type it shows as. */
const ENTITY_OF = {
  [EventRecordType.POST]: Post,
  [EventRecordType.LOCATION]: Location,
  [EventRecordType.LOCATION_UPDATE_JOB]: LocationUpdateJob,
  [EventRecordType.ACCOUNT]: Account,
  [EventRecordType.REVIEW]: Review,
  [EventRecordType.COMPETITOR_SCAN]: CompetitorScan,
  [EventRecordType.BETA_BRAND]: BetaBrand,
} as const;

const RECORD_TYPES = Object.values(ENTITY_OF);

export const EventRecord = createUnionType({
  name: 'EventRecord',
  description: 'The record an event is about, as that change committed it.',
  types: () => [Post, Location, LocationUpdateJob, Account, Review, CompetitorScan, BetaBrand] as const,
  // Decoded snapshots are instances of their entity's class (src/shared/entity-snapshot.ts).
  resolveType: (value) => RECORD_TYPES.find((type) => value instanceof type)?.name,
});

export const EventPage = PageType(ActivityEvent, 'EventPage', 'events');
export const EventConnection = ConnectionType(ActivityEvent, 'Event');

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
    const entity: new () => object = ENTITY_OF[event.recordType];
    const record = codecOf<object>(ctx.runtime.database.orm.getMetadata(), entity).decode(event.record);
    return record;
  }
}
