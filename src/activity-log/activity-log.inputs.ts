import { ArgsType, Field, ID } from 'type-graphql';
import { ArgumentRules, list } from '../graphql/argument-rules';
import { withPageArgs } from '../graphql/page';
import { withConnectionArgs } from '../graphql/relay-connection';
import { EventRecordTypeEnum, EventTypeEnum, type EventRecordTypeName, type EventTypeName } from '../activity/activity.enums';
import { EVENT_IDS_PER_READ } from '../activity/event-presentation';

/** The filters of the activity log, the same for its cursor list and its page-numbered twin (GET /events). */
@ArgsType()
@ArgumentRules({ ids: list(undefined, { max: EVENT_IDS_PER_READ }, 'events') })
export class EventFilterArgs {
  @Field(() => [ID], { nullable: true, description: `Only these events (at most ${EVENT_IDS_PER_READ}); ids of no event of the caller’s match nothing.` })
  ids?: string[] | null;

  @Field(() => ID, { nullable: true, description: 'Only this account’s events. An account token sees only its own account’s anyway.' })
  accountId?: string | null;

  @Field(() => EventTypeEnum.type, { nullable: true })
  type?: EventTypeName | null;

  @Field(() => EventRecordTypeEnum.type, { nullable: true })
  recordType?: EventRecordTypeName | null;

  @Field(() => ID, { nullable: true, description: 'Only the events of this record (its id).' })
  recordId?: string | null;

  @Field(() => Date, { nullable: true, description: 'Only events at or after this time.' })
  occurredAfter?: Date | null;

  @Field(() => Date, { nullable: true, description: 'Only events before this time.' })
  occurredBefore?: Date | null;
}

@ArgsType()
export class EventsConnectionArgs extends withConnectionArgs(EventFilterArgs) {}

@ArgsType()
export class EventsPageArgs extends withPageArgs(EventFilterArgs, { default: 20, max: 100 }) {}
