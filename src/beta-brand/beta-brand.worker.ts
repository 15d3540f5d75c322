import type { EntityManager } from '@mikro-orm/postgresql';
import { betaAccessToken } from '../connection/beta-connection.service';
import type { JobContext } from '../jobs/job-engine';
import type { QueuePayloads } from '../jobs/queues';
import { BetaProviderError, isBetaEtagMismatch } from '../providers/beta/beta.errors';
import type { BetaBrand as ProviderBrand, BetaBrandDetails } from '../providers/beta/beta.types';
import type { Runtime } from '../runtime';
import { BetaBrand } from './beta-brand.entity';
import { BetaSyncStatus } from './beta-brand.enums';

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

/**
 * Pushes a brand to the provider: creates it, replaces it as a whole (If-Match with the etag last seen; when the
 * brand changed there meanwhile, reads it again for a fresh etag and replaces again), or deletes it (then the row
 * goes). SYNCED with the provider's etag and state; FAILED with its reason when refused or out of retries.
 */
export async function syncBetaBrand(runtime: Runtime, payload: QueuePayloads['beta-brand-sync'], job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const brand = await em.findOne(BetaBrand, payload.brandId);
  if (!brand || (brand.betaSyncStatus !== BetaSyncStatus.PENDING && !brand.deletedAt)) return;
  const version = brand.version;
  try {
    const call = { signal: job.signal, accessToken: await betaAccessToken(runtime, brand.organization.id, brand.betaCompanyId) };
    if (brand.deletedAt) {
      if (brand.betaBrandId) {
        await withFreshEtag(brand, async (etag) => runtime.beta.deleteBrand(brand.betaCompanyId, brand.betaBrandId!, etag, call), runtime, call).catch((error: unknown) => {
          // Already gone is what we wanted.
          if (!(error instanceof BetaProviderError && error.status === 404)) throw error;
        });
      }
      await em.nativeDelete(BetaBrand, { id: brand.id });
      return;
    }
    const remote: ProviderBrand = brand.betaBrandId
      ? await withFreshEtag(brand, (etag) => runtime.beta.replaceBrand(brand.betaCompanyId, brand.betaBrandId!, brandDetailsOf(brand), etag, call), runtime, call)
      : await runtime.beta.createBrand(brand.betaCompanyId, brandDetailsOf(brand), call);
    // A change made while this one was sent keeps the brand PENDING: its own job sends it.
    await em.nativeUpdate(
      BetaBrand,
      { id: brand.id },
      {
        betaBrandId: remote.id,
        betaEtag: remote.etag,
        betaState: remote.state,
        betaCategories: [remote.brandDetails.categories.primary, ...(remote.brandDetails.categories.additional ?? [])],
        syncError: null,
        ...(await changedSince(em, brand.id, version) ? {} : { betaSyncStatus: BetaSyncStatus.SYNCED }),
      },
    );
  } catch (error) {
    if (job.signal.aborted) throw error;
    if (error instanceof BetaProviderError && error.retryable && !job.isLastAttempt) throw error;
    // Final: recorded on the brand for the caller to see, and logged; retrying cannot help.
    await em.nativeUpdate(BetaBrand, { id: brand.id }, { betaSyncStatus: BetaSyncStatus.FAILED, syncError: error instanceof Error ? error.message : String(error) });
    job.log.warn({ err: error, brandId: brand.id }, 'a brand change could not be pushed to the beta provider');
  }
}

async function changedSince(em: EntityManager, brandId: string, version: number): Promise<boolean> {
  const current = await em.fork().findOne(BetaBrand, brandId, { fields: ['version'] });
  return !current || current.version !== version;
}

/** Runs `send` with the etag last seen; on an etag mismatch, reads the brand again and retries with its etag. */
async function withFreshEtag<T>(
  brand: BetaBrand,
  send: (etag: string) => Promise<T>,
  runtime: Runtime,
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

export async function registerBetaBrandWorkers(runtime: Runtime): Promise<void> {
  await runtime.jobs.work('beta-brand-sync', (payload, job) => syncBetaBrand(runtime, payload, job));
}
