import { eventWrite, recordEvent } from '../activity/record-event';
import { ChangeNews } from '../events/change-news';
import type { EventBus } from '../events/event-bus';
import { randomUUID } from 'node:crypto';
import { DomainError } from '../errors/domain-error';
import { requireBetaAccess, hasBetaCompany } from '../oauth/beta-connection.service';
import { Location } from '../location/location.entity';
import { Organization } from '../organization/organization.entity';
import type { RequestScope } from '../request-scope';
import { changeLocked } from '../db/row-lock';
import { runChange } from '../db/change-statement';
import { codecOf } from '../db/entity-codec';
import { runChanged } from '../db/row-transition';
import { insertChange, updateWrite } from '../db/row-writes';
import { statementsApart } from '../db/statements';
import { findPlain } from '../db/prepared-reads';
import { isId } from '../shared/ids';
import { BetaBrand } from './beta-brand.entity';
import { additionalCategories, brandName as brandNameRule, category, countryCode, localName, url } from './beta-brand.rules';
import { BetaSyncStatus, OwnershipType } from './beta-brand.enums';
import { brandSyncStatusChanged } from './beta-brand.events';
import { brandSyncQueue } from './beta-brand.queues';
import type { Clock } from '../shared/clock';
import type { JobEngine } from '../jobs/job-engine';

export type BrandServiceDeps = { clock: Clock; jobs: JobEngine; events: EventBus };

/**
 * Brands on the beta provider (the document's "Beta brands", product-decisions §9). Every operation needs an
 * organization token with beta API access. Changes are kept here at once (PENDING) and pushed by a job: one sync
 * job per brand at a time, which pushes until the provider holds the brand's latest (src/beta-brand/beta-brand.worker.ts).
 */

/** The fields a create or an update may carry, in GraphQL's names. */
export interface BrandFields {
  brandName?: string | null;
  countryCode?: string | null;
  primaryCategory?: string | null;
  additionalCategories?: string[] | null;
  websiteUrl?: string | null;
  appStoreUrl?: string | null;
  ownershipType?: OwnershipType | null;
  useLocationName?: boolean | null;
  sendActionLinks?: boolean | null;
}

async function findBrand(scope: RequestScope<BrandServiceDeps>, organizationId: string, segmentId: string): Promise<BetaBrand> {
  const brand = await scope.em.findOne(BetaBrand, { organization: organizationId, segmentId, deletedAt: null });
  if (!brand) throw DomainError.notFound('Brand');
  return brand;
}

export async function getBetaBrand(scope: RequestScope<BrandServiceDeps>, segmentId: string): Promise<BetaBrand> {
  const principal = requireBetaAccess(scope);
  return findBrand(scope, principal.organizationId, segmentId);
}

