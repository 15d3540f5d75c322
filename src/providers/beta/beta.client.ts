import { createApiClient, type ApiCallOptions, type ApiClientOptions, type ApiRequest, type ApiRoot } from '../shared/api-client';
import { betaFailures } from './beta.errors';
import { brandListSchema, brandSchema } from './beta.schemas';
import type { BetaBrand, BetaBrandDetails, BetaBrandPage } from './beta.types';

export type BetaCallOptions = ApiCallOptions;

/**
 * The beta provider's brand API. Every method either returns checked data or throws a BetaProviderError; none
 * retries (the job engine does, guided by `retryable`). Brands returned always carry id, etag and state.
 * `companyId` is the company the consent linked (the token answer's company_id).
 */
export interface BetaClient {
  /**
   * Submits a new brand; the answer is SUBMITTED until the provider's validation decides. With a `requestId`, a
   * repeated create (a retried job) answers the brand the first one made instead of making another.
   */
  createBrand(companyId: string, brandDetails: BetaBrandDetails, options?: BetaCallOptions & { requestId?: string }): Promise<BetaBrand>;
  /** A deleted or unknown brand fails with status 404, code NOT_FOUND. */
  getBrand(companyId: string, brandId: string, options?: BetaCallOptions): Promise<BetaBrand>;
  /**
   * Replaces the brand's details as a whole (fields left out are cleared) and submits it again. `etag` is the one
   * last read: if the brand changed since, the call fails with 412 ETAG_MISMATCH (isBetaEtagMismatch) and nothing
   * changes. The answer carries the new etag.
   */
  replaceBrand(
    companyId: string,
    brandId: string,
    brandDetails: BetaBrandDetails,
    etag: string,
    options?: BetaCallOptions,
  ): Promise<BetaBrand>;
  /** Resolves once the brand is gone; a stale etag fails with 412 ETAG_MISMATCH, a brand already gone with 404. */
  deleteBrand(companyId: string, brandId: string, etag: string, options?: BetaCallOptions): Promise<void>;
  /** Oldest first; pass `nextCursor` back as `cursor` for the next page. */
  listBrands(
    companyId: string,
    page?: { limit?: number; cursor?: string },
    options?: BetaCallOptions,
  ): Promise<BetaBrandPage>;
}

/** `baseUrl` is the root of the provider, without `/api/v1` (the sandbox: `http://127.0.0.1:4000/sandbox/beta`). */
export type BetaClientOptions = ApiClientOptions;

const BRAND_API: ApiRoot = { path: 'api/v1', metricPrefix: '' };

/** RFC 9110 etagc: what may stand between the quotes of an entity tag. */
const ETAG_VALUE = /^[\x21\x23-\x7e]+$/;

export function createBetaClient(options: BetaClientOptions): BetaClient {
  const api = createApiClient(options, betaFailures);
  const send = (request: ApiRequest, callOptions?: BetaCallOptions) => api.send(BRAND_API, request, callOptions);
  const parseAnswer = api.read;

  return {
    async createBrand(companyId, brandDetails, callOptions) {
      const query = callOptions?.requestId ? { requestId: callOptions.requestId } : {};
      const answer = await send({ method: 'POST', path: brandsPath(companyId), body: { brandDetails }, query }, callOptions);
      return parseAnswer(brandSchema, answer, 'create brand');
    },

    async getBrand(companyId, brandId, callOptions) {
      const answer = await send({ method: 'GET', path: brandPath(companyId, brandId) }, callOptions);
      return parseAnswer(brandSchema, answer, 'get brand');
    },

    async replaceBrand(companyId, brandId, brandDetails, etag, callOptions) {
      const path = brandPath(companyId, brandId);
      const answer = await send({ method: 'PUT', path, body: { brandDetails }, headers: ifMatch(etag) }, callOptions);
      return parseAnswer(brandSchema, answer, 'replace brand');
    },

    async deleteBrand(companyId, brandId, etag, callOptions) {
      // The answer (204) carries nothing: success is the 2xx status.
      await send({ method: 'DELETE', path: brandPath(companyId, brandId), headers: ifMatch(etag) }, callOptions);
    },

    async listBrands(companyId, { limit, cursor } = {}, callOptions) {
      const answer = await send({ method: 'GET', path: brandsPath(companyId), query: { limit, cursor } }, callOptions);
      const page = parseAnswer(brandListSchema, answer, 'list brands');
      const after = page.pagination?.cursors?.after;
      return after ? { brands: page.data, nextCursor: after } : { brands: page.data };
    },
  };
}

function brandsPath(companyId: string): string {
  betaFailures.requireNonEmpty({ companyId });
  return `orgs/${encodeURIComponent(companyId)}/brands`;
}

function brandPath(companyId: string, brandId: string): string {
  betaFailures.requireNonEmpty({ brandId });
  return `${brandsPath(companyId)}/${encodeURIComponent(brandId)}`;
}

/** An etag goes into If-Match between quotes; one that cannot stand there was not the provider's. */
function ifMatch(etag: string): Record<string, string> {
  if (typeof etag !== 'string' || !ETAG_VALUE.test(etag)) {
    throw betaFailures.refusal(`not an etag the provider gave: ${JSON.stringify(etag)}`);
  }
  return { 'if-match': `"${etag}"` };
}
