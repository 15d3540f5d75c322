import type { EntityManager } from '@mikro-orm/postgresql';
import { eventWrite, recordEvent, type EventRecordDeps } from '../activity/record-event';
import { ChangeNews } from '../events/change-news';
import type { EventBus } from '../events/event-bus';
import { accountAccessToken, type AlphaTokenDeps } from '../account/alpha-tokens';
import type { JobFailure } from '../jobs/failure-policy';
import { defineWorker, type AnyWorker, type JobContext, type JobEngine } from '../jobs/job-engine';
import type { JobPayload } from '../jobs/queue';
import { DomainError } from '../errors/domain-error';
import { changeLocked, lockRow } from '../db/row-lock';
import { runChange } from '../db/change-statement';
import { codecOf } from '../db/entity-codec';
import { transitionedFrom, transitionRow } from '../db/row-transition';
import { updateWrite } from '../db/row-writes';
import { statementsApart } from '../db/statements';
import { LocationUpdateJob } from './location-update-job.entity';
import { alphaLocationOf, alphaUpdateOf } from './location.alpha-mapping';
import { Location, type ProviderFailure } from './location.entity';
import { LocationUpdateStatus } from './location.enums';
import { announceUpdateJobChange, updateJobChangeNews, locationConnected, locationRefused, updateJobChangeWrites, type UpdateJobEventDeps } from './location.events';
import { readLocationsToPublish, readUpdatesToRun, startAlong, type LocationToPublish, type UpdateToRun } from './location.sql';
import { batchedReadWith } from '../db/batched-read';
import type { WriteAlong } from '../db/change-statement';
import { locationPublishQueue, locationUpdateQueue } from './location.queues';
import { applyLocationChanges } from './location.rules';
import type { AlphaClient } from '../providers/alpha/alpha.client';
import type { Clock } from '../shared/clock';
import type { Database } from '../db/orm';

function failureOf({ status, reason, message }: JobFailure): ProviderFailure {
  return { status, reason, message };
}

export type LocationWorkerDeps = { database: Database; alpha: AlphaClient; jobs: JobEngine; clock: Clock } & UpdateJobEventDeps & AlphaTokenDeps;

const UNFINISHED = [LocationUpdateStatus.QUEUED, LocationUpdateStatus.RUNNING];

/** Reads a location to publish, with the job's writes along; the reads of jobs starting together share a statement. */
type ReadLocationToPublish = (locationId: string, along: WriteAlong[]) => Promise<LocationToPublish | undefined>;

/**
 * Creates a location at the provider (our id as the request id, so a retried create never makes two) and marks it
 * connected. A location changed while it was being created (updates apply at once until it is connected) is sent
 * again whole before it is marked, so the provider ends with what we have. A location gone meanwhile (its account
 * was disconnected) ends the job.
 */
export async function publishLocation(
  runtime: { database: Database; alpha: AlphaClient; events: EventBus } & EventRecordDeps & AlphaTokenDeps,
  readLocation: ReadLocationToPublish,
  payload: JobPayload<typeof locationPublishQueue>,
  job: JobContext,
): Promise<void> {
  const read = await readLocation(payload.locationId, job.running());
  if (!read || read.location.connected || !read.alphaAccountId) return;
  const stored = read.location;
  const call = { signal: job.signal, accessToken: await accountAccessToken(runtime, stored.account.id) };
  const remote = await runtime.alpha.createLocation({ accountId: read.alphaAccountId, location: alphaLocationOf(stored), requestId: stored.id }, call);
  if (await connectAtOnce(runtime, stored, remote, job)) return;
  const em = runtime.database.orm.em.fork();
  for (let sent = stored; ;) {
    const sentVersion = sent.version;
    const marked = await changeLocked(em, Location, { id: stored.id }, (current, tx): Location | null => {
      if (current.version !== sentVersion) return current;
      current.connected = true;
      current.alphaLocationName = remote.name!;
      current.placeId ??= remote.metadata?.placeId ?? null;
      current.providerError = null;
      recordEvent(tx, runtime, locationConnected, current);
      return null;
    });
    const changedMeanwhile = marked?.result;
    if (!changedMeanwhile) return;
    await runtime.alpha.updateLocation({ name: remote.name!, ...alphaUpdateOf(changedMeanwhile, 'all') }, call);
    sent = changedMeanwhile;
  }
}

