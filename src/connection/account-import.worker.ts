import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../account/account.entity';
import { AccountSyncStatus } from '../account/account.enums';
import { accountAccessToken, ConsentLostError } from '../account/alpha-tokens';
import { updateSubscriptionQuantity } from '../billing/billing.service';
import type { JobContext } from '../jobs/job-engine';
import type { QueuePayloads } from '../jobs/queues';
import { locationFieldsOf } from '../location/location.alpha-mapping';
import { Location } from '../location/location.entity';
import { AlphaProviderError } from '../providers/alpha/alpha.errors';
import type { AlphaLocation } from '../providers/alpha/alpha.types';
import { reviewFieldsOf } from '../review/review.alpha-mapping';
import { Review } from '../review/review.entity';
import type { Runtime } from '../runtime';

const PAGE_SIZE = 100;

/**
 * Imports a connected account from the provider, or re-syncs it (the document's data export): its locations
 * (created or brought up to date, connected, by their provider names) and each location's reviews (reviews the
 * provider no longer has are marked deleted). Progress is on the account (`syncStatus`, `syncProgress`) as it
 * goes. Safe to run again: everything is matched by the provider's resource names.
 */
export async function importAccount(runtime: Runtime, payload: QueuePayloads['account-import'], job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const account = await em.findOne(Account, payload.accountId);
  if (!account?.alphaAccountId) return;
  const progress = { locations: 0, reviews: 0 };
  const setStatus = (status: AccountSyncStatus, extra: Partial<Account> = {}) =>
    em.fork().nativeUpdate(Account, { id: account.id }, { syncStatus: status, syncProgress: { ...progress }, ...extra });
  await setStatus(AccountSyncStatus.RUNNING, { syncError: null });
  try {
    const accessToken = await accountAccessToken(runtime, account.id);
    const call = { accessToken, signal: job.signal };
    const remoteLocations: AlphaLocation[] = [];
    let pageToken: string | undefined;
    do {
      const page = await runtime.alpha.listLocations({ accountId: account.alphaAccountId, pageSize: PAGE_SIZE, pageToken }, call);
      remoteLocations.push(...page.locations);
      pageToken = page.nextPageToken;
    } while (pageToken);

    for (const remote of remoteLocations) {
      const location = await upsertLocation(em, account, remote, runtime.clock.now());
      progress.locations += 1;
      const reviews = [];
      let reviewPage: string | undefined;
      do {
        const page = await runtime.alpha.listReviews({ accountId: account.alphaAccountId, locationId: remote.name!.split('/')[3]!, pageSize: PAGE_SIZE, pageToken: reviewPage }, call);
        reviews.push(...page.reviews);
        reviewPage = page.nextPageToken;
      } while (reviewPage);
      // Oldest first: our ids are time-ordered, so a location's reviews list newest first by id.
      reviews.sort((a, b) => Date.parse(a.createTime) - Date.parse(b.createTime));
      const seen = new Set<string>();
      for (const remoteReview of reviews) {
        seen.add(remoteReview.name);
        const fields = reviewFieldsOf(remoteReview);
        const existing = await em.findOne(Review, { name: remoteReview.name });
        if (existing) {
          // A reply we sent and the provider still moderates keeps its PENDING (the moderation job follows it).
          Object.assign(existing, fields, { deletedAt: null });
        } else {
          em.create(Review, { ...fields, organization: account.organization, account, location });
        }
        progress.reviews += 1;
      }
      await em.flush();
      await em.nativeUpdate(Review, { location: location.id, deletedAt: null, name: { $nin: [...seen] } }, { deletedAt: runtime.clock.now() });
      await setStatus(AccountSyncStatus.RUNNING);
    }

    const now = runtime.clock.now();
    await em.transactional(async (tx) => {
      const current = await tx.findOneOrFail(Account, account.id);
      current.syncStatus = AccountSyncStatus.SUCCEEDED;
      current.syncProgress = { ...progress };
      current.lastSyncedAt = now;
      current.countryCodes = [...new Set(remoteLocations.map((remote) => remote.storefrontAddress?.regionCode).filter((code): code is string => Boolean(code)))];
      await tx.flush();
      await updateSubscriptionQuantity(tx, account.organization.id, now);
    });
  } catch (error) {
    if (job.signal.aborted) throw error;
    const retryable = error instanceof AlphaProviderError && error.retryable && !job.isLastAttempt;
    if (retryable) {
      await setStatus(AccountSyncStatus.QUEUED, { syncError: `Retrying: ${error.message}` });
      throw error;
    }
    const message = error instanceof ConsentLostError || error instanceof AlphaProviderError ? error.message : 'The import failed unexpectedly';
    await setStatus(AccountSyncStatus.FAILED, { syncError: message });
    if (!(error instanceof ConsentLostError || error instanceof AlphaProviderError)) throw error;
    job.log.warn({ err: error, accountId: account.id }, 'account import failed');
  }
}

/** The location of the account with this provider name, created or brought up to date from the provider. */
async function upsertLocation(em: EntityManager, account: Account, remote: AlphaLocation, now: Date): Promise<Location> {
  const fields = locationFieldsOf(remote);
  const existing = await em.findOne(Location, { account: account.id, alphaLocationName: remote.name! });
  // A store code another location of the account already has stays with that one.
  if (fields.referenceId) {
    const holder = await em.findOne(Location, { account: account.id, referenceId: fields.referenceId });
    if (holder && holder.id !== existing?.id) fields.referenceId = null;
  }
  if (existing) {
    Object.assign(existing, fields, { connected: true, providerError: null });
    await em.flush();
    return existing;
  }
  const created = em.create(Location, {
    ...fields,
    name: fields.name!,
    account,
    connected: true,
    alphaLocationName: remote.name!,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return created;
}

/**
 * Import jobs for accounts waiting for one that no job may hold: those made where no job could be queued (the
 * CLI's demo seed, before the job tables exist). A duplicate job is harmless: an import can run twice.
 */
async function enqueueOwedImports(runtime: Runtime): Promise<void> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const waiting = await em.find(Account, { syncStatus: AccountSyncStatus.QUEUED, alphaAccountId: { $ne: null } }, { fields: ['id'], limit: 1000 });
  if (waiting.length === 0) return;
  await em.transactional(async (tx) => {
    for (const account of waiting) await runtime.jobs.enqueue(tx, 'account-import', { accountId: account.id });
  });
}

export async function registerAccountWorkers(runtime: Runtime): Promise<void> {
  await runtime.jobs.work('account-import', (payload, job) => importAccount(runtime, payload, job));
  await enqueueOwedImports(runtime);
}
