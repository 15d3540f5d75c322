import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import type { GraphQLError, ParseOptions, ValidationContext, ValidationRule } from 'graphql';
import { AppError } from './errors';

/**
 * Limits on every GraphQL document from outside, whichever way it arrives (HTTP or graphql-ws). Sized so the
 * deepest legitimate query of the schema (locations -> edges -> node -> categories -> primaryCategory -> name)
 * fits with room, and introspection (deep by nature) is exempt from depth and cost.
 */
export const operationLimits = {
  maxDepth: 10,
  maxAliases: 15,
  maxTokens: 2000,
  maxCost: 5000,
} as const;

export const parseOptions: ParseOptions = { maxTokens: operationLimits.maxTokens };

/** graphql-js's own wording when maxTokens stops the parser. */
const TOKEN_LIMIT_MESSAGE = /Document contains more that? \d+ tokens/;

function reject(context: ValidationContext | null, error: GraphQLError): void {
  context?.reportError(new AppError('OPERATION_LIMIT_EXCEEDED', error.message.replace(/^Syntax Error: /, '')));
}

const armor = { propagateOnRejection: false, onReject: [reject], exposeLimits: true };

export const limitRules: ValidationRule[] = [
  maxDepthRule({ ...armor, n: operationLimits.maxDepth, ignoreIntrospection: true, flattenFragments: true }),
  maxAliasesRule({ ...armor, n: operationLimits.maxAliases }),
  costLimitRule({
    ...armor,
    maxCost: operationLimits.maxCost,
    objectCost: 2,
    scalarCost: 1,
    depthCostFactor: 1.5,
    ignoreIntrospection: true,
  }),
];

/** A parse error caused by the token limit is an operation-limit error, not a syntax error. */
export function isTokenLimitError(error: GraphQLError): boolean {
  return TOKEN_LIMIT_MESSAGE.test(error.message);
}
