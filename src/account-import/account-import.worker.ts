import { recordEvent, type EventRecordDeps } from '../activity/record-event';
import type { EntityClass, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../account/account.entity';
import { AccountSyncStatus, SYNC_IN_PROGRESS } from '../account/account.enums';
import { accountAccessToken, type AlphaTokenDeps } from '../account/alpha-tokens';
import { updateSubscriptionQuantity } from '../billing/billing.service';
import type { JobFailure } from '../jobs/failure-policy';
import { defineWorker, type AnyWorker, type JobContext, type JobEngine } from '../jobs/job-engine';
import type { JobPayload } from '../jobs/queue';
import { locationFieldsOf } from '../location/location.alpha-mapping';
import { Location } from '../location/location.entity';
import type { AlphaLocation } from '../providers/alpha/alpha.types';
import { reviewFieldsOf } from '../review/review.alpha-mapping';
import { Organization } from '../organization/organization.entity';
import { Review } from '../review/review.entity';
import { ReviewReplyState } from '../review/review.enums';
import { replyCheckQueue } from '../review/review.queues';
import { changeLocked, lockRow } from '../db/row-lock';
import { importEnded, importProgressed } from './account-import.events';
import { accountImportQueue } from './account-import.queues';
import type { AlphaClient } from '../providers/alpha/alpha.client';
import type { Clock } from '../shared/clock';
import type { Database } from '../db/orm';

const PAGE_SIZE = 100;

export type AccountImportDeps = { database: Database; alpha: AlphaClient; jobs: JobEngine; clock: Clock } & AlphaTokenDeps;

/**
 * Imports a connected account from the provider, or re-syncs it: its locations (created or updated, connected) and
 * their reviews (those the provider no longer has marked deleted), with progress on the account as it goes. Safe to
 * run again: everything is matched by the provider's resource names, and a re-sync never writes an older copy over a
 * newer change (docs/decisions.md, "Records that requests and jobs both change"). An account disconnected meanwhile
 * ends the import, whatever step noticed it.
 */
export async function importAccount(runtime: AccountImportDeps, payload: JobPayload<typeof accountImportQueue>, job: JobContext): Promise<void> {
  try {
    await importConnectedAccount(runtime, payload.accountId, job);
  } catch (error) {
    if (job.signal.aborted || (await accountExists(runtime, payload.accountId))) throw error;
    job.log.info({ accountId: payload.accountId }, 'the account was disconnected during its import: the import ends');
  }
}

async function accountExists(runtime: { database: Database }, accountId: string): Promise<boolean> {
  return (await runtime.database.orm.em.fork().count(Account, { id: accountId })) > 0;
}

async function importConnectedAccount(runtime: AccountImportDeps, accountId: string, job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork();
  const account = await em.findOne(Account, accountId);
  if (!account?.alphaAccountId) return;
  const progress = { locations: 0, reviews: 0 };
  // Each step is a change of the account recorded in the activity log (account.import_progressed), in its transaction.
  const setStatus = async (status: AccountSyncStatus, extra: Partial<Account> = {}) => {
    const updated = await changeLocked(em, Account, { id: account.id }, (current, tx) => {
      Object.assign(current, { syncStatus: status, syncProgress: { ...progress }, ...extra });
      recordEvent(tx, runtime, importProgressed, current);
    });
    if (!updated) throw new AccountGone();
  };
  await setStatus(AccountSyncStatus.RUNNING, { syncError: null });
  const accessToken = await accountAccessToken(runtime, account.id);
  const call = { accessToken, signal: job.signal };
  // The versions before the provider is read: a row whose version moved by the time it is written changed here since.
  const locationVersions = await versionsByName(em, Location, { account: account.id, alphaLocationName: { $ne: null } }, 'alphaLocationName');
  const remoteLocations: AlphaLocation[] = [];
  let pageToken: string | undefined;
  do {
    const page = await runtime.alpha.listLocations({ accountId: account.alphaAccountId, pageSize: PAGE_SIZE, pageToken }, call);
    remoteLocations.push(...page.locations);
    pageToken = page.nextPageToken;
  } while (pageToken);

  for (const remote of remoteLocations) {
    const location = await upsertLocation(em, account, remote, runtime.clock.now(), locationVersions.get(remote.name!));
    progress.locations += 1;
    const reviewVersions = await versionsByName(em, Review, { location: location.id }, 'name');
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
      // A reply under moderation at the provider (the owner replied there) is followed by a check job, queued with
      // the change, as a reply sent from here is: a PENDING reply always has a job that will end it.
      const followIfNewlyPending = async (tx: EntityManager, review: Review, before: ReviewReplyState | null) => {
        if (review.replyState === ReviewReplyState.PENDING && before !== ReviewReplyState.PENDING) {
          await runtime.jobs.enqueue(tx, replyCheckQueue, { reviewId: review.id, attempt: 0 });
        }
      };
      await changeLocked(em, Account, { id: account.id }, async (_account, tx) => {
        // Under the account's row lock: another import of the account (a reconnect's) inserts the same reviews.
        const review = await lockRow(tx, Review, { account: account.id, name: remoteReview.name });
        if (!review) {
          const created = tx.create(Review, {
            ...fields,
            organization: tx.getReference(Organization, account.organization.id),
            account: tx.getReference(Account, account.id),
            location: tx.getReference(Location, location.id),
          });
          await tx.flush();
          await followIfNewlyPending(tx, created, null);
          return;
        }
        const before = review.replyState;
        // A reply on its way, or one changed here since the provider was read, stays as it is here.
        const keepReply = review.replyState === ReviewReplyState.PENDING || review.version !== reviewVersions.get(review.name);
        const { replyComment, replyUpdateTime, replyState, ...reviewOnly } = fields;
        Object.assign(review, keepReply ? reviewOnly : { ...reviewOnly, replyComment, replyUpdateTime, replyState }, { deletedAt: null });
        await followIfNewlyPending(tx, review, before);
      });
      progress.reviews += 1;
    }
    await em.nativeUpdate(Review, { location: location.id, deletedAt: null, name: { $nin: [...seen] } }, { deletedAt: runtime.clock.now() });
    await setStatus(AccountSyncStatus.RUNNING);
    await job.progress(progress.locations / remoteLocations.length);
  }

  const now = runtime.clock.now();
  const finished = await changeLocked(em, Account, { id: account.id }, async (current, tx) => {
    current.syncStatus = AccountSyncStatus.SUCCEEDED;
    current.syncProgress = { ...progress };
    current.lastSyncedAt = now;
    current.countryCodes = [...new Set(remoteLocations.map((remote) => remote.storefrontAddress?.regionCode).filter((code): code is string => Boolean(code)))];
    await tx.flush();
    await updateSubscriptionQuantity(tx, account.organization.id, now);
    recordEvent(tx, runtime, importEnded, current);
  });
  if (!finished) throw new AccountGone();
}

