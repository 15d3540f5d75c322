import { eventWrite, recordEvent, type EventRecordDeps } from '../activity/record-event';
import { ChangeNews } from '../events/change-news';
import type { EventBus } from '../events/event-bus';
import { changeLocked } from '../db/row-lock';
import { batchedReadWith, readByIds } from '../db/batched-read';
import { runChange, type WriteAlong } from '../db/change-statement';
import { codecOf } from '../db/entity-codec';
import { transitionedFrom, transitionRow } from '../db/row-transition';
import { updateWrite } from '../db/row-writes';
import { statementsApart } from '../db/statements';
import { accountAccessToken, type AlphaTokenDeps } from '../account/alpha-tokens';
import type { JobFailure } from '../jobs/failure-policy';
import { defineWorker, type AnyWorker, type JobContext } from '../jobs/job-engine';
import type { JobPayload } from '../jobs/queue';
import { Location } from '../location/location.entity';
import { Post } from '../post/post.entity';
import { PostState } from '../post/post.enums';
import type { AlphaPlace } from '../providers/alpha/alpha.types';
import { CompetitorScan } from './competitor-scan.entity';
import { CompetitorScanStatus, UNFINISHED_SCAN_STATUSES } from './competitor-scan.enums';
import type { ScanClient, ScanCompetitor, ScanStrategy } from './competitor-scan.types';
import { computeScan, gridDots, type ScanOutcome, type ScanPlace } from './scan.compute';
import { scanStatusChanged } from './competitor-scan.events';
import { scanQueue } from './competitor-scan.queues';
import type { AlphaClient } from '../providers/alpha/alpha.client';
import type { Clock } from '../shared/clock';
import type { Database } from '../db/orm';

export type ScanWorkerDeps = { database: Database; alpha: AlphaClient; clock: Clock; events: EventBus } & AlphaTokenDeps;

/** A search shows this many places; a business beyond them is "20+". */
const RESULTS_PER_DOT = 20;
const NOT_SHOWN = `${RESULTS_PER_DOT}+`;

function scanPlaceOf(place: AlphaPlace): ScanPlace {
  return {
    placeId: place.id,
    name: place.displayName.text,
    address: place.formattedAddress ?? '',
    categories: place.types ?? [],
    rating: place.rating ?? 0,
    reviews: place.userRatingCount ?? 0,
    photos: place.photoCount ?? 0,
    website: place.websiteUri ?? null,
    hasPosts: place.hasOwnerPosts ?? false,
    lat: place.location.latitude,
    lng: place.location.longitude,
  };
}

/** The searched text as a category id: "coffee shop" -> coffee_shop. */
const asCategory = (text: string) => text.trim().toLowerCase().replace(/\s+/g, '_');

/** Reads a scan for its job, with the job's writes along; the reads of jobs starting together share a statement. */
type ReadScan = (scanId: string, along: WriteAlong[]) => Promise<CompetitorScan | undefined>;

const isUnfinished = (scan: CompetitorScan | undefined): scan is CompetitorScan =>
  scan !== undefined && (UNFINISHED_SCAN_STATUSES as readonly CompetitorScanStatus[]).includes(scan.status);

/**
 * Runs a scan: a search at every dot of its grid through the alpha provider, then its figures
 * (src/competitor-scan/scan.compute.ts) stored in the document's shape. A failure is the engine's
 * (src/jobs/failure-policy.ts): a retried scan starts again from the first dot; a final failure ends it `failed`.
 * A scan whose location is gone (its account was disconnected) went with it: nothing to do.
 */
