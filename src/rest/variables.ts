import type { FastifyRequest } from 'fastify';
import {
  coerceInputValue,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { DomainError } from '../errors/domain-error';
import type { RestRoute, ValueSource } from './route';

/**
 * A route's variables, read from the request and coerced by graphql-js itself against the operation's variable
 * types. A bad value becomes a 400 in the REST names the caller used (`params.topicType`, `per_page`), worked out
 * from the structured path of the problem and the schema's type there: never a GraphQL type or variable name.
 */

interface PreparedVariable {
  name: string;
  source: ValueSource;
  type: GraphQLInputType;
}

export type VariableReader = (request: FastifyRequest) => Record<string, unknown>;

function firstText(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.length > 0 ? String(value[0]) : undefined;
  return value === undefined || value === null ? undefined : String(value);
}

function bodyObject(request: FastifyRequest): Record<string, unknown> {
  const { body } = request;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw DomainError.badInput('The request body must be a JSON object');
  return body as Record<string, unknown>;
}

/**
 * Text from a path, query or header, as the JSON value the variable's type expects where it reads as one (numbers,
 * booleans, lists); anything else stays text, for the coercion to refuse with a clear message.
 */
function fromText(text: string, type: GraphQLInputType): unknown {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return text.split(',').map((item) => fromText(item.trim(), inner.ofType));
  if (isEnumType(inner)) return inner.getValues().find((enumValue) => enumValue.value === text)?.name ?? text;
  const named = getNamedType(inner).name;
  if ((named === 'Int' || named === 'Float') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (named === 'Boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

function read(request: FastifyRequest, variable: PreparedVariable): unknown {
  const { source } = variable;
  switch (source.from) {
    case 'path':
    case 'query':
    case 'header': {
      const bag = (source.from === 'path' ? request.params : source.from === 'query' ? request.query : request.headers) as Record<string, unknown>;
      const text = firstText(bag[source.from === 'header' ? source.name.toLowerCase() : source.name]);
      if (text === undefined || text === '') return undefined;
      return fromText(text, variable.type);
    }
    case 'body':
      return bodyObject(request)[source.name];
    case 'bodyFields': {
      const requestBody = bodyObject(request);
      const input: Record<string, unknown> = {};
      for (const [inputField, restName] of Object.entries(source.fields)) {
        if (restName in requestBody) input[inputField] = requestBody[restName];
      }
      return input;
    }
  }
}

/** The REST name of a place in a variable: the source's own name, then the body's field names as written. */
function restName(variable: PreparedVariable, path: readonly (string | number)[]): string {
  const { source } = variable;
  const [first, ...rest] = path;
  const head =
    source.from === 'bodyFields' ? (first === undefined ? 'the request body' : (source.fields[String(first)] ?? String(first))) : source.name;
  const tail = source.from === 'bodyFields' ? rest : path;
  return tail.reduce<string>((name, segment) => (typeof segment === 'number' ? `${name}[${segment}]` : `${name}.${segment}`), head);
}

/** The input type found at `path` inside `type` (list items by index, input object fields by name). */
function typeAt(type: GraphQLInputType, path: readonly (string | number)[]): GraphQLInputType | undefined {
  let current: GraphQLInputType | undefined = type;
  for (const segment of path) {
    if (!current) return undefined;
    const inner: GraphQLInputType = isNonNullType(current) ? current.ofType : current;
    if (typeof segment === 'number') current = isListType(inner) ? inner.ofType : undefined;
    else current = isInputObjectType(inner) ? inner.getFields()[segment]?.type : undefined;
  }
  return current;
}

/** What is wrong with `value` where `type` was expected, in REST words. */
function describe(variable: PreparedVariable, path: readonly (string | number)[], value: unknown): string {
  const type = typeAt(variable.type, path);
  const where = restName(variable, path);
  if (!type) return `${where} is not a known field`;
  if (value === undefined || value === null) return isNonNullType(type) ? `${where} is required` : `Invalid value for ${where}`;
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return `${where} must be a list`;
  if (isInputObjectType(inner)) {
    if (typeof value !== 'object' || Array.isArray(value)) return `${where} must be an object`;
    const fields = inner.getFields();
    const missing = Object.values(fields).find((field) => isNonNullType(field.type) && field.defaultValue === undefined && !(field.name in value));
    if (missing) return `${restName(variable, [...path, missing.name])} is required`;
    const unknown = Object.keys(value).find((key) => !(key in fields));
    if (unknown) return `${restName(variable, [...path, unknown])} is not a known field`;
    return `Invalid value for ${where}`;
  }
  if (isEnumType(inner)) {
    // Text sources take the enum's values (`app`); JSON bodies its names, as graphql-js coerces them.
    const fromTextSource = path.length === 0 && variable.source.from !== 'bodyFields' && variable.source.from !== 'body';
    const allowed = inner.getValues().map((enumValue) => (fromTextSource && typeof enumValue.value === 'string' ? enumValue.value : enumValue.name));
    return `${where} must be one of ${allowed.join(', ')}`;
  }
  switch (inner.name) {
    case 'Int':
      return `${where} must be an integer`;
    case 'Float':
      return `${where} must be a number`;
    case 'Boolean':
      return `${where} must be true or false`;
    case 'String':
    case 'ID':
      return `${where} must be a string`;
    default:
      return `Invalid value for ${where}`;
  }
}

/** Prepared once per route at start-up: the variable types of its operation, and where each is read from. */
export function prepareVariables(schema: GraphQLSchema, route: RestRoute, operation: OperationDefinitionNode): VariableReader {
  const variables: PreparedVariable[] = (operation.variableDefinitions ?? []).flatMap((definition) => {
    const name = definition.variable.name.value;
    const source = route.variables[name] as ValueSource | undefined;
    if (!source) return [];
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!type) throw new Error(`Route ${route.method} ${route.path}: no input type for $${name}`);
    return [{ name, source, type }];
  });
  // The operation's own list: a route must not read a variable its operation does not declare.
  for (const name of Object.keys(route.variables)) {
    if (!variables.some((variable) => variable.name === name)) throw new Error(`Route ${route.method} ${route.path}: $${name} is not a variable of its operation`);
  }

  return (request) => {
    const values: Record<string, unknown> = {};
    for (const variable of variables) {
      const value = read(request, variable);
      if (value === undefined && !isNonNullType(variable.type)) continue;
      let problem: string | undefined;
      // Coerced here only to be judged (execute coerces again); the first problem is the one reported.
      coerceInputValue(value, variable.type, (path, invalidValue) => {
        problem ??= describe(variable, path, invalidValue);
      });
      if (problem) throw DomainError.badInput(problem);
      values[variable.name] = value;
    }
    return values;
  };
}