/** The account of an import is no longer here (it was disconnected): the import ends. */
class AccountGone extends Error {
  override readonly name = 'AccountGone';
}

/**
 * A failure of an import, on its account while it is in progress: retried ones keep it QUEUED with the latest
 * reason; a final one makes it FAILED with the reason (a provider's text, or a fixed one: never an error of ours).
 */
async function recordImportFailure(runtime: { database: Database } & EventRecordDeps, payload: JobPayload<typeof accountImportQueue>, failure: JobFailure): Promise<void> {
  await changeLocked(runtime.database.orm.em.fork(), Account, { id: payload.accountId, syncStatus: { $in: [...SYNC_IN_PROGRESS] } }, (current, tx) => {
    if (!failure.final) {
      Object.assign(current, { syncStatus: AccountSyncStatus.QUEUED, syncError: `Retrying: ${failure.message}` });
      return;
    }
    Object.assign(current, { syncStatus: AccountSyncStatus.FAILED, syncError: failure.message });
    recordEvent(tx, runtime, importEnded, current);
  });
}

/**
 * The version of each row matching `where`, by its provider name (the `name` field), read apart from the import's
 * own identity map. A row missing here (made meanwhile) has no version to compare, so it counts as changed.
 */
async function versionsByName<T extends { version: number }>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  name: keyof T & string,
): Promise<Map<string, number>> {
  const rows = await em.fork().find(entity, where, { fields: [name, 'version'] as never[] });
  return new Map(rows.flatMap((row) => (typeof row[name] === 'string' ? [[row[name], row.version] as const] : [])));
}

/**
 * The location of the account with this provider name, created or brought up to date (under its lock) from the
 * provider; one whose version is no longer `seenVersion` (changed here since the provider was read) keeps its fields.
 */
async function upsertLocation(em: EntityManager, account: Account, remote: AlphaLocation, now: Date, seenVersion: number | undefined): Promise<Location> {
  const fields = locationFieldsOf(remote);
  // Under the account's row lock (parent first): another import of the account inserts the same locations, and the
  // store code check below must see them.
  const upserted = await changeLocked(em, Account, { id: account.id }, async (_account, tx) => {
    // A store code another location of the account already has stays with that one.
    if (fields.referenceId) {
      const holder = await tx.findOne(Location, { account: account.id, referenceId: fields.referenceId });
      if (holder && holder.alphaLocationName !== remote.name) fields.referenceId = null;
    }
    const existing = await lockRow(tx, Location, { account: account.id, alphaLocationName: remote.name! });
    if (existing) {
      if (existing.version === seenVersion) Object.assign(existing, fields, { connected: true, providerError: null });
      return existing;
    }
    return tx.create(Location, {
      ...fields,
      name: fields.name!,
      account: tx.getReference(Account, account.id),
      connected: true,
      alphaLocationName: remote.name!,
      createdAt: now,
      updatedAt: now,
    });
  });
  if (!upserted) throw new AccountGone();
  return upserted.result;
}

/**
 * Import jobs for accounts waiting for one that no job may hold: those made where no job could be queued (the
 * CLI's demo seed, before the job tables exist). A duplicate job is harmless: an import can run twice.
 */
export async function enqueueOwedImports(runtime: { database: Database; jobs: JobEngine }): Promise<void> {
  const em = runtime.database.orm.em.fork();
  const waiting = await em.find(Account, { syncStatus: AccountSyncStatus.QUEUED, alphaAccountId: { $ne: null } }, { fields: ['id'], limit: 1000 });
  if (waiting.length === 0) return;
  await em.transactional(async (tx) => {
    for (const account of waiting) await runtime.jobs.enqueue(tx, accountImportQueue, { accountId: account.id });
  });
}

export function accountImportWorkers(runtime: AccountImportDeps): AnyWorker[] {
  return [
    defineWorker({
      queue: accountImportQueue,
      run: (payload, job) => importAccount(runtime, payload, job),
      recordFailure: (payload, failure) => recordImportFailure(runtime, payload, failure),
    }),
  ];
}

/** An account whose import ran out of retries, QUEUED to import again. False when it is not FAILED any more. */
export async function reopenImport(tx: EntityManager, _runtime: unknown, { accountId }: JobPayload<typeof accountImportQueue>): Promise<boolean> {
  const updated = await tx.nativeUpdate(Account, { id: accountId, syncStatus: AccountSyncStatus.FAILED }, { syncStatus: AccountSyncStatus.QUEUED, syncError: null });
  return updated > 0;
}
