import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { BetaBrand, BetaErrorBody } from '../../src/providers/beta/beta.types';
import {
  answerControlsOnlyOnLoopback,
  answerStatusOf,
  commonConfigPatchShape,
  CONTROLS_ON_LOOPBACK_ONLY,
  describeIssues,
  registerCommonControls,
} from '../shared/control-routes';
import type { ProjectQuotaExceeded } from '../shared/project-quota';
import type { SandboxPluginOptions } from '../shared/sandbox-server';
import { answerOrFail, bodyTextOf, dropConnection } from '../shared/scripted-failures';
import { closableSleeper } from '../shared/sleeper';
import { keepStateInFile } from '../shared/state-file';
import { betaSandboxOAuthPlugin } from './beta-sandbox.oauth';
import {
  BetaSandboxControlRefusal,
  BetaSandboxStore,
  companyInputSchema,
  type BetaSandboxCallKind,
} from './beta-sandbox.state';
import { BetaFieldViolation, validateCreateBody, validateReplaceBody } from './beta-sandbox.validation';

export { BETA_SANDBOX_SEED, type BetaSandboxCompany } from './beta-sandbox.seed';
export type { BetaSandboxGrantCounts } from './beta-sandbox.grants';
export {
  BETA_SANDBOX_CALL_KINDS,
  BetaSandboxStore,
  DEFAULT_BETA_SANDBOX_CONFIG,
  type BetaSandboxCallKind,
  type BetaSandboxConfig,
  type BetaSandboxFailure,
  type BetaSandboxOAuthClient,
  type BetaSandboxPersisted,
  type BetaSandboxState,
} from './beta-sandbox.state';

/** `stateFile`: see SandboxPluginOptions. */
export interface BetaSandboxOptions extends SandboxPluginOptions {
  /** Milliseconds since the epoch; drives brand dates, validation, code and token expiry. Default Date.now. */
  clock?: () => number;
  /** Start with (and reset to) the seeded companies. Default true; false: no company at all. */
  seed?: boolean;
}

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

/** Who a brand call is made for: a consent's token acts for its linked company (if any); an app token only reads. */
type Caller = { kind: 'person'; companyId: string | null } | { kind: 'app' };

/** The provider's code and message for each status it answers with. */
const STATUS_ANSWERS: Record<number, { code: string; message: string }> = {
  400: { code: 'VALIDATION_ERROR', message: 'The request is not valid.' },
  401: { code: 'UNAUTHORIZED', message: 'A valid bearer access token is required.' },
  403: { code: 'FORBIDDEN', message: 'The token may not do this.' },
  404: { code: 'NOT_FOUND', message: 'The resource was not found.' },
  409: { code: 'CONFLICT', message: 'The request conflicts with the resource as it stands.' },
  412: { code: 'ETAG_MISMATCH', message: 'The brand has changed since the etag in If-Match was read.' },
  413: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large.' },
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body must be application/json.' },
  428: { code: 'PRECONDITION_REQUIRED', message: "If-Match with the brand's etag is required." },
  429: { code: 'RATE_LIMITED', message: 'Too many requests. Retry later.' },
  500: { code: 'INTERNAL_ERROR', message: 'Internal error.' },
  502: { code: 'SERVICE_UNAVAILABLE', message: 'The service is unavailable.' },
  503: { code: 'SERVICE_UNAVAILABLE', message: 'The service is unavailable.' },
  504: { code: 'SERVICE_UNAVAILABLE', message: 'The service did not answer in time.' },
};

function statusAnswer(status: number): { code: string; message: string } {
  return (
    STATUS_ANSWERS[status] ??
    (status >= 500
      ? { code: 'INTERNAL_ERROR', message: `Internal error (${status}).` }
      : { code: 'BAD_REQUEST', message: `The request was refused (${status}).` })
  );
}

/** A provider answer other than success, rendered as its error body. */
class SandboxError extends Error {
  constructor(
    readonly status: number,
    readonly context: string | null = null,
    message?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? statusAnswer(status).message);
  }
}

interface SandboxAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type OrgParams = { orgId: string };
type BrandParams = OrgParams & { brandId: string };
type Query = Record<string, unknown>;

