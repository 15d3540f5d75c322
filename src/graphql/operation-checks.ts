import {
  getOperationAST,
  getVariableValues,
  GraphQLError,
  Kind,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type FieldNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import { visibilityKey, type Principal } from '../access/principal';
import { DomainError, domainErrorOf, INTERNAL_ERROR_MESSAGE } from '../errors/domain-error';
import { toGraphQLError } from './errors';
import { parseOptions } from './limits';
import { requestValidationRules, variablesProblem } from './request-guards';
import type { TrustedDocuments } from './trusted-documents';

/**
 * What the transports that run operations themselves share: graphql-ws (websocket.ts) and GraphQL over
 * Server-Sent Events (sse.ts). Apollo runs HTTP's with the same `parseOptions` and `requestValidationRules`; these
 * two go through the same checks here, in the same order, so a document refused on one is refused alike on the
 * others (the same parse limits, validation and cost rules, variable checks and error codes).
 */

/** One operation as a client sends it. */
export interface OperationRequest {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

export type CheckedDocument = { document: DocumentNode } | { errors: readonly GraphQLError[] };

/** An operation that passed every check: its document and the operation of it that runs. */
export interface CheckedOperation {
  document: DocumentNode;
  operation: OperationDefinitionNode;
}

const validationRules = [...specifiedRules, ...requestValidationRules];

/** Parsed and validated documents kept for reuse; parse failures are not kept. */
const MAX_CHECKED_DOCUMENTS = 500;
const MAX_CACHED_QUERY_LENGTH = 8 * 1024;

/** Apollo's codes for a document that does not parse or validate, so every transport answers alike. */
function withCode(error: GraphQLError, code: 'GRAPHQL_PARSE_FAILED' | 'GRAPHQL_VALIDATION_FAILED'): GraphQLError {
  if (domainErrorOf(error)) return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    extensions: { ...error.extensions, code },
  });
}

/**
 * Parses and validates documents against `schema` with the parse limits and the validation rules of every
 * transport. Dashboards send the same few documents: each is parsed and validated once, and its AST shared.
 */
export function documentChecker(schema: GraphQLSchema): (query: string) => CheckedDocument {
  const checkedDocuments = new LRUCache<string, CheckedDocument>({ max: MAX_CHECKED_DOCUMENTS });
  return (query) => {
    const known = checkedDocuments.get(query);
    if (known) return known;
    let checked: CheckedDocument;
    try {
      const document = parse(query, parseOptions);
      const errors = validate(schema, document, validationRules);
      checked = errors.length > 0 ? { errors: errors.map((error) => withCode(error, 'GRAPHQL_VALIDATION_FAILED')) } : { document };
    } catch (error) {
      return { errors: [error instanceof GraphQLError ? withCode(error, 'GRAPHQL_PARSE_FAILED') : new GraphQLError(String(error))] };
    }
    // Bounded in number and size (large documents are checked every time); the least recently used goes first.
    if (query.length > MAX_CACHED_QUERY_LENGTH) return checked;
    checkedDocuments.set(query, checked);
    return checked;
  };
}

/**
 * The checks an operation passes before it may run, in order: with trusted documents, that it is one; its document (parse and validation, through
 * `checkDocument`), its variables' text, which operation of the document runs, and its variables' types (as over
 * HTTP, variables that do not fit refuse the operation before it starts; execute and subscribe coerce them again).
 * Returns the errors that refuse it, or what runs.
 */
export function checkOperation(
  schema: GraphQLSchema,
  checkDocument: (query: string) => CheckedDocument,
  request: OperationRequest,
  /** Trusted documents only (TRUSTED_DOCUMENTS): the text must be one of the manifests' operations. */
  trusted?: TrustedDocuments,
): CheckedOperation | GraphQLError[] {
  if (trusted) {
    try {
      trusted.resolve({ query: request.query });
    } catch (error) {
      const refusal = domainErrorOf(error);
      if (!refusal) throw error;
      return [toGraphQLError(refusal)];
    }
  }
  const checked = checkDocument(request.query);
  if ('errors' in checked) return [...checked.errors];
  const { document } = checked;
  const problem = variablesProblem(request.variables);
  if (problem) return [toGraphQLError(problem)];
  const operation = getOperationAST(document, request.operationName);
  if (!operation) {
    return [toGraphQLError(DomainError.badInput('Unable to identify the operation to run'))];
  }
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {}, { maxErrors: 50 });
  if (coerced.errors) return [...coerced.errors];
  return { document, operation };
}

/**
 * Identical subscriptions of one visibility share one execution per event (src/graphql/subscription-groups.ts):
 * the same document, operation and variables, and what the caller can see.
 */
export function subscriptionGroupKey(request: OperationRequest, principal: Principal): string {
  return JSON.stringify([request.query, request.operationName ?? null, request.variables ?? null, visibilityKey(principal)]);
}

/** The root field an operation selects first (a subscription has one): the `field` label of the metrics. */
export function rootFieldOf(operation: OperationDefinitionNode): string {
  return operation.selectionSet.selections.find((selection): selection is FieldNode => selection.kind === Kind.FIELD)?.name.value ?? 'unknown';
}

/** The refusal of a token that is missing, unknown or revoked. */
export function unauthenticatedError(message = 'Missing, unknown or revoked bearer token'): GraphQLError {
  return toGraphQLError(new DomainError('UNAUTHENTICATED', message));
}

/**
 * A failure while setting an operation up (building its context), reported through the formatter, which masks it and
 * logs its cause: SERVICE_UNAVAILABLE when a dependency is down, else INTERNAL_SERVER_ERROR.
 */
export function internalError(error: unknown): GraphQLError {
  return new GraphQLError(INTERNAL_ERROR_MESSAGE, { originalError: error instanceof Error ? error : new Error(String(error)) });
}
