import { isWithinReach } from '../access/reach';
import { eventSentAt } from '../events/event-codec';
import type { Topic } from '../events/topics';
import type { Context } from './context';

/** What a record's change event carries to be filtered on: the record's id and whose it is. */
interface RecordChangeEvent {
  id: string;
  organizationId: string;
  accountId: string | null;
  locationId?: string;
}

/**
 * The `filter` of a subscription to a record's changes: an event reaches a subscriber within its reach (its
 * organization, and its account for account tokens), of the record the argument `idArg` names and of the location
 * `locationId` names, when given, and that `matches` the subscription's other arguments. Where metrics are on, each
 * event's delay from its publishing to this filter (the step before its result is executed and sent to the group's
 * sockets) is observed, by topic.
 */
export function recordChangeFilter<Event extends RecordChangeEvent, Args extends object = Record<string, unknown>>(
  topic: Topic,
  options: { idArg?: keyof Args & string; matches?: (payload: Event, args: Args) => boolean } = {},
) {
  return ({ payload, args, context }: { payload: Event; args: Args & { locationId?: string | null }; context: Context }): boolean => {
    const sentAt = eventSentAt(payload);
    if (sentAt !== undefined) context.runtime.metrics?.fanoutDelay.observe({ topic }, Math.max(0, Date.now() - sentAt) / 1000);
    if (!isWithinReach(context.principal, payload)) return false;
    const id = options.idArg ? (args[options.idArg] as unknown) : undefined;
    if (id && payload.id !== id) return false;
    if (args.locationId && payload.locationId !== args.locationId) return false;
    return options.matches?.(payload, args) ?? true;
  };
}
