/**
 * The error catalogue: every error a caller is meant to see, by code, with its HTTP status and the REST body shape
 * it renders to. Services throw `DomainError`s and know nothing of transports; GraphQL shows the code in
 * `extensions.code` (src/graphql/format-error.ts), REST renders the documented body (src/http/error-body.ts).
 */
export type RestErrorShape =
  /** {error: <status>, message} — the generic body of most endpoints. */
  | 'generic'
  /** {statusCode, message, error: "Not Found"} — the organization endpoints. */
  | 'organization'
  /** {success: false, msg} */
  | 'msg'
  /** {success: false, msg: <code>, payload} — rate limit, quota, reply in progress. */
  | 'msgPayload'
  /** {success: false, code, msg, missing_fields} — citations. */
  | 'coded';

interface CatalogueEntry {
  status: number;
  shape: RestErrorShape;
}

export const errorCatalogue = {
  BAD_USER_INPUT: { status: 400, shape: 'generic' },
  /** A request HTTP itself refuses: malformed, bad percent-encoding, unreadable body. */
  BAD_REQUEST: { status: 400, shape: 'generic' },
  ACCOUNT_ID_REQUIRED: { status: 400, shape: 'generic' },
  /** Required fields missing, named all at once (the citations shape). */
  MISSING_FIELDS: { status: 400, shape: 'coded' },
  OPERATION_LIMIT_EXCEEDED: { status: 400, shape: 'generic' },
  /**
   * A persisted operation's id (an automatic persisted query's hash, or a trusted document's id) that this server
   * does not know: an APQ client sends the full text again (Apollo's code, which clients look for).
   */
  PERSISTED_QUERY_NOT_FOUND: { status: 400, shape: 'generic' },
  /** Trusted documents only (TRUSTED_DOCUMENTS): an operation sent as text that is not in the manifests. */
  PERSISTED_QUERY_NOT_IN_LIST: { status: 400, shape: 'generic' },
  UNAUTHENTICATED: { status: 401, shape: 'generic' },
  FORBIDDEN: { status: 403, shape: 'generic' },
  ORGANIZATION_TOKEN_REQUIRED: { status: 403, shape: 'generic' },
  /** The organization has no beta API access. */
  BETA_API_DISABLED: { status: 403, shape: 'coded' },
  /** The organization has no citations API access. */
  CITATIONS_API_DISABLED: { status: 403, shape: 'coded' },
  NOT_FOUND: { status: 404, shape: 'generic' },
  ORGANIZATION_NOT_FOUND: { status: 404, shape: 'organization' },
  METHOD_NOT_ALLOWED: { status: 405, shape: 'generic' },
  NOT_ACCEPTABLE: { status: 406, shape: 'generic' },
  REQUEST_TIMEOUT: { status: 408, shape: 'generic' },
  CONFLICT: { status: 409, shape: 'generic' },
  LENGTH_REQUIRED: { status: 411, shape: 'generic' },
  /** A location update is QUEUED or RUNNING for the location. */
  LOCATION_UPDATE_IN_PROGRESS: { status: 409, shape: 'msg' },
  /** Citations can be disabled only from ACTIVE. */
  NOT_ACTIVE: { status: 409, shape: 'coded' },
  /** Another citations request for the location is running. */
  IN_PROGRESS: { status: 409, shape: 'coded' },
  /** Only work whose retries ran out (DEAD_LETTERED) of a kind that can start again may be retried. */
  NOT_RETRYABLE: { status: 409, shape: 'generic' },
  PAYLOAD_TOO_LARGE: { status: 413, shape: 'generic' },
  URI_TOO_LONG: { status: 414, shape: 'generic' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, shape: 'generic' },
  /** The review is gone at the provider. */
  REVIEW_DELETED: { status: 410, shape: 'generic' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, shape: 'generic' },
  /** A reply to the review is being moderated. */
  REPLY_IN_PROGRESS: { status: 409, shape: 'msgPayload' },
  RATE_LIMIT_EXCEEDED: { status: 429, shape: 'msgPayload' },
  QUOTA_REACHED: { status: 429, shape: 'msgPayload' },
  REQUEST_HEADERS_TOO_LARGE: { status: 431, shape: 'generic' },
  INTERNAL_SERVER_ERROR: { status: 500, shape: 'generic' },
  SERVICE_UNAVAILABLE: { status: 503, shape: 'generic' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

export function catalogueEntry(code: ErrorCode): CatalogueEntry {
  return errorCatalogue[code];
}

/** A limit's state, as the rate limiter counted it: enough for the transports' RateLimit headers. */
export interface RateLimitState {
  /** Names the limit, e.g. "posts". */
  name: string;
  limit: number;
  windowSeconds: number;
  remaining: number;
  /** Seconds until the oldest counted request leaves the window. */
  resetSeconds: number;
}

/**
 * One refused input field: where it is, as the GraphQL arguments name it (`['input', 'params', 'summary']`), and what
 * is wrong with it, without its name (`must be at most 1500 characters`). Each transport names the place in its own
 * words: GraphQL by this path, REST by the route's field names (src/rest/field-names.ts).
 */
export interface FieldProblem {
  path: readonly (string | number)[];
  problem: string;
}

/** `input.params.media[0].sourceUrl`: a path as GraphQL's own errors write one. */
export function pathText(path: readonly (string | number)[]): string {
  return path.map((segment, index) => (typeof segment === 'number' ? `[${segment}]` : index === 0 ? segment : `.${segment}`)).join('');
}

/** The message of refused fields, each named by `nameOf` (default: its GraphQL path). */
export function fieldProblemsMessage(fields: readonly FieldProblem[], nameOf: (path: readonly (string | number)[]) => string = pathText): string {
  return fields.map((field) => `${nameOf(field.path)} ${field.problem}`).join('; ');
}

/** What some errors carry besides their code and message. */
export interface DomainErrorData {
  /** The input fields refused (BAD_USER_INPUT), for a transport to name in its own words. */
  fields?: readonly FieldProblem[];
  /** The documented REST payload of the shape (rate limit figures, the quota's retryAfter, …). */
  payload?: Record<string, unknown>;
  missingFields?: string[];
  /** The limit that refused the request, for the RateLimit headers. */
  rateLimit?: RateLimitState;
  /** When to try again, for Retry-After. */
  retryAfterSeconds?: number;
}

/** An error a caller is meant to see. Anything else is masked as INTERNAL_SERVER_ERROR. */
export class DomainError extends Error {
  override readonly name = 'DomainError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data: DomainErrorData = {},
  ) {
    super(message);
  }

  get status(): number {
    return errorCatalogue[this.code].status;
  }

  static badInput(message: string): DomainError {
    return new DomainError('BAD_USER_INPUT', message);
  }

  /** BAD_USER_INPUT naming each refused field by its GraphQL path; REST renames them (src/rest/field-names.ts). */
  static badFields(fields: readonly FieldProblem[]): DomainError {
    return new DomainError('BAD_USER_INPUT', fieldProblemsMessage(fields), { fields });
  }

  static notFound(what: string): DomainError {
    return new DomainError('NOT_FOUND', `${what} not found`);
  }
}

export const INTERNAL_ERROR_MESSAGE = 'Internal server error';

/** The DomainError behind an error that wraps it (GraphQL wraps a resolver's throw as `originalError`). */
export function domainErrorOf(error: unknown): DomainError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth += 1) {
    if (current instanceof DomainError) return current;
    current = (current as { originalError?: unknown }).originalError;
  }
  return undefined;
}

/** Catalogue codes of the statuses the transport itself produces (Fastify's and Node's refusals). */
const TRANSPORT_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  411: 'LENGTH_REQUIRED',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  431: 'REQUEST_HEADERS_TOO_LARGE',
  503: 'SERVICE_UNAVAILABLE',
};

export function errorCodeForStatus(status: number): ErrorCode {
  return TRANSPORT_CODES[status] ?? (status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
}
