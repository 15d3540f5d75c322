import { eventWrite, recordEvent, type EventRecordDeps } from '../activity/record-event';
import { ChangeNews } from '../events/change-news';
import type { EventBus } from '../events/event-bus';
import { betaAccessToken, type BetaTokenDeps } from '../oauth/beta-connection.service';
import type { JobFailure } from '../jobs/failure-policy';
import { defineWorker, type AnyWorker, type JobContext, type JobEngine } from '../jobs/job-engine';
import type { JobPayload } from '../jobs/queue';
import { BetaProviderError, isBetaEtagMismatch } from '../providers/beta/beta.errors';
import type { BetaBrand as ProviderBrand, BetaBrandDetails } from '../providers/beta/beta.types';
import { changeLocked } from '../db/row-lock';
import { batchedReadWith, readByIds } from '../db/batched-read';
import { runChange, type WriteAlong } from '../db/change-statement';
import { codecOf } from '../db/entity-codec';
import { updateWrite } from '../db/row-writes';
import { statementsApart } from '../db/statements';
import { BetaBrand } from './beta-brand.entity';
import { BetaSyncStatus } from './beta-brand.enums';
import { brandSyncStatusChanged } from './beta-brand.events';
import { brandSyncQueue } from './beta-brand.queues';
import type { BetaClient } from '../providers/beta/beta.client';
import type { Database } from '../db/orm';

export type BetaBrandWorkerDeps = { database: Database; beta: BetaClient; jobs: JobEngine; events: EventBus } & EventRecordDeps & BetaTokenDeps;

/** Replaced or deleted with a fresh etag at most this often when the brand keeps changing at the provider. */
const ETAG_ATTEMPTS = 3;

/** The brand in the provider's shape: the one place our fields meet its brandDetails. */
export function brandDetailsOf(brand: BetaBrand): BetaBrandDetails {
  return {
    displayNames: [{ name: brand.brandName, locale: 'en-US', primary: true }],
    countryCodes: [brand.countryCode],
    categories: { primary: brand.primaryCategory, additional: brand.additionalCategories },
    urls: [
      ...(brand.websiteUrl ? [{ url: brand.websiteUrl, type: 'HOMEPAGE' as const }] : []),
      ...(brand.appStoreUrl ? [{ url: brand.appStoreUrl, type: 'APP_STORE' as const }] : []),
    ],
    ownershipType: brand.ownershipType,
  };
}

/** A brand that keeps changing while it is pushed is pushed again at most this often by one job, then by a job of its own. */
const MAX_PUSHES = 5;

/** Reads a brand for its sync job, with the job's writes along; the reads of jobs starting together share a statement. */
type ReadBrand = (brandId: string, along: WriteAlong[]) => Promise<BetaBrand | undefined>;

/** What the provider's answer to a push puts on the brand. */
function remoteFieldsOf(remote: ProviderBrand): Pick<BetaBrand, 'betaBrandId' | 'betaEtag' | 'betaState' | 'betaCategories'> {
  return {
    betaBrandId: remote.id,
    betaEtag: remote.etag,
    betaState: remote.state,
    betaCategories: [remote.brandDetails.categories.primary, ...(remote.brandDetails.categories.additional ?? [])],
  };
}

/**
 * Pushes a brand to the provider: creates it (our id as the request id, so a retried create never makes two),
 * replaces it as a whole (If-Match with the etag last seen, read again when the brand changed there), or deletes it
 * (then the row goes). Marked SYNCED only when what was pushed is still what the brand holds, and a brand has one
 * sync job at a time, so its pushes never race each other's etags: docs/decisions.md, "Records that requests and
 * jobs both change". A failure is the engine's (docs/jobs.md): FAILED with the reason when final.
 */
export async function syncBetaBrand(runtime: BetaBrandWorkerDeps, readBrand: ReadBrand, payload: JobPayload<typeof brandSyncQueue>, job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork();
  const stored = await readBrand(payload.brandId, job.running());
  // Anything not SYNCED is this job's to push.
  if (!stored || (stored.betaSyncStatus === BetaSyncStatus.SYNCED && !stored.deletedAt)) return;
  const call = { signal: job.signal, accessToken: await betaAccessToken(runtime, stored.organization.id, stored.betaCompanyId) };
  let brand: BetaBrand = stored;
  for (let push = 1; push <= MAX_PUSHES; push += 1) {
    if (brand.deletedAt) return deleteAtProvider(runtime, brand, call, job);
    const current: BetaBrand = brand;
    const pushed = brandDetailsOf(current);
    const remote: ProviderBrand = current.betaBrandId
      ? await withFreshEtag(current, (etag) => runtime.beta.replaceBrand(current.betaCompanyId, current.betaBrandId!, pushed, etag, call), runtime, call)
      : await runtime.beta.createBrand(current.betaCompanyId, pushed, { ...call, requestId: current.id });
    if (await syncedAtOnce(runtime, current, remote, job)) return;
    const lastPush = push === MAX_PUSHES;
    const recorded: { result: BetaBrand | null } | null = await changeLocked(em, BetaBrand, { id: current.id }, async (latest, tx): Promise<BetaBrand | null> => {
      Object.assign(latest, remoteFieldsOf(remote));
      const unchanged = !latest.deletedAt && JSON.stringify(brandDetailsOf(latest)) === JSON.stringify(pushed);
      if (!unchanged) {
        // Still PENDING, so no change queues a job: the next push is this job's, or (after its last) a new job's.
        if (lastPush) await runtime.jobs.enqueue(tx, brandSyncQueue, { brandId: latest.id });
        return latest;
      }
      latest.betaSyncStatus = BetaSyncStatus.SYNCED;
      latest.syncError = null;
      recordEvent(tx, runtime, brandSyncStatusChanged, latest);
      return null;
    });
    // Gone (deleted here, and that job removed the row), or synced: done.
    if (!recorded?.result) return;
    brand = recorded.result;
  }
  job.log.info({ brandId: payload.brandId }, 'the brand kept changing while it was pushed: a new job pushes its latest');
}

