import { recordEvent } from '../activity/record-event';
import type { ObjectQuery } from '@mikro-orm/core';
import { requirePrincipal } from '../access/guards';
import type { Principal } from '../access/principal';
import { resolveAccountScope } from '../account/account.access';
import { DomainError } from '../errors/domain-error';
import { countRequest, requireBelowOpenLimit, withCountedRequest, type Limited, type LimitDeps } from '../limits/request-limits';
import type { Location } from '../location/location.entity';
import { findLocationOfAccount } from '../location/location.service';
import { Organization } from '../organization/organization.entity';
import type { RequestScope } from '../request-scope';
import { lockUntilCommit } from '../db/advisory-lock';
import { findPlain } from '../db/prepared-reads';
import { isId, NO_MATCH_ID } from '../shared/ids';
import { sliceOf, type Slice, type SliceRequest } from '../shared/slice';
import { trimmedText } from '../shared/text';
import { CompetitorScan } from './competitor-scan.entity';
import { UNFINISHED_SCAN_STATUSES } from './competitor-scan.enums';
import { dotCount } from './scan.compute';
import { scanStatusChanged } from './competitor-scan.events';
import { scanQueue } from './competitor-scan.queues';
import type { Clock } from '../shared/clock';
import type { JobEngine } from '../jobs/job-engine';

export type ScanServiceDeps = { clock: Clock; jobs: JobEngine } & LimitDeps;

/** At most this many rings: 1 + 4·3·4 = 49 searches. */
export const MAX_RINGS = 3;
export const MAX_RADIUS_KM = 50;

/** Retry-After when the organization's running scans are at their limit: about how long a scan of 49 dots takes. */
const SCAN_RETRY_AFTER_SECONDS = 30;

export interface RunScanArgs {
  accountId?: string | null;
  locationId: string;
  text: string;
  radiusKm: number;
  rings: number;
}

/**
 * Starts a scan of a location (product-decisions §10; the grid and the limits: docs/beta-and-scans.md): queued at
 * once, run by a job that searches for `text` at each dot of the grid. The location must be known to the provider
 * (its place id) and placed on the map (its coordinates).
 */
export async function runCompetitorScan(scope: RequestScope<ScanServiceDeps>, args: RunScanArgs): Promise<Limited<CompetitorScan>> {
  const principal = requirePrincipal(scope);
  const accountId = await resolveAccountScope(scope, args.accountId);
  const text = trimmedText(args.text, 'text', { min: 1, max: 100 });
  if (!Number.isFinite(args.radiusKm) || args.radiusKm < 0.1 || args.radiusKm > MAX_RADIUS_KM) {
    throw DomainError.badInput(`radiusKm must be from 0.1 to ${MAX_RADIUS_KM}`);
  }
  if (!Number.isInteger(args.rings) || args.rings < 0 || args.rings > MAX_RINGS) throw DomainError.badInput(`rings must be 0 to ${MAX_RINGS}`);
  const location = await findLocationOfAccount(scope.em, accountId, args.locationId);
  if (location.latitude === null || location.longitude === null) throw DomainError.badInput('The location has no coordinates to scan around');
  if (!location.placeId) throw DomainError.badInput('The location has no place id yet: the alpha provider must know it first');
  const now = scope.runtime.clock.now();
  // Counted once the request is known to be valid; a refusal after counting gives the counts back.
  const starts = await countRequest(scope, 'scan-starts');
  const searches = await withCountedRequest(starts, () => countRequest(scope, 'scan-searches', { weight: dotCount(args.rings) }));
  const scan = await withCountedRequest(starts, () => withCountedRequest(searches, () => queueScan(scope, principal, location, { ...args, text }, now)));
  // The headers show the limit nearer to refusing.
  const nearer = searches.state.remaining / searches.state.limit < starts.state.remaining / starts.state.limit ? searches.state : starts.state;
  return { result: scan, rateLimit: nearer };
}

/**
 * The scan and its job, in one transaction, unless the organization already has SCANS_RUNNING_LIMIT scans queued
 * or running: counted under a per-organization lock held to the commit, so concurrent starts cannot all pass.
 */
async function queueScan(scope: RequestScope<ScanServiceDeps>, principal: Principal, location: Location, args: RunScanArgs, now: Date): Promise<CompetitorScan> {
  const { organizationId } = principal;
  return scope.em.transactional(async (em) => {
    await lockUntilCommit(em, `scans-running:${organizationId}`);
    const running = await em.count(CompetitorScan, { organization: organizationId, status: { $in: UNFINISHED_SCAN_STATUSES } });
    requireBelowOpenLimit(scope, 'scans-running', running, SCAN_RETRY_AFTER_SECONDS);
    const scan = em.create(CompetitorScan, {
      organization: em.getReference(Organization, organizationId),
      account: location.account,
      location,
      placeId: location.placeId!,
      text: args.text,
      radius: args.radiusKm,
      rings: args.rings,
      createdBy: principal.tokenId,
      origin: scope.source,
      center: { lat: location.latitude!, lng: location.longitude! },
      createdAt: now,
    });
    await em.flush();
    await scope.runtime.jobs.enqueue(em, scanQueue, { scanId: scan.id });
    recordEvent(em, scope.runtime, scanStatusChanged, scan);
    return scan;
  });
}

export interface ScanLookup {
  accountId?: string | null;
  scanId?: string | null;
  locationId?: string | null;
  placeId?: string | null;
}

/** The scan with `scanId`, or the latest of the account (for the location, or the place id, when given). 404 otherwise. */
export async function getCompetitorScan(scope: RequestScope<ScanServiceDeps>, lookup: ScanLookup): Promise<CompetitorScan> {
  const accountId = await resolveAccountScope(scope, lookup.accountId);
  const where: ObjectQuery<CompetitorScan> = { account: accountId };
  if (lookup.scanId) where.id = isId(lookup.scanId) ? lookup.scanId : NO_MATCH_ID;
  if (lookup.locationId) where.location = isId(lookup.locationId) ? lookup.locationId : NO_MATCH_ID;
  if (lookup.placeId) where.placeId = lookup.placeId;
  const [scan] = await findPlain(scope.em, CompetitorScan, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 1 });
  if (!scan) throw DomainError.notFound('Competitor scan');
  return scan;
}

/** Scans of the account (of one location, when given), newest first. */
export async function listCompetitorScans(scope: RequestScope<ScanServiceDeps>, filter: { accountId?: string | null; locationId?: string | null }, slice: SliceRequest): Promise<Slice<CompetitorScan>> {
  const accountId = await resolveAccountScope(scope, filter.accountId);
  const where: ObjectQuery<CompetitorScan> = { account: accountId };
  if (filter.locationId) where.location = isId(filter.locationId) ? filter.locationId : NO_MATCH_ID;
  const [rows, totalCount] = await Promise.all([
    findPlain(scope.em, CompetitorScan, slice.afterId ? { ...where, id: { $lt: slice.afterId } } : where, { orderBy: { id: 'desc' }, limit: slice.first + 1 }),
    scope.em.count(CompetitorScan, where),
  ]);
  return sliceOf(rows, slice.first, totalCount);
}
