import type { z } from 'zod';
import { excerptSuffix, parseAnswerBody, parseJson, parseRetryAfter } from '../shared/answer';
import {
  baseUrlNow,
  type BaseUrl,
  callProvider,
  pathTemplate,
  type ProviderCallObserver,
  jsonRequest,
  withQuery,
  type HttpAnswer,
  type TransportFailure,
} from '../shared/http';
import { unansweredMessage } from '../shared/provider-error';
import { BETA_CLIENT_CODES, BetaProviderError, betaCodeForStatus, isRetryableBetaStatus } from './beta.errors';
import { brandListSchema, brandSchema, errorBodySchema } from './beta.schemas';
import type { BetaBrand, BetaBrandDetails, BetaBrandPage } from './beta.types';

/**
 * Per call: `signal` cancels the call (a stopping worker uses it); the client's own timeout still applies.
 * `accessToken` replaces the client's own for this call: a connected company calls with the token it was granted.
 */
export interface BetaCallOptions {
  signal?: AbortSignal;
  accessToken?: string;
}

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

export interface BetaClientOptions {
  /** Root of the provider, without `/api/v1` (the sandbox: `http://127.0.0.1:4000/sandbox/beta`). */
  baseUrl: BaseUrl;
  /** Asked before every call that has no token of its own, so a refreshed token is picked up. */
  accessToken: () => string | Promise<string>;
  /** Per call, covering the answer's body too. Default 10000. */
  timeoutMs?: number;
  /** Told of every call as it ends (metrics). */
  observe?: ProviderCallObserver;
  fetchFn?: typeof fetch;
}

export const DEFAULT_BETA_TIMEOUT_MS = 10_000;

interface Request {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  ifMatch?: string;
}

/** RFC 9110 etagc: what may stand between the quotes of an entity tag. */
const ETAG_VALUE = /^[\x21\x23-\x7e]+$/;

export function createBetaClient(options: BetaClientOptions): BetaClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_BETA_TIMEOUT_MS;
  const fetchFn = options.fetchFn ?? fetch;

  async function send(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    request: Request,
    callOptions: BetaCallOptions = {},
  ): Promise<HttpAnswer> {
    const url = withQuery(`${baseUrlNow(options.baseUrl)}/api/v1/${path}`, request.query ?? {});
    const accessToken = callOptions.accessToken ?? (await options.accessToken());
    const httpRequest = jsonRequest(method, url, accessToken, request.body, `${method} ${pathTemplate(path)}`);
    if (request.ifMatch !== undefined) httpRequest.headers['if-match'] = `"${request.ifMatch}"`;
    return callProvider(
      httpRequest,
      { fetchFn, timeoutMs, signal: callOptions.signal, observe: options.observe },
      { transport: (failure) => transportError(failure, timeoutMs, `${method} ${path}`), answer: answerError },
    );
  }

  return {
    async createBrand(companyId, brandDetails, callOptions) {
      const query = callOptions?.requestId ? { requestId: callOptions.requestId } : {};
      const answer = await send('POST', brandsPath(companyId), { body: { brandDetails }, query }, callOptions);
      return parseAnswer(brandSchema, answer, 'create brand');
    },

    async getBrand(companyId, brandId, callOptions) {
      const answer = await send('GET', brandPath(companyId, brandId), {}, callOptions);
      return parseAnswer(brandSchema, answer, 'get brand');
    },

    async replaceBrand(companyId, brandId, brandDetails, etag, callOptions) {
      const path = brandPath(companyId, brandId);
      const answer = await send('PUT', path, { body: { brandDetails }, ifMatch: checkedEtag(etag) }, callOptions);
      return parseAnswer(brandSchema, answer, 'replace brand');
    },

    async deleteBrand(companyId, brandId, etag, callOptions) {
      // The answer (204) carries nothing: success is the 2xx status.
      await send('DELETE', brandPath(companyId, brandId), { ifMatch: checkedEtag(etag) }, callOptions);
    },

    async listBrands(companyId, { limit, cursor } = {}, callOptions) {
      const answer = await send('GET', brandsPath(companyId), { query: { limit, cursor } }, callOptions);
      const page = parseAnswer(brandListSchema, answer, 'list brands');
      const after = page.pagination?.cursors?.after;
      return after ? { brands: page.data, nextCursor: after } : { brands: page.data };
    },
  };
}

function brandsPath(companyId: string): string {
  requireNonEmpty({ companyId });
  return `orgs/${encodeURIComponent(companyId)}/brands`;
}

function brandPath(companyId: string, brandId: string): string {
  requireNonEmpty({ brandId });
  return `${brandsPath(companyId)}/${encodeURIComponent(brandId)}`;
}

function requireNonEmpty(values: Record<string, string>): void {
  for (const [field, value] of Object.entries(values)) {
    if (typeof value !== 'string' || value.length === 0) throw clientRefusal(`${field} must be a non-empty string`);
  }
}

/** An etag goes into If-Match between quotes; one that cannot stand there was not the provider's. */
function checkedEtag(etag: string): string {
  if (typeof etag !== 'string' || !ETAG_VALUE.test(etag)) {
    throw clientRefusal(`not an etag the provider gave: ${JSON.stringify(etag)}`);
  }
  return etag;
}

/** A call we did not send because its input is wrong: repeating it cannot help. */
function clientRefusal(message: string): BetaProviderError {
  return new BetaProviderError({ status: 0, code: BETA_CLIENT_CODES.invalidArgument, message, retryable: false });
}

function transportError(failure: TransportFailure, timeoutMs: number, call: string): BetaProviderError {
  const code = { cancelled: BETA_CLIENT_CODES.cancelled, timeout: BETA_CLIENT_CODES.timeout, network: BETA_CLIENT_CODES.network }[failure.kind];
  return new BetaProviderError({
    status: 0,
    code,
    message: unansweredMessage('beta provider', failure.kind, call, timeoutMs),
    retryable: true,
    cause: failure.cause,
  });
}

function answerError(answer: HttpAnswer): BetaProviderError {
  const { status, text } = answer;
  const retryable = isRetryableBetaStatus(status);
  const retryAfterSeconds = parseRetryAfter(answer.headers.get('retry-after'));
  const body = errorBodySchema.safeParse(parseJson(text));
  if (body.success) {
    return new BetaProviderError({
      status,
      code: body.data.code,
      message: body.data.message ?? `Beta provider answered HTTP ${status}`,
      context: body.data.context ?? null,
      details: body.data.details ?? [],
      retryable,
      retryAfterSeconds,
    });
  }
  // A proxy or load balancer in front of the provider answers in HTML or plain text.
  return new BetaProviderError({
    status,
    code: betaCodeForStatus(status),
    message: `Beta provider answered HTTP ${status} without its error body${excerptSuffix(text)}`,
    retryable,
    retryAfterSeconds,
  });
}

function parseAnswer<S extends z.ZodType>(schema: S, answer: HttpAnswer, call: string): z.output<S> {
  return parseAnswerBody(
    schema,
    answer.text,
    (problems) =>
      new BetaProviderError({
        status: answer.status,
        code: BETA_CLIENT_CODES.badResponse,
        message: `Beta provider's answer to ${call} is not the expected shape: ${problems}`,
        retryable: false,
      }),
  );
}