const configPatchSchema = z.strictObject({
  ...commonConfigPatchShape,
  validationMs: z.number().int().min(0).optional(),
});

/**
 * A simulator of the beta provider's brand API, its OAuth endpoints (under /oauth) and its controls (under
 * /_control), relative to the prefix it is registered under. Its state is its own (it is the provider, not our
 * database) and lives as long as the Fastify instance, or in `stateFile` across instances.
 */
export async function betaSandboxPlugin(app: FastifyInstance, options: BetaSandboxOptions): Promise<void> {
  const clock = options.clock ?? Date.now;
  // Latencies and scripted delays end early when the server closes, so a close never waits them out.
  const store = new BetaSandboxStore(clock, { seed: options.seed, sleeper: closableSleeper(app), quota: options.quota });
  if (options.stateFile !== undefined) {
    await keepStateInFile(app, store, options.stateFile, {
      name: 'beta sandbox',
      freshStart: 'starting fresh',
      reasonOf: (error) => (error instanceof Error ? error.message : String(error)),
    });
  }

  // Everything this plugin answers, including Fastify's own refusals (bad JSON), is in the provider's error body.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = answerStatusOf(error);
    if (status === 500) request.log.error({ err: error }, 'beta sandbox failure');
    const context = status === 415 ? 'Content-Type' : status === 500 ? null : 'body';
    return sendError(reply, new SandboxError(status, context, status === 500 ? undefined : error.message));
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new SandboxError(404, null, `No such method: ${request.method} ${request.url.split('?')[0]}`)),
  );
  answerControlsOnlyOnLoopback(app, (reply) => sendError(reply, new SandboxError(403, null, CONTROLS_ON_LOOPBACK_ONLY)));

  /** The bearer token's caller: a token the provider issued, unexpired; anything else is 401. */
  function authenticate(request: FastifyRequest): Caller {
    const challenge = 'Bearer realm="beta-sandbox"';
    const token = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (token === undefined) {
      throw new SandboxError(401, 'Authorization', 'A bearer access token is required.', {
        'www-authenticate': challenge,
      });
    }
    const found = store.grants.lookupAccessToken(token);
    if (found.status !== 'valid') {
      throw new SandboxError(
        401,
        'Authorization',
        found.status === 'expired' ? 'The access token expired.' : 'The access token is not valid.',
        { 'www-authenticate': `${challenge}, error="invalid_token"` },
      );
    }
    return found.kind === 'app' ? { kind: 'app' } : { kind: 'person', companyId: found.companyId };
  }

  /** A consent's token reaches its own company only; an app token reads any company that exists, and writes none. */
  function authorize(caller: Caller, orgId: string, access: 'read' | 'write'): void {
    const context = `orgs/${orgId}`;
    if (caller.kind === 'app') {
      if (access === 'write') throw new SandboxError(403, context, 'An app token may read brands but not write them.');
      if (!store.company(orgId)) throw new SandboxError(404, context, `No company ${orgId}.`);
      return;
    }
    if (caller.companyId === null) throw new SandboxError(403, context, 'The token is linked to no company.');
    if (caller.companyId !== orgId)
      throw new SandboxError(403, context, `The token is not linked to company ${orgId}.`);
  }

  /** The steps every brand call goes through, in the order a real provider would show them. */
  async function provider(
    kind: BetaSandboxCallKind,
    access: 'read' | 'write',
    request: FastifyRequest<{ Params: OrgParams }>,
    reply: FastifyReply,
    work: () => SandboxAnswer,
  ): Promise<FastifyReply> {
    store.countCall(kind);
    // At the door, as the call arrives: a call over the quota takes no scripted rule and does nothing.
    const overQuota = store.takeQuota();
    if (overQuota) {
      await store.hold(store.config.latencyMs);
      return sendError(reply, projectQuotaExceeded(overQuota));
    }
    const failure = store.takeFailure(request.method, request.url, { body: bodyTextOf(request.body) });
    await store.hold(store.config.latencyMs + (failure?.delayMs ?? 0));
    return answerOrFail(
      failure,
      (status) => sendFailure(request, reply, status),
      (): SandboxAnswer => {
        try {
          authorize(authenticate(request), request.params.orgId, access);
          return work();
        } catch (error) {
          if (error instanceof BetaFieldViolation) return errorAnswer(new SandboxError(400, error.field, error.message));
          if (error instanceof SandboxError) return errorAnswer(error);
          throw error;
        }
      },
      (answer) => {
        reply.code(answer.status).headers(answer.headers ?? {});
        return answer.body === undefined ? reply.send() : reply.send(answer.body);
      },
    );
  }

  /** The brand, or 404; then If-Match: 428 without one, 412 when it names another version. */
  function requireCurrent(request: FastifyRequest<{ Params: BrandParams }>): void {
    const { orgId, brandId } = request.params;
    const etag = store.etagOf(orgId, brandId);
    if (etag === undefined)
      throw new SandboxError(404, `brands/${brandId}`, `No brand ${brandId} in company ${orgId}.`);
    const header = request.headers['if-match'];
    const ifMatch = (Array.isArray(header) ? header.join(',') : (header ?? '')).trim();
    if (ifMatch === '') throw new SandboxError(428, 'If-Match');
    if (!etagMatches(ifMatch, etag)) throw new SandboxError(412, 'If-Match');
  }

  const brandsPath = '/api/v1/orgs/:orgId/brands';
  const brandPath = `${brandsPath}/:brandId`;

  app.post<{ Params: OrgParams; Body: unknown; Querystring: Query }>(brandsPath, (request, reply) =>
    provider('brand-create', 'write', request, reply, () => {
      const details = validateCreateBody(request.body);
      const requestId = optionalQueryString(request.query, 'requestId');
      const { brand, created } = store.createBrand(request.params.orgId, details, requestId || null);
      const location = `${request.url.split('?')[0]!.replace(/\/+$/, '')}/${encodeURIComponent(brand.id)}`;
      return { status: created ? 201 : 200, body: brand, headers: { ...brandHeaders(brand), location } };
    }),
  );

  app.get<{ Params: OrgParams; Querystring: Query }>(brandsPath, (request, reply) =>
    provider('brand-list', 'read', request, reply, () => {
      const { orgId } = request.params;
      const limit = parseLimit(optionalQueryString(request.query, 'limit'));
      const cursor = optionalQueryString(request.query, 'cursor');
      const page = store.listBrands({
        companyId: orgId,
        limit,
        afterSeq: cursor === undefined || cursor === '' ? undefined : decodeCursor(cursor, orgId),
      });
      const after = page.nextAfterSeq === undefined ? undefined : encodeCursor(orgId, page.nextAfterSeq);
      return {
        status: 200,
        body: { data: page.brands, pagination: { cursors: after === undefined ? {} : { after } } },
      };
    }),
  );

  app.get<{ Params: BrandParams }>(brandPath, (request, reply) =>
    provider('brand-get', 'read', request, reply, () => {
      const { orgId, brandId } = request.params;
      const brand = store.getBrand(orgId, brandId);
      if (!brand) throw new SandboxError(404, `brands/${brandId}`, `No brand ${brandId} in company ${orgId}.`);
      return { status: 200, body: brand, headers: brandHeaders(brand) };
    }),
  );

  // Checked in the provider's order: the brand, If-Match, then the body.
  app.put<{ Params: BrandParams; Body: unknown }>(brandPath, (request, reply) =>
    provider('brand-replace', 'write', request, reply, () => {
      const { orgId, brandId } = request.params;
      requireCurrent(request);
      const details = validateReplaceBody(request.body, { brandId, companyId: orgId });
      const brand = store.replaceBrand(orgId, brandId, details)!;
      return { status: 200, body: brand, headers: brandHeaders(brand) };
    }),
  );

  app.delete<{ Params: BrandParams }>(brandPath, (request, reply) =>
    provider('brand-delete', 'write', request, reply, () => {
      requireCurrent(request);
      store.deleteBrand(request.params.orgId, request.params.brandId);
      return { status: 204 };
    }),
  );

  // The controls: for tests and demonstrations, not part of the provider's API, hence no authentication (loopback only).
  registerCommonControls(app, store, configPatchSchema, sendControlRefusal);
  app.post<{ Body: unknown }>('/_control/companies', async (request, reply) => {
    const input = companyInputSchema.safeParse(request.body);
    if (!input.success) return sendControlRefusal(reply, input.error);
    try {
      return reply.code(201).send(store.addCompany(input.data));
    } catch (error) {
      if (error instanceof BetaSandboxControlRefusal) {
        return sendError(reply, new SandboxError(error.status, 'id', error.message));
      }
      throw error;
    }
  });

  await app.register(betaSandboxOAuthPlugin, { prefix: '/oauth', store });
}

