import type { ApolloServerPlugin } from '@apollo/server';
import { BREAK, visit, type ASTVisitor, type DocumentNode, type ValidationContext, type ValidationRule } from 'graphql';
import { describeInputProblem, findInputProblem, textProblem } from '../shared/input-text';
import type { Context } from './context';
import { DomainError } from '../errors/domain-error';
import { toGraphQLError } from './errors';
import { limitRules } from './limits';

/**
 * Checks every GraphQL request makes before it runs, whichever transport carries it: input text PostgreSQL could
 * not store (literals here, variables in `variablesProblem`) and, in production, introspection without a token.
 */

/** String literals of a document follow the same text rule as every other input. */
export const inputTextRule: ValidationRule = (context: ValidationContext): ASTVisitor => ({
  StringValue(node) {
    const problem = textProblem(node.value);
    if (problem) context.reportError(toGraphQLError(DomainError.badInput(describeInputProblem({ field: 'A string literal', ...problem }))));
  },
});

/** The validation rules every GraphQL document from outside goes through (HTTP and WebSocket alike). */
export const requestValidationRules: ValidationRule[] = [...limitRules, inputTextRule];

/** A BAD_USER_INPUT error naming the variable path (`$input.params.summary`), or undefined when all are fine. */
export function variablesProblem(variables: Record<string, unknown> | null | undefined): DomainError | undefined {
  for (const [name, value] of Object.entries(variables ?? {})) {
    const problem = findInputProblem(value, `$${name}`);
    if (problem) return DomainError.badInput(describeInputProblem(problem));
  }
  return undefined;
}

/** Whether a document asks for the schema (`__schema` or `__type`); `__typename` is not introspection of it. */
export function asksForSchema(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/**
 * The checks above on GraphQL over HTTP (POST and GET). graphql-ws runs the same `variablesProblem` in its
 * onSubscribe, and its sockets are always authenticated.
 */
export function requestGuardsPlugin(options: { schemaNeedsToken: boolean }): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, contextValue }) {
          const problem = variablesProblem(request.variables);
          if (problem) throw toGraphQLError(problem, { httpStatus: 400 });
          if (options.schemaNeedsToken && !contextValue.principal && asksForSchema(document)) {
            throw toGraphQLError(new DomainError('UNAUTHENTICATED', 'Introspection needs a bearer token'), { httpStatus: 401 });
          }
        },
      };
    },
  };
}
