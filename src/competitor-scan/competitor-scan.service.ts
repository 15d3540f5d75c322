import { eventWrite } from '../activity/record-event';
import type { ObjectQuery } from '@mikro-orm/core';
import { requirePrincipal } from '../access/guards';
import { resolveAccountScope } from '../account/account.access';
import { DomainError } from '../errors/domain-error';
import { countRequestsInChange, type Limited, type LimitDeps } from '../limits/request-limits';
import type { CountedInChange } from '../limits/rate-limiter';
import { findLocationOfAccount } from '../location/location.service';
import type { RequestScope } from '../request-scope';
import { runChange } from '../db/change-statement';
import { codecOf } from '../db/entity-codec';
import { insertChange } from '../db/row-writes';
import { statementsApart } from '../db/statements';
import { ChangeNews } from '../events/change-news';
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
import type { EventBus } from '../events/event-bus';

export type ScanServiceDeps = { clock: Clock; jobs: JobEngine; events: EventBus } & LimitDeps;

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
  // Written by its own statement (insertChange): a plain instance, not the ORM's entity.
  const scan = codecOf(scope.em.getMetadata(), CompetitorScan).create({
    organization: { id: principal.organizationId },
    account: location.account,
    location,
    placeId: location.placeId,
    text,
    radius: args.radiusKm,
    rings: args.rings,
    createdBy: principal.tokenId,
    origin: scope.source,
    center: { lat: location.latitude, lng: location.longitude },
    createdAt: now,
  });
  // Counted once the request is known to be valid, by the statement that writes the scan: a refusal writes nothing.
  const counted = countRequestsInChange(scope, [{ name: 'scan-starts' }, { name: 'scan-searches', weight: dotCount(args.rings) }], {
    name: 'scans-running',
    count: { sql: `lg_count_scans_running(?, array[${UNFINISHED_SCAN_STATUSES.map(() => '?').join(', ')}]::text[])`, values: [principal.organizationId, ...UNFINISHED_SCAN_STATUSES] },
    retryAfterSeconds: SCAN_RETRY_AFTER_SECONDS,
  });
  return { result: await insertScanWithJob(scope, scan, counted), rateLimit: counted.state() };
}

/**
 * A queued scan, its activity event, its job and the job's unit of work, in one statement that also counts the start
 * against its two rate limits and the organization's cap on scans queued or running (docs/write-path.md); their
 * news once it has run. The cap is counted under a per-organization lock held to the statement's end, by a function
 * that sees the scans committed while it waited, so concurrent starts cannot all pass.
 */
async function insertScanWithJob(scope: RequestScope<ScanServiceDeps>, scan: CompetitorScan, counted: CountedInChange): Promise<CompetitorScan> {
  const { runtime, em } = scope;
  const job = await runtime.jobs.enqueueWrites(scanQueue, { scanId: scan.id });
  const change = { ...insertChange(em.getMetadata(), em.getPlatform(), CompetitorScan, scan, { admittedBy: counted.admittedBy }), locks: counted.preamble };
  // A scan has no news of its own: its work's, then the wake-up of the worker that runs it.
  const news = new ChangeNews(runtime.events);
  job.tell(news);
  try {
    await job.within(() =>
      runChange(statementsApart(em), change, [...counted.writes, eventWrite(em.getMetadata(), runtime, scanStatusChanged, scan), ...job.writes, ...news.writes()]),
    );
  } catch (error) {
    throw counted.refusal(error) ?? error;
  }
  await news.announced();
  return scan;
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