/** The brand's etag as an HTTP entity tag (quoted), beside the one in the body. */
function brandHeaders(brand: BetaBrand): Record<string, string> {
  return { etag: `"${brand.etag}"` };
}

/**
 * RFC 9110 section 13.1.1: `*` matches any current brand; otherwise a list of entity tags compared strongly (a weak
 * W/"…" never matches). A bare etag without quotes is accepted too: the sandbox's leniency.
 */
function etagMatches(header: string, etag: string): boolean {
  if (header === '*') return true;
  return header
    .split(',')
    .map((part) => part.trim())
    .some((tag) => !tag.startsWith('W/') && (tag === `"${etag}"` || tag === etag));
}

function errorAnswer(error: SandboxError): SandboxAnswer {
  const body: BetaErrorBody = {
    code: statusAnswer(error.status).code,
    message: error.message,
    context: error.context,
    details: [],
  };
  return { status: error.status, body, headers: error.headers };
}

function sendError(reply: FastifyReply, error: SandboxError): FastifyReply {
  const answer = errorAnswer(error);
  return reply
    .code(answer.status)
    .headers(answer.headers ?? {})
    .send(answer.body);
}

/** A control's refusal: 400 VALIDATION_ERROR naming the first field, the others in the message. */
function sendControlRefusal(reply: FastifyReply, error: z.ZodError): FastifyReply {
  const first = error.issues[0];
  return sendError(
    reply,
    new SandboxError(400, first ? first.path.join('.') || 'body' : 'body', describeIssues(error)),
  );
}