export async function runScan(runtime: ScanWorkerDeps, readScan: ReadScan, payload: JobPayload<typeof scanQueue>, job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork();
  const read = await readScan(payload.scanId, job.running());
  if (!isUnfinished(read)) return;
  const scan = await markRunning(runtime, read);
  if (!scan) return;
  const call = { signal: job.signal, accessToken: await accountAccessToken(runtime, scan.account.id) };
  const dots = gridDots(scan.center, scan.radius, scan.rings);
  // Each dot searches within three quarters of the spacing between dots: neighbours' searches overlap a little,
  // so together they cover the grid without every dot seeing the whole of it. One dot searches the whole radius.
  const searchKm = scan.rings === 0 ? scan.radius : (0.75 * scan.radius) / scan.rings;
  const results = [];
  for (const dot of dots) {
    const places = await runtime.alpha.searchPlaces(
      { textQuery: scan.text, latitude: dot.lat, longitude: dot.lng, radiusMeters: Math.round(searchKm * 1000), pageSize: RESULTS_PER_DOT },
      call,
    );
    results.push({ dot, places: places.map(scanPlaceOf) });
    await job.progress(results.length / dots.length);
  }
  const location = await em.findOne(Location, scan.location.id);
  if (!location) return;
  const [latest] = await em.find(
    Post,
    { location: location.id, state: PostState.LIVE },
    { orderBy: { publishedTime: 'desc' }, limit: 1, fields: ['publishedTime'] },
  );
  const figures = scanFigures(computeScan(results, scan.placeId), { text: scan.text, placeId: scan.placeId }, location, latest?.publishedTime ?? null);
  const completed = { status: CompetitorScanStatus.COMPLETED, ...figures, finishedAt: runtime.clock.now(), error: null };
  if (await completedAtOnce(runtime, scan, completed, job)) return;
  await changeUnfinishedScan(runtime, scan.id, completed);
}

/**
 * RUNNING with its event, in one statement guarded by the status read (docs/write-path.md); under the row lock
 * when the scan moved on meanwhile. The scan as it then stands, or null when it is finished or gone.
 */
async function markRunning(runtime: ScanWorkerDeps, read: CompetitorScan): Promise<CompetitorScan | null> {
  if (read.status === CompetitorScanStatus.RUNNING) return read;
  const em = runtime.database.orm.em.fork();
  const now = runtime.clock.now();
  const set = { status: CompetitorScanStatus.RUNNING };
  const event = eventWrite(em.getMetadata(), runtime, scanStatusChanged, transitionedFrom(em, CompetitorScan, read, set, now));
  const running = await transitionRow(em, CompetitorScan, { id: read.id, status: read.status }, set, now, [event]);
  if (running) return running;
  return (await changeUnfinishedScan(runtime, read.id, set))?.row ?? null;
}

/**
 * COMPLETED with its figures and event, and the job's completion with its work, in one statement guarded by the
 * scan's RUNNING (docs/write-path.md). False when it moved on meanwhile: the caller then decides under the row lock.
 */
async function completedAtOnce(runtime: ScanWorkerDeps, running: CompetitorScan, completed: Partial<CompetitorScan>, job: JobContext): Promise<boolean> {
  const em = runtime.database.orm.em.fork();
  const metadata = em.getMetadata();
  const codec = codecOf(metadata, CompetitorScan);
  const now = runtime.clock.now();
  const after = Object.assign(codec.decode(codec.encode(running)), completed);
  const change = updateWrite(metadata, em.getPlatform(), CompetitorScan, running, after, now, { sql: 'and "status" = ? returning *', values: [CompetitorScanStatus.RUNNING] });
  const news = new ChangeNews(runtime.events);
  const changed = await runChange(statementsApart(em), change, [eventWrite(metadata, runtime, scanStatusChanged, after), ...job.completion(news), ...news.writes()]);
  if (changed === undefined) return false;
  await news.announced();
  return true;
}

/**
 * Changes a scan that is not finished yet, under its row lock; a change of its status is recorded in the activity
 * log in the same transaction. Nothing when the scan is gone or finished.
 */
async function changeUnfinishedScan(runtime: { database: Database } & EventRecordDeps, scanId: string, changes: Partial<CompetitorScan>) {
  return changeLocked(runtime.database.orm.em.fork(), CompetitorScan, { id: scanId, status: { $in: UNFINISHED_SCAN_STATUSES } }, (scan, tx) => {
    const statusBefore = scan.status;
    Object.assign(scan, changes);
    if (scan.status !== statusBefore) recordEvent(tx, runtime, scanStatusChanged, scan);
  });
}