/**
 * The common case: the location still as the job read it (its version guards it) is connected in one statement
 * with its activity event, the job's completion and its unit of work (docs/write-path.md). False when it changed
 * meanwhile: the caller then sends it again whole and connects it under its row lock.
 */
async function connectAtOnce(
  runtime: { database: Database; events: EventBus } & EventRecordDeps,
  stored: Location,
  remote: { name?: string | null; metadata?: { placeId?: string | null } | null },
  job: JobContext,
): Promise<boolean> {
  const now = runtime.clock.now();
  // Statements, metadata and the row mapper only: no unit of work, so no fork of the ORM's manager either.
  const em = runtime.database.orm.em;
  const set = {
    connected: true,
    alphaLocationName: remote.name!,
    providerError: null,
    ...(stored.placeId === null ? { placeId: remote.metadata?.placeId ?? null } : {}),
  };
  // The location as the statement leaves it, for its event.
  const after = transitionedFrom(em, Location, stored, set, now);
  const news = new ChangeNews(runtime.events);
  const following = [eventWrite(em.getMetadata(), runtime, locationConnected, after), ...job.completion(news), ...news.writes()];
  const changed = await transitionRow(em, Location, { id: stored.id, version: stored.version, connected: false }, set, now, following);
  if (!changed) return false;
  await news.announced();
  return true;
}

/**
 * A final failure of a location's create, kept on the location. Only a location still waiting for its create is
 * changed: a late or repeated call (the dead letter's RETRIES_EXHAUSTED after the last attempt recorded why) never
 * touches a connected one, nor replaces the failure already kept.
 */
async function recordPublishFailure(runtime: { database: Database } & EventRecordDeps, payload: JobPayload<typeof locationPublishQueue>, failure: JobFailure): Promise<void> {
  if (!failure.final) return;
  await changeLocked(runtime.database.orm.em.fork(), Location, { id: payload.locationId, connected: false, providerError: null }, (current, tx) => {
    current.providerError = failureOf(failure);
    recordEvent(tx, runtime, locationRefused, current);
  });
}

/**
 * Changes an unfinished update job under its row lock, commits, and announces it once committed. Nothing when the
 * job is gone or already finished.
 */
async function changeUnfinishedJob(
  runtime: UpdateJobEventDeps,
  jobId: string,
  change: (job: LocationUpdateJob, tx: EntityManager) => void | Promise<void>,
): Promise<LocationUpdateJob | null> {
  const changed = await changeLocked(runtime.database.orm.em.fork(), LocationUpdateJob, { id: jobId }, async (current, tx) => {
    if (!UNFINISHED.includes(current.status)) return;
    const statusBefore = current.status;
    await change(current, tx);
    announceUpdateJobChange(tx, runtime, current, statusBefore);
  });
  return changed?.row ?? null;
}

/**
 * QUEUED -> RUNNING in one statement with its event, for the job as read (its version guards it); when it moved on
 * meanwhile, under its row lock as any other change.
 */
async function markRunning(runtime: UpdateJobEventDeps, update: LocationUpdateJob, now: Date): Promise<LocationUpdateJob | null> {
  const em = runtime.database.orm.em;
  const set = { status: LocationUpdateStatus.RUNNING, startedAt: now };
  const after = transitionedFrom(em, LocationUpdateJob, update, set, now);
  const where = { id: update.id, version: update.version, status: LocationUpdateStatus.QUEUED };
  const news = updateJobChangeNews(runtime, after);
  const changed = await transitionRow(em, LocationUpdateJob, where, set, now, [...updateJobChangeWrites(runtime, after, LocationUpdateStatus.QUEUED), ...news.writes()]);
  if (changed) {
    await news.announced();
    return changed;
  }
  return changeUnfinishedJob(runtime, update.id, (current) => {
    if (current.status !== LocationUpdateStatus.QUEUED) return;
    current.status = LocationUpdateStatus.RUNNING;
    current.startedAt = now;
  });
}

