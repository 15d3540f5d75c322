import type { FastifyBaseLogger } from 'fastify';
import { GraphQLError, Kind, type GraphQLFormattedError } from 'graphql';
import { isDependencyUnavailable, UNAVAILABLE_MESSAGE, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../errors/dependency-unavailable';
import { domainErrorOf, INTERNAL_ERROR_MESSAGE, type DomainErrorData, type ErrorCode } from '../errors/domain-error';
import { isTokenLimitError, TOKEN_LIMIT_CLIENT_MESSAGE } from './limits';

/** What a client may learn of an error: the catalogue code, a message, and the data its shape carries. */
export interface ClassifiedError {
  code: ErrorCode | 'GRAPHQL_PARSE_FAILED' | 'GRAPHQL_VALIDATION_FAILED';
  message: string;
  data: DomainErrorData;
  /** True when the error was not meant for clients: it is masked and logged. */
  masked: boolean;
}

/** Codes that graphql-js and Apollo give to problems of the request itself (they carry no internals). */
const REQUEST_ERROR_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST']);

const MASKED: ClassifiedError = { code: 'INTERNAL_SERVER_ERROR', message: INTERNAL_ERROR_MESSAGE, data: {}, masked: true };

/** A dependency that is down (the database connection) is a documented 503, never a 500: the client may retry. */
const UNAVAILABLE: ClassifiedError = {
  code: 'SERVICE_UNAVAILABLE',
  message: UNAVAILABLE_MESSAGE,
  data: { retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS },
  masked: true,
};

/** graphql-js's "Did you mean …?" hints name fields and enum values: schema details, hidden in production. */
const SUGGESTION = / ?Did you mean (.+?)\?$/;

export interface ClassifyOptions {
  hideSuggestions?: boolean;
}

/**
 * What any error of an operation means for a client, for both transports (GraphQL formats it, REST renders its
 * body): DomainErrors pass with their code and data, graphql-js's request errors pass, everything else is masked.
 */
export function classifyError(error: unknown, options: ClassifyOptions = {}): ClassifiedError {
  const classified = classifyUnmasked(error);
  if (options.hideSuggestions && !classified.masked) classified.message = classified.message.replace(SUGGESTION, '');
  return classified;
}

function classifyUnmasked(error: unknown): ClassifiedError {
  const domainError = domainErrorOf(error);
  if (domainError) return { code: domainError.code, message: domainError.message, data: domainError.data, masked: false };
  if (isDependencyUnavailable(error)) return { ...UNAVAILABLE };
  if (!(error instanceof GraphQLError)) return { ...MASKED };
  if (isTokenLimitError(error)) {
    return { code: 'OPERATION_LIMIT_EXCEEDED', message: TOKEN_LIMIT_CLIENT_MESSAGE, data: {}, masked: false };
  }
  const code = error.extensions?.code;
  if (code === 'PERSISTED_QUERY_NOT_FOUND') {
    // An automatic persisted query's miss: APQ clients act on the code (they send the full text again). Apollo's own
    // message is the bare code's name.
    return { code: 'PERSISTED_QUERY_NOT_FOUND', message: 'Persisted query not found: send the operation with its full text', data: {}, masked: false };
  }
  if (typeof code === 'string' && REQUEST_ERROR_CODES.has(code)) {
    const mapped = code === 'BAD_USER_INPUT' || code === 'BAD_REQUEST' ? 'BAD_USER_INPUT' : code;
    return { code: mapped as ClassifiedError['code'], message: error.message, data: {}, masked: false };
  }
  // graphql-js's refusal of a variable's value (`Variable "$v" got invalid value 1.5; ID cannot represent …`): it
  // names the variable's definition, and carries the scalar's own error as its cause. Apollo answers it over HTTP
  // as BAD_USER_INPUT; the same rule here answers it so on every transport (graphql-ws returns it from subscribe()
  // and execute() without a code).
  if (isVariableValueError(error)) return { code: 'BAD_USER_INPUT', message: error.message, data: {}, masked: false };
  // graphql-js reports bad variables and documents before execution: those errors have no path and no cause.
  if (!error.path && !error.originalError) {
    const kind = error.message.startsWith('Syntax Error') ? 'GRAPHQL_PARSE_FAILED' : 'BAD_USER_INPUT';
    return { code: kind, message: error.message, data: {}, masked: false };
  }
  return { ...MASKED };
}

/** An error graphql-js raised while coercing a variable's value, before anything ran: no path, one variable definition. */
function isVariableValueError(error: GraphQLError): boolean {
  return !error.path && error.nodes?.length === 1 && error.nodes[0]!.kind === Kind.VARIABLE_DEFINITION;
}

/**
 * The one error formatter of every GraphQL transport: catalogue codes pass, request errors pass, anything else
 * becomes a masked INTERNAL_SERVER_ERROR and a log line with its cause. Never a stack trace or SQL text, in any
 * mode: the cause is in the log, found by the request id.
 */
export function formatGraphQLError(
  error: GraphQLError,
  options: { log: FastifyBaseLogger; hideSuggestions: boolean },
): GraphQLFormattedError {
  const classified = classifyError(error, options);
  if (classified.masked) logMasked(options.log, classified, error.originalError ?? error, 'a GraphQL operation', { path: error.path });
  // The data a REST body carries (rate limit figures, missing fields), under the same names; never headers' data.
  const { payload, missingFields } = classified.data;
  const extensions: Record<string, unknown> = {
    code: classified.code,
    ...(payload ? { payload } : {}),
    ...(missingFields ? { missingFields } : {}),
  };
  return {
    message: classified.message,
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
    extensions,
  };
}

/**
 * The log line of an error clients only see masked: a dependency that is down is a warning (the client is told to
 * retry), anything else an error with its stack.
 */
export function logMasked(log: FastifyBaseLogger, classified: ClassifiedError, error: unknown, where: string, extra: Record<string, unknown> = {}): void {
  if (classified.code === 'SERVICE_UNAVAILABLE') log.warn({ err: error, ...extra }, `a dependency is unavailable in ${where}`);
  else log.error({ err: error, ...extra }, `unexpected error in ${where}`);
}

/** Apollo hands its formatter the formatted error and the original; this unwraps to the GraphQLError. */
export function asGraphQLError(formatted: GraphQLFormattedError, original: unknown): GraphQLError {
  if (original instanceof GraphQLError) return original;
  return new GraphQLError(formatted.message, { originalError: original instanceof Error ? original : undefined });
}
