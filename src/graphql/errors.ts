import { GraphQLError } from 'graphql';
import type { DomainError } from '../errors/domain-error';

/**
 * The GraphQL side of the error catalogue (src/errors/domain-error.ts). A DomainError thrown by a resolver reaches
 * the formatter wrapped by graphql-js; where GraphQL wants a GraphQLError itself (validation rules, graphql-ws's
 * onSubscribe, Apollo's request hooks) it is wrapped here, keeping the DomainError as `originalError` so the one
 * formatter (format-error.ts) classifies it the same way.
 */
export function toGraphQLError(error: DomainError, options: { httpStatus?: number } = {}): GraphQLError {
  return new GraphQLError(error.message, {
    originalError: error,
    // Apollo answers errors raised before execution with this status (its default would be 500).
    extensions: { code: error.code, ...(options.httpStatus ? { http: { status: options.httpStatus } } : {}) },
  });
}