/**
 * SUCCEEDED with its change applied to the location, in one statement (docs/write-path.md): the location, then the
 * job, locked as they were read (their versions guard them: the order every transaction takes them in), the job's
 * change and the location's, the job's event, and the job's completion with its unit of work. False when either
 * moved on meanwhile: the caller then decides under the row locks.
 */
async function succeedAtOnce(runtime: UpdateJobEventDeps, update: LocationUpdateJob, location: Location, job: JobContext, now: Date): Promise<boolean> {
  // No unit of work here (the metadata, and a statement on a pooled connection): no fork of the ORM's manager either.
  const em = runtime.database.orm.em;
  const metadata = em.getMetadata();
  const platform = em.getPlatform();
  const after = transitionedFrom(em, LocationUpdateJob, update, { status: LocationUpdateStatus.SUCCEEDED, error: null, finishedAt: now }, now);
  const locationCodec = codecOf(metadata, Location);
  const changedLocation = locationCodec.decode(locationCodec.encode(location));
  applyLocationChanges(changedLocation, update.changes);
  const jobs = metadata.get(LocationUpdateJob.name).tableName;
  const locations = metadata.get(Location.name).tableName;
  const jobChange = updateWrite(metadata, platform, LocationUpdateJob, update, after, now, { sql: 'and exists (select 1 from lock_job) returning *', values: [] });
  const news = updateJobChangeNews(runtime, after);
  const row = await runChange(
    statementsApart(em),
    {
      locks: {
        sql: `lock_location as (select id from "${locations}" where id = ? and version = ? for no key update),
          lock_job as (select id from "${jobs}" where id = ? and version = ? and status in (?, ?) and exists (select 1 from lock_location) for no key update)`,
        values: [location.id, location.version, update.id, update.version, ...UNFINISHED],
      },
      ...jobChange,
    },
    [
      updateWrite(metadata, platform, Location, location, changedLocation, now, { sql: 'and exists (select 1 from changed)', values: [] }),
      ...updateJobChangeWrites(runtime, after, update.status),
      ...job.completion(news),
      ...news.writes(),
    ],
  );
  if (!row) return false;
  await news.announced();
  return true;
}

/**
 * Sends a location update to the provider: RUNNING, then SUCCEEDED with the change applied to the location. A
 * failure is the engine's (src/jobs/failure-policy.ts): recorded as the job's latest error, FAILED when final;
 * the job stays RUNNING while it is retried. Sending the same change twice is harmless.
 */
/** Reads an update job to run, with the job's writes along; the reads of jobs starting together share a statement. */
type ReadUpdate = (jobId: string, along: WriteAlong[]) => Promise<UpdateToRun | undefined>;

export async function runLocationUpdate(
  runtime: { database: Database; alpha: AlphaClient; clock: Clock } & UpdateJobEventDeps & AlphaTokenDeps,
  readUpdate: ReadUpdate,
  payload: JobPayload<typeof locationUpdateQueue>,
  job: JobContext,
): Promise<void> {
  const now = () => runtime.clock.now();
  // The job's RUNNING first, then its work's (docs/events.md), both in the read's statement.
  const start = startAlong(runtime, payload.jobId, now());
  const read = await readUpdate(payload.jobId, [...start.along, ...job.running()]);
  if (!read) return;
  const update = start.started() ?? read.update;
  if (!UNFINISHED.includes(update.status)) return;
  const { location } = read;
  // Still QUEUED as read, yet not started by the read: it moved on meanwhile, decided under its row lock.
  const running = update.status === LocationUpdateStatus.QUEUED ? await markRunning(runtime, update, now()) : update;
  if (!running) return;
  // Only an update of a connected location is queued.
  await runtime.alpha.updateLocation(
    { name: location.alphaLocationName!, ...alphaUpdateOf({ ...location, ...update.changes }, update.fields) },
    { signal: job.signal, accessToken: await accountAccessToken(runtime, update.account.id) },
  );
  if (await succeedAtOnce(runtime, running, location, job, now())) return;
  // The location first, then its job: the order every transaction takes them in.
  await changeLocked(runtime.database.orm.em.fork(), Location, { id: location.id }, async (current, tx) => {
    const pending = await lockRow(tx, LocationUpdateJob, { id: update.id, status: { $in: UNFINISHED } });
    if (!pending) return;
    const statusBefore = pending.status;
    applyLocationChanges(current, pending.changes);
    pending.status = LocationUpdateStatus.SUCCEEDED;
    pending.error = null;
    pending.finishedAt = now();
    announceUpdateJobChange(tx, runtime, pending, statusBefore);
  });
}

