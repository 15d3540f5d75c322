import { GraphQLError } from 'graphql';

/**
 * The error catalogue: every error a client can see, with its HTTP status and the REST body shape it renders
 * to. GraphQL carries the code in `extensions.code`; the REST adapter renders the documented body.
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
  OPERATION_LIMIT_EXCEEDED: { status: 400, shape: 'generic' },
  UNAUTHENTICATED: { status: 401, shape: 'generic' },
  FORBIDDEN: { status: 403, shape: 'generic' },
  ORGANIZATION_TOKEN_REQUIRED: { status: 403, shape: 'generic' },
  NOT_FOUND: { status: 404, shape: 'generic' },
  METHOD_NOT_ALLOWED: { status: 405, shape: 'generic' },
  REQUEST_TIMEOUT: { status: 408, shape: 'generic' },
  ORGANIZATION_NOT_FOUND: { status: 404, shape: 'organization' },
  CONFLICT: { status: 409, shape: 'generic' },
  PAYLOAD_TOO_LARGE: { status: 413, shape: 'generic' },
  URI_TOO_LONG: { status: 414, shape: 'generic' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, shape: 'generic' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, shape: 'generic' },
  RATE_LIMIT_EXCEEDED: { status: 429, shape: 'msgPayload' },
  QUOTA_REACHED: { status: 429, shape: 'msgPayload' },
  REQUEST_HEADERS_TOO_LARGE: { status: 431, shape: 'generic' },
  INTERNAL_SERVER_ERROR: { status: 500, shape: 'generic' },
  SERVICE_UNAVAILABLE: { status: 503, shape: 'generic' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

export interface AppErrorExtensions {
  code: ErrorCode;
  /** Extra data some REST shapes carry (rate limit figures, missing fields). */
  payload?: Record<string, unknown>;
  missingFields?: string[];
}

/** An error a client is meant to see. Anything else is masked as INTERNAL_SERVER_ERROR. */
export class AppError extends GraphQLError {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, extra: Omit<AppErrorExtensions, 'code'> = {}) {
    super(message, { extensions: { code, ...extra } });
    this.code = code;
  }

  get status(): number {
    return errorCatalogue[this.code].status;
  }

  static badInput(message: string): AppError {
    return new AppError('BAD_USER_INPUT', message);
  }

  static notFound(what: string): AppError {
    return new AppError('NOT_FOUND', `${what} not found`);
  }
}

export const INTERNAL_ERROR_MESSAGE = 'Internal server error';

/** Catalogue codes of the statuses the transport itself produces (Fastify's and Node's refusals). */
const TRANSPORT_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  431: 'REQUEST_HEADERS_TOO_LARGE',
  503: 'SERVICE_UNAVAILABLE',
};

export function errorCodeForStatus(status: number): ErrorCode {
  return TRANSPORT_CODES[status] ?? (status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
}

/** Finds our AppError behind a GraphQLError that wraps a resolver's throw. */
export function appErrorOf(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth += 1) {
    if (current instanceof AppError) return current;
    current = (current as { originalError?: unknown }).originalError;
  }
  return undefined;
}

/** The documented REST body for an error of the catalogue. */
export function restErrorBody(
  code: ErrorCode,
  message: string,
  extensions: Omit<AppErrorExtensions, 'code'> = {},
): { status: number; body: Record<string, unknown> } {
  const { status, shape } = errorCatalogue[code] as CatalogueEntry;
  switch (shape) {
    case 'generic':
      return { status, body: { error: status, message } };
    case 'organization':
      return { status, body: { statusCode: status, message, error: 'Not Found' } };
    case 'msg':
      return { status, body: { success: false, msg: message } };
    case 'msgPayload':
      return { status, body: { success: false, msg: code, payload: extensions.payload ?? {} } };
    case 'coded':
      return { status, body: { success: false, code, msg: message, missing_fields: extensions.missingFields ?? [] } };
  }
}