/** Every brand of the organization, oldest first. */
export async function listBetaBrands(scope: RequestScope<BrandServiceDeps>): Promise<BetaBrand[]> {
  const principal = requireBetaAccess(scope);
  return scope.em.find(BetaBrand, { organization: principal.organizationId, deletedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

/** Queues the brand's push to the provider, in the transaction of `em`. */
async function queueSync(scope: RequestScope<BrandServiceDeps>, em: RequestScope['em'], brand: BetaBrand): Promise<void> {
  await scope.runtime.jobs.enqueue(em, brandSyncQueue, { brandId: brand.id });
}

/**
 * Keeps a change of a brand (under its row lock, in the transaction of `em`), PENDING until pushed. A brand has one
 * sync job at a time: one whose sync is PENDING already has a job, which pushes until the provider holds what the
 * brand holds, so it pushes this change too; queueing another would only have two pushes race each other's etags.
 */
async function keepForSync(scope: RequestScope<BrandServiceDeps>, em: RequestScope['em'], brand: BetaBrand, changes: Partial<BetaBrand>): Promise<void> {
  const syncPending = brand.betaSyncStatus === BetaSyncStatus.PENDING;
  Object.assign(brand, changes, { betaSyncStatus: BetaSyncStatus.PENDING });
  await em.flush();
  if (!syncPending) {
    await queueSync(scope, em, brand);
    recordEvent(em, scope.runtime, brandSyncStatusChanged, brand);
  }
}

/**
 * keepForSync's rule for the brand as read (its version guards it), in one statement (docs/write-path.md): the
 * change, and for a brand not PENDING yet its event, its sync job and the job's work. The brand as changed, or null
 * when it moved on since it was read: the caller then keeps the change under the row lock.
 */
async function keepAtOnce(scope: RequestScope<BrandServiceDeps>, read: BetaBrand, changes: Partial<BetaBrand>): Promise<BetaBrand | null> {
  const { runtime, em } = scope;
  const metadata = em.getMetadata();
  const codec = codecOf(metadata, BetaBrand);
  const now = runtime.clock.now();
  // The brand as the statement leaves it, for its event: the version guard makes it the one read, changed.
  const after = Object.assign(codec.decode(codec.encode(read)), changes, { betaSyncStatus: BetaSyncStatus.PENDING, version: read.version + 1, updatedAt: now });
  const change = updateWrite(metadata, em.getPlatform(), BetaBrand, read, after, now, { sql: 'and "version" = ? and "deleted_at" is null returning *', values: [read.version] });
  const run = statementsApart(em);
  if (read.betaSyncStatus === BetaSyncStatus.PENDING) return (await runChange(run, change, [])) ? after : null;
  const job = await runtime.jobs.enqueueWrites(brandSyncQueue, { brandId: read.id });
  const news = new ChangeNews(runtime.events);
  job.tell(news);
  const kept = await job.within(() => runChanged(run, change, [eventWrite(metadata, runtime, brandSyncStatusChanged, after), ...job.writes, ...news.writes()]));
  if (!kept) return null;
  await news.announced();
  return after;
}

/**
 * A change of the brand `segmentId` kept for its push: at once for the brand as read (keepAtOnce), under its row lock
 * when it moved on meanwhile (its sync job may be writing the provider's answer onto it at this moment). `check`
 * refuses the change for the brand as it stands; null when there is no such brand.
 */
async function keepChange(
  scope: RequestScope<BrandServiceDeps>,
  organizationId: string,
  segmentId: string,
  changes: (now: Date) => Partial<BetaBrand>,
  check: (brand: BetaBrand, em: RequestScope['em']) => Promise<void> = async () => undefined,
): Promise<BetaBrand | null> {
  const where = { organization: organizationId, segmentId, deletedAt: null };
  const [read] = await findPlain(scope.em, BetaBrand, where, { limit: 1 });
  if (!read) return null;
  await check(read, scope.em);
  const kept = await keepAtOnce(scope, read, changes(scope.runtime.clock.now()));
  if (kept) return kept;
  const locked = await changeLocked(scope.em, BetaBrand, where, async (brand, em) => {
    await check(brand, em);
    await keepForSync(scope, em, brand, changes(scope.runtime.clock.now()));
  });
  return locked?.row ?? null;
}

export interface CreateBrandInput extends BrandFields {
  betaCompanyId: string;
  brandName: string;
  countryCode: string;
  primaryCategory: string;
  ownershipType: OwnershipType;
  name?: string | null;
  locationIds?: string[] | null;
}

/**
 * A new brand of a company the organization's beta consent linked (its beta_company_id, which never changes),
 * created at the provider by a job. Locations may be attached (ids of the organization's locations).
 */
export async function createBetaBrand(scope: RequestScope<BrandServiceDeps>, input: CreateBrandInput): Promise<BetaBrand> {
  const principal = requireBetaAccess(scope);
  const companyId = input.betaCompanyId.trim();
  if (!(await hasBetaCompany(scope.em, principal.organizationId, companyId))) {
    throw DomainError.badInput('beta_company_id is not a company of a completed beta consent of this organization');
  }
  const locationIds = [...new Set(input.locationIds ?? [])];
  if (locationIds.length > 0) {
    // An id that is not a UUID names no location: "not found" like an unknown one, never a query error.
    const owned = locationIds.every(isId)
      ? await scope.em.count(Location, { id: { $in: locationIds }, account: { organization: principal.organizationId } })
      : 0;
    if (owned !== locationIds.length) throw DomainError.notFound('Location');
  }
  const brandName = brandNameRule(input.brandName);
  const now = scope.runtime.clock.now();
  const { em, runtime } = scope;
  const brand = em.create(
    BetaBrand,
    {
      segmentId: `brand-${randomUUID()}`,
      organization: em.getReference(Organization, principal.organizationId),
      betaCompanyId: companyId,
      brandName,
      name: input.name ? localName(input.name) : brandName,
      countryCode: countryCode(input.countryCode),
      primaryCategory: category(input.primaryCategory, 'primary_category'),
      additionalCategories: additionalCategories(input.additionalCategories ?? []),
      websiteUrl: url(input.websiteUrl, 'website_url'),
      appStoreUrl: url(input.appStoreUrl, 'app_store_url'),
      ownershipType: input.ownershipType,
      useLocationName: input.useLocationName ?? false,
      sendActionLinks: input.sendActionLinks ?? false,
      locations: locationIds,
      provisionSource: scope.source,
      createdAt: now,
      updatedAt: now,
    },
    { persist: false },
  );
  // The brand, its event, its sync job and the job's work, in one statement (docs/write-path.md).
  const job = await runtime.jobs.enqueueWrites(brandSyncQueue, { brandId: brand.id });
  const change = insertChange(em.getMetadata(), em.getPlatform(), BetaBrand, brand);
  const news = new ChangeNews(runtime.events);
  job.tell(news);
  await job.within(() => runChange(statementsApart(em), change, [eventWrite(em.getMetadata(), runtime, brandSyncStatusChanged, brand), ...job.writes, ...news.writes()]));
  await news.announced();
  return brand;
}

export interface UpdateBrandInput extends BrandFields {
  /** Refused when sent: a brand's company never changes. */
  betaCompanyId?: string | null;
  /** Refused when sent: it is the brand's id. */
  segmentId?: string | null;
}

/**
 * Changes a brand (PATCH /beta/brands/{segment_id}): at least one field; country_code exactly 2 letters; at most
 * 19 additional categories; primary_category whenever the categories change (stored values are never re-mapped);
 * beta_company_id and segment_id cannot change. The change is kept at once and pushed by a job.
 */
export async function updateBetaBrand(scope: RequestScope<BrandServiceDeps>, segmentId: string, input: UpdateBrandInput): Promise<BetaBrand> {
  const principal = requireBetaAccess(scope);
  if (input.betaCompanyId !== undefined) throw DomainError.badInput('beta_company_id cannot be changed');
  if (input.segmentId !== undefined) throw DomainError.badInput('segment_id cannot be changed');
  const given = (Object.keys(input) as (keyof BrandFields)[]).filter((key) => input[key] !== undefined);
  if (given.length === 0) throw DomainError.badInput('Nothing to update: send at least one field');
  for (const key of ['brandName', 'countryCode', 'primaryCategory', 'ownershipType', 'useLocationName', 'sendActionLinks'] as const) {
    if (input[key] === null) throw DomainError.badInput(`${key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)} must not be null`);
  }
  if (input.additionalCategories !== undefined && input.primaryCategory === undefined) {
    throw DomainError.badInput('primary_category is required whenever the categories change');
  }
  const changes: Partial<BetaBrand> = {};
  if (input.brandName !== undefined) changes.brandName = brandNameRule(input.brandName!);
  if (input.countryCode !== undefined) changes.countryCode = countryCode(input.countryCode!);
  if (input.primaryCategory !== undefined) changes.primaryCategory = category(input.primaryCategory!, 'primary_category');
  if (input.additionalCategories !== undefined) changes.additionalCategories = additionalCategories(input.additionalCategories ?? []);
  if (input.websiteUrl !== undefined) changes.websiteUrl = url(input.websiteUrl, 'website_url');
  if (input.appStoreUrl !== undefined) changes.appStoreUrl = url(input.appStoreUrl, 'app_store_url');
  if (input.ownershipType !== undefined) changes.ownershipType = input.ownershipType!;
  if (input.useLocationName !== undefined) changes.useLocationName = input.useLocationName!;
  if (input.sendActionLinks !== undefined) changes.sendActionLinks = input.sendActionLinks!;
  const changed = await keepChange(scope, principal.organizationId, segmentId, (now) => ({ ...changes, syncError: null, updatedAt: now }));
  if (!changed) throw DomainError.notFound('Brand');
  return changed;
}

/** Deletes a brand (409 while locations are attached): gone here at once, at the provider by a job. */
export async function deleteBetaBrand(scope: RequestScope<BrandServiceDeps>, segmentId: string): Promise<{ segmentId: string; deleted: boolean }> {
  const principal = requireBetaAccess(scope);
  // Locations that no longer exist (their account was disconnected) do not hold the brand.
  const refuseWhileAttached = async (brand: BetaBrand, em: RequestScope['em']) => {
    const attached = brand.locations.length > 0 ? await em.count(Location, { id: { $in: brand.locations } }) : 0;
    if (attached > 0) {
      throw new DomainError('CONFLICT', `The brand has ${attached} location(s) attached: detach them before deleting it`);
    }
  };
  const deleted = await keepChange(scope, principal.organizationId, segmentId, (now) => ({ deletedAt: now, updatedAt: now }), refuseWhileAttached);
  if (!deleted) throw DomainError.notFound('Brand');
  return { segmentId, deleted: true };
}
