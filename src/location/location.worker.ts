import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { accountAccessToken } from '../account/alpha-tokens';
import type { JobContext } from '../jobs/job-engine';
import type { QueuePayloads } from '../jobs/queues';
import { AlphaProviderError } from '../providers/alpha/alpha.errors';
import type { Runtime } from '../runtime';
import { LocationUpdateJob } from './location-update-job.entity';
import { alphaLocationOf, alphaUpdateOf } from './location.alpha-mapping';
import { Location, type ProviderFailure } from './location.entity';
import { LocationUpdateStatus } from './location.enums';
import { announceUpdateJobChange } from './location.events';
import { applyLocationChanges } from './location.rules';

function failureOf(error: AlphaProviderError): ProviderFailure {
  return { status: error.status, reason: error.reason, message: error.message };
}

/**
 * Whether a provider failure ends the job now: not for an interruption by a stop (the job is retried, nothing is
 * recorded), nor for a retryable failure with attempts left (recorded as the latest failure, then retried).
 */
function providerFailure(error: unknown, job: JobContext): { failure: ProviderFailure; final: boolean } {
  if (!(error instanceof AlphaProviderError) || job.signal.aborted) throw error;
  return { failure: failureOf(error), final: !error.retryable || job.isLastAttempt };
}

/**
 * Creates a location at the provider (our id as the request id, so a retried create never makes two) and marks it
 * connected. A location changed while it was being created (updates apply at once until it is connected) is sent
 * again whole before it is marked, so the provider ends with what we have.
 */
export async function publishLocation(runtime: Runtime, payload: QueuePayloads['location-publish'], job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  let location = await em.findOne(Location, payload.locationId, { populate: ['account'] });
  if (!location || location.connected || !location.account.alphaAccountId) return;
  try {
    const call = { signal: job.signal, accessToken: await accountAccessToken(runtime, location.account.id) };
    const remote = await runtime.alpha.createLocation(
      { accountId: location.account.alphaAccountId, location: alphaLocationOf(location), requestId: location.id },
      call,
    );
    for (;;) {
      const sentVersion = location.version;
      const latest = await em.fork().transactional(async (tx) => {
        const current = await tx.findOneOrFail(Location, location!.id, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (current.version !== sentVersion) return current;
        current.connected = true;
        current.alphaLocationName = remote.name!;
        current.placeId ??= remote.metadata?.placeId ?? null;
        current.providerError = null;
        return null;
      });
      if (!latest) return;
      await runtime.alpha.updateLocation({ name: remote.name!, ...alphaUpdateOf(latest, 'all') }, call);
      location = latest;
    }
  } catch (error) {
    const { failure, final } = providerFailure(error, job);
    if (final) {
      await em.fork().transactional(async (tx) => {
        const current = await tx.findOneOrFail(Location, payload.locationId, { lockMode: LockMode.PESSIMISTIC_WRITE });
        current.providerError = failure;
      });
    }
    // A retryable failure is thrown again: retried with backoff, or to the dead letter after the last attempt.
    if (error instanceof AlphaProviderError && error.retryable) throw error;
    job.log.warn({ err: error, locationId: payload.locationId }, 'the alpha provider refused to create a location');
  }
}

/** Changes the update job under a row lock, commits, and announces it. */
async function changeJob(
  runtime: Runtime,
  jobId: string,
  change: (job: LocationUpdateJob, em: EntityManager) => void | Promise<void>,
): Promise<LocationUpdateJob> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const job = await em.transactional(async (tx) => {
    const current = await tx.findOneOrFail(LocationUpdateJob, jobId, { lockMode: LockMode.PESSIMISTIC_WRITE });
    await change(current, tx);
    return current;
  });
  await announceUpdateJobChange(runtime, job);
  return job;
}

/**
 * Sends a location update to the provider: RUNNING, then SUCCEEDED with the change applied to the location, or
 * FAILED with the provider's error. Retryable failures (429, 5xx, network) are recorded as the job's latest error
 * and retried with backoff; the job stays RUNNING meanwhile. Sending the same change twice is harmless.
 */
export async function runLocationUpdate(runtime: Runtime, payload: QueuePayloads['location-update'], job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const update = await em.findOne(LocationUpdateJob, payload.jobId, { populate: ['location'] });
  if (!update || (update.status !== LocationUpdateStatus.QUEUED && update.status !== LocationUpdateStatus.RUNNING)) return;
  const now = () => runtime.clock.now();
  if (update.status === LocationUpdateStatus.QUEUED) {
    await changeJob(runtime, update.id, (current) => {
      current.status = LocationUpdateStatus.RUNNING;
      current.startedAt = now();
    });
  }
  const location = update.location;
  try {
    // Only an update of a connected location is queued.
    const changed = { ...location, ...update.changes } as Location;
    await runtime.alpha.updateLocation(
      { name: location.alphaLocationName!, ...alphaUpdateOf(changed, update.fields) },
      { signal: job.signal, accessToken: await accountAccessToken(runtime, update.account.id) },
    );
  } catch (error) {
    const { failure, final } = providerFailure(error, job);
    await changeJob(runtime, update.id, (current) => {
      current.error = failure;
      if (final) {
        current.status = LocationUpdateStatus.FAILED;
        current.finishedAt = now();
      }
    });
    if (error instanceof AlphaProviderError && error.retryable) throw error;
    return;
  }
  await changeJob(runtime, update.id, async (current, tx) => {
    applyLocationChanges(await tx.findOneOrFail(Location, location.id, { lockMode: LockMode.PESSIMISTIC_WRITE }), current.changes);
    current.status = LocationUpdateStatus.SUCCEEDED;
    current.error = null;
    current.finishedAt = now();
  });
}

/**
 * Publish jobs for the locations of connected accounts that the provider does not know yet and that it has not
 * refused: those created where no job could be queued (the CLI's demo seed, before the job tables exist). A
 * duplicate job is harmless: a publish of a connected location does nothing.
 */
async function enqueueUnpublishedLocations(runtime: Runtime): Promise<number> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const waiting = await em.find(
    Location,
    { connected: false, providerError: null, account: { alphaAccountId: { $ne: null } } },
    { fields: ['id'], limit: 1000 },
  );
  if (waiting.length === 0) return 0;
  await em.transactional(async (tx) => {
    for (const location of waiting) await runtime.jobs.enqueue(tx, 'location-publish', { locationId: location.id });
  });
  return waiting.length;
}

/** Registers the location workers of this process, and queues the publishes that are owed. */
export async function registerLocationWorkers(runtime: Runtime): Promise<void> {
  await runtime.jobs.work('location-publish', (payload, job) => publishLocation(runtime, payload, job));
  await runtime.jobs.work('location-update', (payload, job) => runLocationUpdate(runtime, payload, job));
  await enqueueUnpublishedLocations(runtime);
}