/** A failure of an update job: its latest error; FAILED when final. */
async function recordUpdateFailure(runtime: UpdateJobEventDeps & { clock: Clock }, payload: JobPayload<typeof locationUpdateQueue>, failure: JobFailure): Promise<void> {
  await changeUnfinishedJob(runtime, payload.jobId, (current) => {
    current.error = failureOf(failure);
    if (failure.final) {
      current.status = LocationUpdateStatus.FAILED;
      current.finishedAt = runtime.clock.now();
    }
  });
}

/**
 * Publish jobs for the locations of connected accounts that the provider does not know yet and that it has not
 * refused: those created where no job could be queued (the CLI's demo seed, before the job tables exist). A
 * duplicate job is harmless: a publish of a connected location does nothing.
 */
export async function enqueueUnpublishedLocations(runtime: { database: Database; jobs: JobEngine }): Promise<number> {
  const em = runtime.database.orm.em.fork();
  const waiting = await em.find(
    Location,
    { connected: false, providerError: null, account: { alphaAccountId: { $ne: null } } },
    { fields: ['id'], limit: 1000 },
  );
  if (waiting.length === 0) return 0;
  await em.transactional(async (tx) => {
    for (const location of waiting) await runtime.jobs.enqueue(tx, locationPublishQueue, { locationId: location.id });
  });
  return waiting.length;
}

export function locationWorkers(runtime: LocationWorkerDeps): AnyWorker[] {
  const readUpdate: ReadUpdate = batchedReadWith((jobIds, along) => readUpdatesToRun(runtime.database.orm.em, jobIds, along));
  const readToPublish: ReadLocationToPublish = batchedReadWith((ids, along) => readLocationsToPublish(runtime.database.orm.em, ids, along));
  return [
    defineWorker({
      queue: locationPublishQueue,
      run: (payload, job) => publishLocation(runtime, readToPublish, payload, job),
      marksRunning: true,
      recordFailure: (payload, failure) => recordPublishFailure(runtime, payload, failure),
    }),
    defineWorker({
      queue: locationUpdateQueue,
      run: (payload, job) => runLocationUpdate(runtime, readUpdate, payload, job),
      marksRunning: true,
      // An update waits on the provider most of its time: 16 at once, as a post's publish (docs/benchmarks.md).
      batchSize: 16,
      recordFailure: (payload, failure) => recordUpdateFailure(runtime, payload, failure),
    }),
  ];
}

/** A location the provider never took (its publish ran out of retries), made ready to publish again. */
export async function reopenLocationPublish(tx: EntityManager, _runtime: unknown, { locationId }: JobPayload<typeof locationPublishQueue>): Promise<boolean> {
  const location = await lockRow(tx, Location, { id: locationId });
  if (!location || location.connected) return false;
  location.providerError = null;
  await tx.flush();
  return true;
}

/**
 * A FAILED update job made QUEUED again, to be sent once more. LOCATION_UPDATE_IN_PROGRESS when another update of
 * the location is unfinished (one at a time per location); false when the job did not fail.
 */
export async function reopenLocationUpdate(tx: EntityManager, runtime: UpdateJobEventDeps, { jobId }: JobPayload<typeof locationUpdateQueue>): Promise<boolean> {
  const job = await lockRow(tx, LocationUpdateJob, { id: jobId });
  if (!job || job.status !== LocationUpdateStatus.FAILED) return false;
  const busy = await tx.count(LocationUpdateJob, { location: job.location.id, status: { $in: UNFINISHED } });
  if (busy > 0) throw new DomainError('LOCATION_UPDATE_IN_PROGRESS', 'Another update of this location is in progress; try again when it has finished');
  job.status = LocationUpdateStatus.QUEUED;
  job.error = null;
  job.startedAt = null;
  job.finishedAt = null;
  await tx.flush();
  announceUpdateJobChange(tx, runtime, job, LocationUpdateStatus.FAILED);
  return true;
}