function sendFailure(request: FastifyRequest, reply: FastifyReply, status: number): FastifyReply {
  if (status === 0) return dropConnection(request, reply);
  const message = `${statusAnswer(status).message} (scripted failure)`;
  return sendError(reply, status === 429 ? rateLimited(1, message) : new SandboxError(status, null, message));
}

/** A 429 as the provider answers it: RATE_LIMITED, with Retry-After in whole seconds. */
function rateLimited(seconds: number, message: string): SandboxError {
  return new SandboxError(429, null, message, { 'retry-after': String(seconds) });
}

/** The per-project quota's 429, naming the limit in its message. */
function projectQuotaExceeded(exceeded: ProjectQuotaExceeded): SandboxError {
  const per = exceeded.limit === 'quotaPerSecond' ? 'second' : 'minute';
  return rateLimited(
    exceeded.retryAfterSeconds,
    `Too many requests: the limit is ${exceeded.limitValue} requests per ${per}. Retry after ${exceeded.retryAfterSeconds} s.`,
  );
}

function optionalQueryString(query: Query, field: string): string | undefined {
  const value = query[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new BetaFieldViolation(field, 'must be given once');
  return value;
}

function parseLimit(text: string | undefined): number {
  if (text === undefined || text === '') return DEFAULT_LIMIT;
  const limit = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT))
    throw new BetaFieldViolation('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
  return limit;
}

/** Cursors are opaque to clients; inside, the company and the position the next page starts after. */
function encodeCursor(companyId: string, seq: number): string {
  return Buffer.from(JSON.stringify(['brands', companyId, seq])).toString('base64url');
}

function decodeCursor(cursor: string, companyId: string): number {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  if (
    !Array.isArray(decoded) ||
    decoded.length !== 3 ||
    decoded[0] !== 'brands' ||
    decoded[1] !== companyId ||
    !Number.isSafeInteger(decoded[2])
  ) {
    throw new BetaFieldViolation('cursor', "is not a cursor of this company's brand list");
  }
  return decoded[2] as number;
}
