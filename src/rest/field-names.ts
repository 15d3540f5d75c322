import { Kind, type GraphQLSchema, type OperationDefinitionNode, type ValueNode } from 'graphql';
import { fieldProblemsMessage, pathText, type DomainErrorData } from '../errors/domain-error';
import type { RestRoute } from './route';
import { preparedVariables, restName, type PreparedVariable } from './variables';

/**
 * Refused input fields in the route's own names (docs/decisions.md, "Errors name the fields the caller sent"). A
 * refusal names a field by its path in the arguments of the operation's root field (`input.params.summary`); the
 * route table says where each variable is read from, so the REST name follows from it: the argument's variable, the
 * name it is read under, then the REST names of the fields below (`params.summary`, `location_id`,
 * `Idempotency-Key`). The one place REST renames GraphQL paths.
 */

export type RestFieldNamer = (path: readonly (string | number)[]) => string;

/** Where in the root fields' arguments each variable stands: `['where', 'id']` -> `accountId`. */
function variablePlaces(operation: OperationDefinitionNode): { at: string[]; variable: string }[] {
  const places: { at: string[]; variable: string }[] = [];
  const visit = (value: ValueNode, at: string[]) => {
    if (value.kind === Kind.VARIABLE) places.push({ at, variable: value.name.value });
    if (value.kind === Kind.OBJECT) for (const field of value.fields) visit(field.value, [...at, field.name.value]);
  };
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    for (const argument of selection.arguments ?? []) visit(argument.value, [argument.name.value]);
  }
  return places;
}

/** Built once per route at start-up. A path no variable of the route stands at keeps its GraphQL spelling. */
export function restFieldNamer(schema: GraphQLSchema, route: RestRoute, operation: OperationDefinitionNode): RestFieldNamer {
  const variables = new Map<string, PreparedVariable>(preparedVariables(schema, route, operation).map((variable) => [variable.name, variable]));
  const places = variablePlaces(operation).flatMap(({ at, variable }) => {
    const prepared = variables.get(variable);
    return prepared ? [{ at, variable: prepared }] : [];
  });
  return (path) => {
    const place = places.find(({ at }) => at.every((segment, index) => path[index] === segment));
    return place ? restName(place.variable, path.slice(place.at.length)) : pathText(path);
  };
}

/** An error's message in the route's names: its refused fields renamed; any other message as it is. */
export function restMessage(message: string, data: DomainErrorData, nameOf: RestFieldNamer): string {
  return data.fields?.length ? fieldProblemsMessage(data.fields, nameOf) : message;
}