/**
 * SYNCED with the provider's answer, for the brand as pushed (its version guards it: what was pushed is what it
 * holds), with its event and the job's completion with its work, in one statement (docs/write-path.md). False when
 * the brand changed meanwhile: the caller then decides under the row lock.
 */
async function syncedAtOnce(runtime: BetaBrandWorkerDeps, pushed: BetaBrand, remote: ProviderBrand, job: JobContext): Promise<boolean> {
  const em = runtime.database.orm.em.fork();
  const metadata = em.getMetadata();
  const codec = codecOf(metadata, BetaBrand);
  const now = runtime.clock.now();
  const after = Object.assign(codec.decode(codec.encode(pushed)), remoteFieldsOf(remote), {
    betaSyncStatus: BetaSyncStatus.SYNCED,
    syncError: null,
    version: pushed.version + 1,
    updatedAt: now,
  });
  const change = updateWrite(metadata, em.getPlatform(), BetaBrand, pushed, after, now, {
    sql: 'and "version" = ? and "deleted_at" is null returning *',
    values: [pushed.version],
  });
  const news = new ChangeNews(runtime.events);
  const changed = await runChange(statementsApart(em), change, [eventWrite(metadata, runtime, brandSyncStatusChanged, after), ...job.completion(news), ...news.writes()]);
  if (changed === undefined) return false;
  await news.announced();
  return true;
}

/**
 * Deletes the brand at the provider (already gone there is what we wanted), then its row here with the job's
 * completion and its work, in one statement.
 */
async function deleteAtProvider(runtime: BetaBrandWorkerDeps, brand: BetaBrand, call: { signal: AbortSignal; accessToken: string }, job: JobContext): Promise<void> {
  if (brand.betaBrandId) {
    try {
      await withFreshEtag(brand, (etag) => runtime.beta.deleteBrand(brand.betaCompanyId, brand.betaBrandId!, etag, call), runtime, call);
    } catch (error) {
      if (!(error instanceof BetaProviderError && error.status === 404)) throw error;
    }
  }
  const em = runtime.database.orm.em.fork();
  const brands = em.getMetadata().get(BetaBrand.name).tableName;
  // A row gone already completes nothing here: the engine completes the job.
  const news = new ChangeNews(runtime.events);
  const deleted = await runChange(statementsApart(em), { sql: `delete from "${brands}" where id = ? returning *`, values: [brand.id] }, [...job.completion(news), ...news.writes()]);
  if (deleted) await news.announced();
}

/**
 * A failure of a brand's push: the latest reason while it is retried; FAILED with the reason when final. A deletion
 * that failed for good brings the brand back (it still exists at the provider), FAILED with why, so it can be seen
 * and deleted again instead of lingering unseen.
 */
async function recordSyncFailure(runtime: { database: Database } & EventRecordDeps, payload: JobPayload<typeof brandSyncQueue>, failure: JobFailure): Promise<void> {
  // Only a brand still waiting for its push: a FAILED one keeps the reason its last attempt recorded.
  await changeLocked(runtime.database.orm.em.fork(), BetaBrand, { id: payload.brandId, betaSyncStatus: BetaSyncStatus.PENDING }, (brand, tx) => {
    if (!failure.final) {
      brand.syncError = `Retrying: ${failure.message}`;
      return;
    }
    brand.betaSyncStatus = BetaSyncStatus.FAILED;
    brand.syncError = brand.deletedAt ? `The deletion could not be pushed to the beta provider: ${failure.message}` : failure.message;
    brand.deletedAt = null;
    recordEvent(tx, runtime, brandSyncStatusChanged, brand);
  });
}

/** Runs `send` with the etag last seen; on an etag mismatch, reads the brand again and retries with its etag. */
async function withFreshEtag<T>(
  brand: BetaBrand,
  send: (etag: string) => Promise<T>,
  runtime: { beta: BetaClient },
  call: { signal: AbortSignal; accessToken: string },
): Promise<T> {
  let etag = brand.betaEtag ?? (await runtime.beta.getBrand(brand.betaCompanyId, brand.betaBrandId!, call)).etag;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await send(etag);
    } catch (error) {
      if (!isBetaEtagMismatch(error) || attempt >= ETAG_ATTEMPTS) throw error;
      etag = (await runtime.beta.getBrand(brand.betaCompanyId, brand.betaBrandId!, call)).etag;
    }
  }
}

export function brandWorkers(runtime: BetaBrandWorkerDeps): AnyWorker[] {
  const readBrand: ReadBrand = batchedReadWith(readByIds(() => runtime.database.orm.em.fork(), BetaBrand));
  return [
    defineWorker({
      queue: brandSyncQueue,
      run: (payload, job) => syncBetaBrand(runtime, readBrand, payload, job),
      marksRunning: true,
      recordFailure: (payload, failure) => recordSyncFailure(runtime, payload, failure),
    }),
  ];
}