/** A failure of a scan: queued again with the latest reason while it is retried; `failed` with the reason when final. */
async function recordScanFailure(runtime: { database: Database; clock: Clock }, payload: JobPayload<typeof scanQueue>, failure: JobFailure): Promise<void> {
  await changeUnfinishedScan(
    runtime,
    payload.scanId,
    failure.final
      ? { status: CompetitorScanStatus.FAILED, error: failure.message, finishedAt: runtime.clock.now() }
      : { status: CompetitorScanStatus.QUEUED, error: `Retrying: ${failure.message}` },
  );
}

/**
 * A scan's stored figures in the document's shape, from its computed outcome and the scanned location (and the
 * time of its latest live post). Shared by the worker and the demo's seed.
 */
export function scanFigures(
  outcome: ScanOutcome,
  scan: { text: string; placeId: string },
  location: Location,
  latestPost: Date | null,
): Pick<CompetitorScan, 'client' | 'competitors' | 'strategy' | 'dots' | 'numberOfCompetitors'> {
  const category = asCategory(scan.text);
  const seen = outcome.client.place;
  const client: ScanClient = {
    rank: outcome.client.centerRank ?? 0,
    name: seen?.name ?? location.name,
    address: seen?.address ?? [location.address, location.postal, location.city].filter(Boolean).join(', '),
    categories: seen?.categories ?? [location.categoryId, ...location.additionalCategoryIds].filter((item): item is string => Boolean(item)),
    locationImages: [location.profileLogoUrl, location.coverUrl].filter((url): url is string => Boolean(url)),
    numberOfImages: seen?.photos ?? 0,
    reviews: seen?.reviews ?? 0,
    avgRating: seen?.rating ?? 0,
    placeId: scan.placeId,
    website: seen?.website ?? location.websiteUri,
    description: location.description,
    gac: (seen?.categories[0] ?? location.categoryId ?? '').toLowerCase() === category,
    lng: String(location.longitude),
    lat: String(location.latitude),
    hasQA: false,
    appearances: outcome.client.appearances,
    top3appearances: outcome.client.top3appearances,
    top5appearances: outcome.client.top5appearances,
    top10appearances: outcome.client.top10appearances,
    hasPosts: Boolean(latestPost) || (seen?.hasPosts ?? false),
    postDate: latestPost?.toISOString() ?? null,
    profileUrl: location.placeId ? `https://maps.alpha.example/place/${encodeURIComponent(location.placeId)}` : null,
    dots: outcome.client.dots,
  };
  const competitors: ScanCompetitor[] = outcome.competitors.map(({ place, centerRank, ...counted }) => ({
    rank: centerRank === null ? NOT_SHOWN : String(centerRank),
    name: place.name,
    address: place.address,
    categories: place.categories,
    reviews: place.reviews,
    avgRating: place.rating,
    placeId: place.placeId,
    website: place.website,
    gac: (place.categories[0] ?? '').toLowerCase() === category,
    lng: String(place.lng),
    lat: String(place.lat),
    ...counted,
  }));
  const { reviewsToTop, imagesToTop } = outcome.strategy;
  const strategy: ScanStrategy = {
    reviewsToTop1: reviewsToTop[1],
    reviewsToTop3: reviewsToTop[3],
    reviewsToTop5: reviewsToTop[5],
    imagesToTop1: imagesToTop[1],
    imagesToTop3: imagesToTop[3],
    imagesToTop5: imagesToTop[5],
    reviewsStrategy:
      outcome.client.centerRank === 1
        ? null
        : `${reviewsToTop[3]} more reviews and ${imagesToTop[3]} more photos would put "${client.name}" in the top 3 for "${scan.text}"`,
  };
  return {
    client,
    competitors,
    strategy,
    dots: outcome.dots.map(({ dot, rank }) => ({ rank: rank === null ? NOT_SHOWN : String(rank), lat: dot.lat, lng: dot.lng, ring: dot.ring, dotId: dot.dotId })),
    numberOfCompetitors: competitors.length,
  };
}

export function scanWorkers(runtime: ScanWorkerDeps): AnyWorker[] {
  const readScan: ReadScan = batchedReadWith(readByIds(() => runtime.database.orm.em.fork(), CompetitorScan));
  return [
    defineWorker({
      queue: scanQueue,
      run: (payload, job) => runScan(runtime, readScan, payload, job),
      marksRunning: true,
      recordFailure: (payload, failure) => recordScanFailure(runtime, payload, failure),
    }),
  ];
}
