import { isWithinReach } from '../access/reach';
import type { Context } from './context';

/** What a record's change event carries to be filtered on: the record's id and whose it is. */
interface RecordChangeEvent {
  id: string;
  organizationId: string;
  accountId: string;
  locationId: string;
}

/**
 * The `filter` of a subscription to a record's changes: an event reaches a subscriber within its reach (its
 * organization, and its account for account tokens), of the record the argument `idArg` names and of the location
 * `locationId` names, when given.
 */
export function recordChangeFilter<IdArg extends string>(idArg: IdArg) {
  return ({ payload, args, context }: { payload: RecordChangeEvent; args: Partial<Record<IdArg | 'locationId', string | null>>; context: Context }): boolean => {
    if (!isWithinReach(context.principal, payload)) return false;
    const id = args[idArg];
    if (id && payload.id !== id) return false;
    if (args.locationId && payload.locationId !== args.locationId) return false;
    return true;
  };
}
