import { ArgsType, Field, ID, InputType } from 'type-graphql';
import { SubscribedEventTypeEnum, type SubscribedEventTypeName } from '../activity/activity.enums';
import { ArgumentRules, list, text } from '../graphql/argument-rules';
import { withPageArgs } from '../graphql/page';
import { withConnectionArgs } from '../graphql/relay-connection';
import { WebhookDeliveryStatus } from './webhook.enums';
import { MAX_URL_CHARACTERS } from './webhook.rules';

/** A bound on the input (repeated types are folded into one): more than there are types. */
const MAX_EVENT_TYPES = 100;
// Messages name fields in their REST spelling, as the page rules do (per_page): one message for both transports.
const endpointRules = {
  url: text({ max: MAX_URL_CHARACTERS }),
  description: text({ max: 500 }),
  eventTypes: list(undefined, { min: 1, max: MAX_EVENT_TYPES }, 'event types'),
};

@InputType({ description: 'A new endpoint: an https URL and the event types sent to it.' })
@ArgumentRules(endpointRules)
export class CreateWebhookEndpointInput {
  @Field({ description: 'An absolute https URL, not of a loopback, private, link-local or metadata address.' })
  url!: string;

  @Field(() => [SubscribedEventTypeEnum.type], { description: 'The event types sent to it; ALL (`*` in REST): every type, present and future.' })
  eventTypes!: SubscribedEventTypeName[];

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field({ defaultValue: true })
  enabled: boolean = true;
}

@InputType({ description: 'What changes of an endpoint; enabling a disabled one clears why it was disabled.' })
@ArgumentRules(endpointRules)
export class UpdateWebhookEndpointInput {
  @Field(() => String, { nullable: true })
  url?: string | null;

  @Field(() => [SubscribedEventTypeEnum.type], { nullable: true, description: 'The event types sent to it; ALL (`*` in REST): every type, present and future.' })
  eventTypes?: SubscribedEventTypeName[] | null;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;
}

@ArgsType()
class DeliveryFilterArgs {
  @Field(() => ID)
  endpointId!: string;

  @Field(() => WebhookDeliveryStatus, { nullable: true })
  status?: WebhookDeliveryStatus | null;

  @Field(() => ID, { nullable: true, description: 'Only the deliveries of this event.' })
  eventId?: string | null;
}

@ArgsType()
export class WebhookDeliveriesArgs extends withConnectionArgs(DeliveryFilterArgs) {}

@ArgsType()
export class WebhookDeliveriesPageArgs extends withPageArgs(DeliveryFilterArgs, { default: 20, max: 100 }) {}

/** The endpoints by page number (GET /webhooks): no filters, oldest first. */
@ArgsType()
export class WebhookEndpointsPageArgs extends withPageArgs(class {}, { default: 20, max: 100 }) {}
