import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import {
  getNamedType,
  isCompositeType,
  isObjectType,
  isInterfaceType,
  Kind,
  type ASTVisitor,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLCompositeType,
  type GraphQLField,
  type ParseOptions,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { pageSizeMaxOf } from './relay-connection';
import { DomainError } from '../errors/domain-error';
import { toGraphQLError } from './errors';

/**
 * Limits on every GraphQL document from outside, whichever way it arrives (HTTP POST, HTTP GET, graphql-ws). Each
 * value and why it is that: docs/graphql-limits.md, "The limits".
 */
export const operationLimits = {
  maxDepth: 10,
  maxAliases: 15,
  maxTokens: 2000,
  maxCost: 20_000,
} as const;

export const parseOptions: ParseOptions = { maxTokens: operationLimits.maxTokens };

/** graphql-js's own wording when maxTokens stops the parser. */
const TOKEN_LIMIT_MESSAGE = /Document contains more that? \d+ tokens/;

function reject(context: ValidationContext | null, error: GraphQLError): void {
  context?.reportError(toGraphQLError(new DomainError('OPERATION_LIMIT_EXCEEDED', error.message.replace(/^Syntax Error: /, ''))));
}

const armor = { propagateOnRejection: false, onReject: [reject], exposeLimits: true };

/**
 * How many items a field can return: for a paginated field (an argument marked `PageSize`) its page size, at
 * most that argument's own maximum (100 for `first`, 250 for `perPage` of location pages); else 1.
 */
function pageSize(node: FieldNode, definition: GraphQLField<unknown, unknown>): number {
  const sizeArgument = definition.args.find((arg) => pageSizeMaxOf(arg) !== undefined);
  if (!sizeArgument) return 1;
  const max = pageSizeMaxOf(sizeArgument)!;
  const argument = node.arguments?.find((arg) => arg.name.value === sizeArgument.name);
  let size: number;
  if (!argument) size = typeof sizeArgument.defaultValue === 'number' ? sizeArgument.defaultValue : max;
  else if (argument.value.kind === Kind.INT) size = Number.parseInt(argument.value.value, 10);
  // A variable's value is unknown until execution: count the largest page it may ask for.
  else size = max;
  // Above its maximum the resolver answers BAD_USER_INPUT; the cost must not pre-empt that clearer error.
  return Math.min(Math.max(size, 0), max);
}

/**
 * The cost of an operation: the number of field values its response can hold at most (docs/graphql-limits.md,
 * "Cost: 20000"). A variable page size counts as its field's largest page, so a client cannot lower the cost by
 * moving the size into a variable (graphql-armor's cost rule only reads literals).
 */
export function costLimitRule(maxCost: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const schema = context.getSchema();
    // A fragment's cost scales linearly with its multiplier: compute it once per fragment, so a document that
    // spreads fragments inside fragments cannot make this rule itself exponential.
    const fragmentCosts = new Map<string, number>();
    const inProgress = new Set<string>();

    const fragmentCost = (fragment: FragmentDefinitionNode): number => {
      const name = fragment.name.value;
      const known = fragmentCosts.get(name);
      if (known !== undefined) return known;
      // A fragment cycle is NoFragmentCyclesRule's error; here it only must not recurse forever.
      if (inProgress.has(name)) return 0;
      const type = schema.getType(fragment.typeCondition.name.value);
      inProgress.add(name);
      const cost = isCompositeType(type) ? selectionCost(fragment.selectionSet, type, 1) : 0;
      inProgress.delete(name);
      fragmentCosts.set(name, cost);
      return cost;
    };

    const selectionCost = (selectionSet: SelectionSetNode, parent: GraphQLCompositeType, multiplier: number): number => {
      let cost = 0;
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          const name = selection.name.value;
          if (name === '__schema' || name === '__type') continue;
          if (name === '__typename') {
            cost += multiplier;
            continue;
          }
          const definition = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
          // An unknown field is FieldsOnCorrectTypeRule's error.
          if (!definition) continue;
          cost += multiplier;
          const fieldType = getNamedType(definition.type);
          if (selection.selectionSet && isCompositeType(fieldType)) {
            cost += selectionCost(selection.selectionSet, fieldType, multiplier * pageSize(selection, definition));
          }
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
          if (isCompositeType(type)) cost += selectionCost(selection.selectionSet, type, multiplier);
        } else {
          const fragment = context.getFragment(selection.name.value);
          if (fragment) cost += multiplier * fragmentCost(fragment);
        }
      }
      return cost;
    };

    return {
      OperationDefinition(operation) {
        const root = schema.getRootType(operation.operation);
        if (!root) return;
        const cost = selectionCost(operation.selectionSet, root, 1);
        if (cost > maxCost) {
          context.reportError(
            toGraphQLError(new DomainError('OPERATION_LIMIT_EXCEEDED', `Query cost limit of ${maxCost} exceeded, found ${cost}.`)),
          );
        }
      },
    };
  };
}

export const limitRules: ValidationRule[] = [
  maxDepthRule({ ...armor, n: operationLimits.maxDepth, ignoreIntrospection: true, flattenFragments: true }),
  maxAliasesRule({ ...armor, n: operationLimits.maxAliases }),
  costLimitRule(operationLimits.maxCost),
];

/** A parse error caused by the token limit is an operation-limit error, not a syntax error. */
export function isTokenLimitError(error: GraphQLError): boolean {
  return TOKEN_LIMIT_MESSAGE.test(error.message);
}

/** What clients read for it, worded like the other limits (graphql-js's own text has a typo: "more that"). */
export const TOKEN_LIMIT_CLIENT_MESSAGE = `Token limit of ${operationLimits.maxTokens} exceeded.`;
