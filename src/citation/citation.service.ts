import { recordEvent } from '../activity/record-event';
import { requirePrincipal } from '../access/guards';
import { resolveAccountScope } from '../account/account.access';
import { DomainError } from '../errors/domain-error';
import { announceOnCommit } from '../events/announce-on-commit';
import { statementsIn } from '../db/statements';
import { recordDone } from '../jobs/work-ledger';
import { countRequest, withCountedRequest, type Limited, type LimitDeps } from '../limits/request-limits';
import { findLocationOfAccount } from '../location/location.service';
import { Location } from '../location/location.entity';
import { CitationsStatus } from '../location/location.enums';
import { locationCitationsDisabled } from '../location/location.events';
import type { RequestScope } from '../request-scope';
import { citationsStatusOf, disableActiveCitations } from './citation.sql';
import type { Clock } from '../shared/clock';
import type { EventBus } from '../events/event-bus';

export type CitationServiceDeps = { clock: Clock; events: EventBus } & LimitDeps;

/** The work a disabling is recorded as, done within its request. */
export const CITATIONS_DISABLE = 'CITATIONS_DISABLE';

export interface CitationsDisabled {
  message: string;
  locationId: string;
  removed: boolean;
}

/**
 * Disables the citations of a location (docs/locations.md, "Citations"). The citations are ours to syndicate, so
 * disabling them is stopping: one conditional statement moves ACTIVE to DISABLED, so of concurrent requests exactly
 * one proceeds, and no crash can leave a location half-way.
 */
export async function disableCitations(scope: RequestScope<CitationServiceDeps>, args: { accountId?: string | null; locationId: string }): Promise<Limited<CitationsDisabled>> {
  const principal = requirePrincipal(scope);
  if (!principal.flags.citationsApi) {
    throw new DomainError('CITATIONS_API_DISABLED', 'Citations API access is not enabled for this organization');
  }
  const accountId = await resolveAccountScope(scope, args.accountId);
  const location = await findLocationOfAccount(scope.em, accountId, args.locationId);
  const counted = await countRequest(scope, 'citations', { accountId });
  const result = await withCountedRequest(counted, () => scope.em.transactional(async (tx) => {
    if (!(await disableActiveCitations(tx, location.id, scope.runtime.clock.now()))) {
      const current = await citationsStatusOf(tx, location.id);
      if (current === null) throw DomainError.notFound('Location');
      if (current === CitationsStatus.DISABLING) {
        throw new DomainError('IN_PROGRESS', 'A citations request for this location is in progress');
      }
      throw new DomainError('NOT_ACTIVE', `Citations can be disabled only when active (they are ${current})`);
    }
    // The location as the statement left it, for the activity log (its record is the committed row).
    recordEvent(tx, scope.runtime, locationCitationsDisabled, await tx.findOneOrFail(Location, location.id, { refresh: true }));
    // Work done in the request: it shows in the async-work view as done (docs/async-work.md).
    const work = await recordDone(statementsIn(tx), { kind: CITATIONS_DISABLE, organizationId: principal.organizationId, accountId, subjectId: location.id });
    announceOnCommit(tx, scope.runtime.events, 'async-work.updated', () => work);
    return { message: 'Citations disabled', locationId: location.id, removed: true };
  }));
  return { result, rateLimit: counted.state };
}
