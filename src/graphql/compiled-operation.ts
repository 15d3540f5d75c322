import {
  execute,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  TokenKind,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { inSpan } from '../observability/trace-context';

/** One operation of a document, ready to run: compiled by graphql-jit, or graphql-js's `execute` where it cannot be. */
export interface CompiledOperation {
  run(contextValue: unknown, variableValues: Record<string, unknown> | undefined): Promise<ExecutionResult>;
  /** Why graphql-jit could not compile it (it then runs on graphql-js), for the caller to log once. */
  fallbackReason?: string;
}

/** graphql-js's `execute` stops coercing variables at 50 errors (a list of 1,000 bad values is one line, not 1,000). */
const VARIABLE_ERRORS_MAX = 50;

/**
 * Compiles one operation of a document once (graphql-jit): each run then pays for resolving its fields, not for
 * walking the document, coercing arguments and checking types field by field. REST's routes and GraphQL over HTTP
 * both run their operations through this, so they answer alike: the same data, the same errors as graphql-js
 * (its variable errors, its error class for resolvers' errors), the same span.
 */
export function compileOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName?: string,
  /** How leaves are written, by scalar name, where a caller wants other than the scalar's own (REST keeps Dates). */
  options: { customSerializers?: Record<string, (value: unknown) => unknown> } = {},
): CompiledOperation {
  const operation = getOperationAST(document, operationName);
  const compiled = compileQuery(schema, document, operationName, options.customSerializers ? { customSerializers: options.customSerializers } : undefined);
  const runOnGraphqlJs = (contextValue: unknown, variableValues: Record<string, unknown> | undefined) =>
    Promise.resolve(execute({ schema, document, operationName, contextValue, variableValues }));
  if (!operation || !isCompiledQuery(compiled)) {
    const reason = isCompiledQuery(compiled) ? `no operation ${operationName ?? '(anonymous)'} in the document` : compiled.errors?.map((e) => e.message).join('; ');
    // graphql-js's execute is spanned by the GraphQL instrumentation itself.
    return { run: runOnGraphqlJs, fallbackReason: reason ?? 'unknown' };
  }
  // graphql-jit runs the operation out of the GraphQL instrumentation's sight: its span is named and described as
  // that instrumentation names and describes graphql-js's execution.
  const name = operation.name?.value;
  const spanName = name ? `${operation.operation} ${name}` : operation.operation;
  const source = document.loc ? sourceWithoutValues(document) : undefined;
  const spanAttributes = {
    'graphql.operation.type': operation.operation,
    ...(name ? { 'graphql.operation.name': name } : {}),
    ...(source !== undefined ? { 'graphql.source': source } : {}),
  };
  const variableDefinitions = operation.variableDefinitions ?? [];
  return {
    run: (contextValue, variableValues) =>
      inSpan(spanName, spanAttributes, async (): Promise<ExecutionResult> => {
        const result = await compiled.query(undefined, contextValue, variableValues ?? {});
        // Only a refusal of the variables answers without data: graphql-js words it (Apollo and the error
        // formatter recognise its messages and nodes), and decides where the two would disagree.
        if (!('data' in result)) {
          const coerced = getVariableValues(schema, variableDefinitions, variableValues ?? {}, { maxErrors: VARIABLE_ERRORS_MAX });
          return coerced.errors ? { errors: coerced.errors } : runOnGraphqlJs(contextValue, variableValues);
        }
        return result.errors ? { ...result, errors: result.errors.map(asGraphqlJsError) } : result;
      }),
  };
}

/**
 * graphql-jit's errors inherit graphql-js's class without its invariants (no `extensions` object, which Apollo's
 * error formatting reads): the same error as graphql-js's `locatedError` makes for a resolver's error, its
 * extensions taken from the cause.
 */
function asGraphqlJsError(error: GraphQLError): GraphQLError {
  if (Object.getPrototypeOf(error) === GraphQLError.prototype) return error;
  // graphql-js's own errors in a field (a null for a non-null field) have an Error of the same text as their cause.
  const originalError = error.originalError ?? (error.path ? new Error(error.message) : undefined);
  const located = new GraphQLError(error.message, { path: error.path, originalError });
  // graphql-js derives these from the field's nodes, which graphql-jit has already turned into locations.
  if (error.locations) Object.defineProperty(located, 'locations', { value: error.locations, enumerable: true, writable: true, configurable: true });
  return located;
}

/** Literal values, which can be personal data, never go into a span. */
const VALUE_TOKENS = new Set<TokenKind>([TokenKind.FLOAT, TokenKind.STRING, TokenKind.INT, TokenKind.BLOCK_STRING]);

/**
 * The document's text with its literal values as `*`, laid out as written: the `graphql.source` attribute the
 * GraphQL instrumentation (@opentelemetry/instrumentation-graphql, `allowValues` off) puts on an execution span.
 */
function sourceWithoutValues(document: DocumentNode): string {
  let source = '';
  let token = document.loc?.startToken.next ?? null;
  let previousLine = 1;
  while (token) {
    let value = VALUE_TOKENS.has(token.kind) ? '*' : (token.value ?? token.kind);
    if (token.kind === TokenKind.STRING) value = `"${value}"`;
    if (token.kind === TokenKind.EOF) value = '';
    let space = '';
    if (token.line > previousLine) {
      source += '\n'.repeat(token.line - previousLine);
      previousLine = token.line;
      space = ' '.repeat(token.column - 1);
    } else if (token.line === token.prev?.line) {
      space = ' '.repeat(token.start - token.prev.end);
    }
    source += space + value;
    token = token.next;
  }
  return source;
}
