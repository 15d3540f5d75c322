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
import { isVerbatim, readsEnumByValue, restFieldName, type RestNaming } from './names';
import type { RestRoute, ValueSource } from './route';

/**
 * A route's variables, read from the request and coerced by graphql-js itself against the operation's variable
 * types, after a check that each value has the JSON type its GraphQL type stands for: docs/decisions.md, "REST
 * input". A bad value becomes a 400 in the REST names the caller used (`params.topicType`, `per_page`), worked out
 * from the problem's structured path and the schema's type there: never a GraphQL type or variable name.
 */

export interface PreparedVariable {
  name: string;
  source: ValueSource;
  type: GraphQLInputType;
  checkJsonType: JsonTypeCheck | undefined;
}

export type VariableReader = (request: FastifyRequest) => Record<string, unknown>;

/** A path, query or header value as one text: a query parameter sent several times is refused, never one of them picked. */
function singleText(value: unknown, name: string): string | undefined {
  if (Array.isArray(value)) throw DomainError.badInput(`${name} must be sent once (it was sent ${value.length} times)`);
  if (value === undefined || value === null) return undefined;
  // Fastify gives path, query and header values as text; anything else (a parsed object) is written as JSON.
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * `account_id[]=…` or `account_id[x]=…` for a parameter the route reads: the bracket forms of other frameworks'
 * query parsers, which ours reads as another name. Refused naming it, rather than taken as the parameter's absence.
 */
function refuseBracketForms(query: Record<string, unknown>, names: ReadonlySet<string>): void {
  for (const key of Object.keys(query)) {
    const bracket = key.indexOf('[');
    if (bracket > 0 && names.has(key.slice(0, bracket))) {
      const name = key.slice(0, bracket);
      throw DomainError.badInput(`${key} is not a parameter: send ${name} once, as ${name}=<value>`);
    }
  }
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
      const text = singleText(bag[source.from === 'header' ? source.name.toLowerCase() : source.name], source.name);
      if (text === undefined || text === '') return undefined;
      return fromText(text, variable.type);
    }
    case 'body':
      return fromRestNames(bodyObject(request)[source.name], variable.type, {}, false, source.name);
    case 'bodyFields': {
      const requestBody = bodyObject(request);
      const input: Record<string, unknown> = {};
      const inputType = getNamedType(variable.type);
      const naming = source.naming ?? {};
      for (const [inputField, restName] of Object.entries(source.fields)) {
        if (!(restName in requestBody)) continue;
        const field = isInputObjectType(inputType) ? inputType.getFields()[inputField] : undefined;
        input[inputField] = field
          ? fromRestNames(requestBody[restName], field.type, naming, isVerbatim(naming, inputType.name, inputField), restName)
          : requestBody[restName];
      }
      return input;
    }
  }
}

/**
 * A body value with the REST names of its nested input objects turned into the GraphQL names (the reverse of the
 * record rule, src/rest/names.ts). A name that is no field's REST name is refused here, under the name sent: passed
 * on, it could be taken for a GraphQL name (`openDay` for `open_day`). Values are left for `jsonTypeCheck` and the
 * coercion to judge.
 */
function fromRestNames(value: unknown, type: GraphQLInputType, naming: RestNaming, verbatim: boolean, where: string): unknown {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (!verbatim && typeof value === 'string' && isEnumType(inner) && readsEnumByValue(naming, inner.name)) {
    // graphql-js reads names: a value becomes its name; a name is taken as sent.
    return inner.getValues().find((enumValue) => enumValue.value === value)?.name ?? value;
  }
  if (verbatim || value === null || typeof value !== 'object') return value;
  if (isListType(inner)) {
    return Array.isArray(value) ? value.map((item, index) => fromRestNames(item, inner.ofType, naming, false, `${where}[${index}]`)) : value;
  }
  if (!isInputObjectType(inner) || Array.isArray(value)) return value;
  const byRestName = new Map(Object.keys(inner.getFields()).map((name) => [restFieldName(naming, inner.name, name), name]));
  const converted: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const name = byRestName.get(key);
    if (name === undefined) throw DomainError.badInput(`${where}.${key} is not a known field`);
    converted[name] = fromRestNames(item, inner.getFields()[name]!.type, naming, isVerbatim(naming, inner.name, name), `${where}.${key}`);
  }
  return converted;
}

/** The JSON type each built-in scalar stands for (an enum: a string). Other scalars (JSON) are judged by their own parsing. */
const JSON_TYPE_OF_SCALAR: Readonly<Record<string, 'number' | 'string' | 'boolean'>> = {
  Int: 'number',
  Float: 'number',
  String: 'string',
  ID: 'string',
  Boolean: 'boolean',
};

/** The path (below the value) of the first value of a JSON type other than the one its type stands for, or undefined. */
type JsonTypeCheck = (value: unknown) => (string | number)[] | undefined;

/**
 * The check of values of `type`, built once per variable at start-up (a request pays only for walking its value);
 * undefined where any JSON value passes (the JSON scalar), so a list of those is not walked at all. Null and absent
 * values pass (whether one may be null is the coercion's to say), as do fields no type has (the coercion names
 * them). The path is built only for the value found.
 */
function jsonTypeCheck(type: GraphQLInputType): JsonTypeCheck | undefined {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    const checkItem = jsonTypeCheck(inner.ofType);
    return (value) => {
      if (value === null || value === undefined) return undefined;
      if (!Array.isArray(value)) return [];
      if (checkItem) {
        for (let index = 0; index < value.length; index += 1) {
          const stray = checkItem(value[index]);
          if (stray) return [index, ...stray];
        }
      }
      return undefined;
    };
  }
  if (isInputObjectType(inner)) {
    // Built on first use: an input type may contain itself.
    let checkField: Map<string, JsonTypeCheck | undefined> | undefined;
    return (value) => {
      if (value === null || value === undefined) return undefined;
      if (typeof value !== 'object' || Array.isArray(value)) return [];
      checkField ??= new Map(Object.values(inner.getFields()).map((field) => [field.name, jsonTypeCheck(field.type)]));
      for (const [key, item] of Object.entries(value)) {
        const stray = checkField.get(key)?.(item);
        if (stray) return [key, ...stray];
      }
      return undefined;
    };
  }
  const expected = isEnumType(inner) ? 'string' : JSON_TYPE_OF_SCALAR[inner.name];
  if (expected === undefined) return undefined;
  return (value) => (value === null || value === undefined || typeof value === expected ? undefined : []);
}

function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((current, segment) => (current as Record<string | number, unknown> | undefined)?.[segment], value);
}

/** The REST name of a place in a variable: the source's own name, then the REST names of the fields below it. */
export function restName(variable: PreparedVariable, path: readonly (string | number)[]): string {
  const { source } = variable;
  const naming = source.from === 'bodyFields' ? (source.naming ?? {}) : {};
  let type: GraphQLInputType | undefined = variable.type;
  let name: string;
  let rest = path;
  let verbatim = source.from !== 'bodyFields';
  if (source.from === 'bodyFields') {
    const [first, ...others] = path;
    if (first === undefined) return 'the request body';
    name = source.fields[String(first)] ?? String(first);
    const parent = getNamedType(variable.type);
    verbatim = isInputObjectType(parent) && isVerbatim(naming, parent.name, String(first));
    type = typeAt(variable.type, [first]);
    rest = others;
  } else {
    name = source.name;
  }
  for (const segment of rest) {
    const inner = type && (isNonNullType(type) ? type.ofType : type);
    if (typeof segment === 'number') {
      name = `${name}[${segment}]`;
      type = inner && isListType(inner) ? inner.ofType : undefined;
      continue;
    }
    const parent = inner && isInputObjectType(inner) ? inner : undefined;
    name = `${name}.${verbatim || !parent ? segment : restFieldName(naming, parent.name, segment)}`;
    verbatim ||= parent !== undefined && isVerbatim(naming, parent.name, segment);
    type = parent?.getFields()[segment]?.type;
  }
  return name;
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
    // Text sources take the enum's values (`app`); JSON bodies its names, as graphql-js coerces them, or both where
    // the route reads the enum by its values (each name beside its value).
    const fromTextSource = path.length === 0 && variable.source.from !== 'bodyFields' && variable.source.from !== 'body';
    const byValue = variable.source.from === 'bodyFields' && readsEnumByValue(variable.source.naming ?? {}, inner.name);
    const allowed = inner.getValues().flatMap((enumValue) => {
      const value = typeof enumValue.value === 'string' ? enumValue.value : enumValue.name;
      if (byValue) return value === enumValue.name ? [value] : [enumValue.name, value];
      return [fromTextSource ? value : enumValue.name];
    });
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

/** REST names of the required fields a request left out: required variables, and required fields of body inputs. */
function missingFields(variables: readonly PreparedVariable[], values: Record<string, unknown>): string[] {
  return variables.flatMap((variable) => {
    if (!isNonNullType(variable.type)) return [];
    const value = values[variable.name];
    // An empty text is no value either (`?location_id=` reads as absent too).
    const absent = (item: unknown) => item === undefined || item === null || (typeof item === 'string' && item.trim() === '');
    if (variable.source.from !== 'bodyFields') return absent(value) ? [restName(variable, [])] : [];
    const inputType = getNamedType(variable.type);
    if (!isInputObjectType(inputType) || typeof value !== 'object' || value === null) return [];
    return Object.values(inputType.getFields())
      .filter((field) => isNonNullType(field.type) && field.defaultValue === undefined)
      .filter((field) => absent((value as Record<string, unknown>)[field.name]))
      .map((field) => restName(variable, [field.name]));
  });
}

/** The variables a route reads: their types in its operation, and where each is read from. */
export function preparedVariables(schema: GraphQLSchema, route: RestRoute, operation: OperationDefinitionNode): PreparedVariable[] {
  const variables: PreparedVariable[] = (operation.variableDefinitions ?? []).flatMap((definition) => {
    const name = definition.variable.name.value;
    const source = route.variables[name];
    if (!source) return [];
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!type) throw new Error(`Route ${route.method} ${route.path}: no input type for $${name}`);
    return [{ name, source, type, checkJsonType: jsonTypeCheck(type) }];
  });
  // The operation's own list: a route must not read a variable its operation does not declare.
  for (const name of Object.keys(route.variables)) {
    if (!variables.some((variable) => variable.name === name)) throw new Error(`Route ${route.method} ${route.path}: $${name} is not a variable of its operation`);
  }
  return variables;
}

/** Prepared once per route at start-up: the variable types of its operation, and where each is read from. */
export function prepareVariables(schema: GraphQLSchema, route: RestRoute, operation: OperationDefinitionNode): VariableReader {
  const variables = preparedVariables(schema, route, operation);

  // Every query parameter the route reads, its field selection's too: each is sent once, under its own name.
  const queryNames = new Set([
    ...variables.flatMap(({ source }) => (source.from === 'query' ? [source.name] : [])),
    ...(route.payload.fieldSelection ? [route.payload.fieldSelection.parameter] : []),
  ]);

  return (request) => {
    const values: Record<string, unknown> = {};
    const query = (request.query ?? {}) as Record<string, unknown>;
    refuseBracketForms(query, queryNames);
    for (const name of queryNames) singleText(query[name], name);
    const sent = variables.map((variable) => ({ variable, value: read(request, variable) }));
    if (route.missingFieldsError) {
      const missing = missingFields(variables, Object.fromEntries(sent.map(({ variable, value }) => [variable.name, value])));
      if (missing.length > 0) throw new DomainError('MISSING_FIELDS', `Missing required fields: ${missing.join(', ')}`, { missingFields: missing });
    }
    for (const { variable, value } of sent) {
      if (value === undefined && !isNonNullType(variable.type)) continue;
      const stray = variable.checkJsonType?.(value);
      if (stray) throw DomainError.badInput(describe(variable, stray, valueAt(value, stray)));
      // Coerced here only to be judged (execute coerces again). The first problem is the one reported, and it ends
      // the coercion: a list of 100,000 bad items must not cost 100,000 errors.
      coerceInputValue(value, variable.type, (path, invalidValue) => {
        throw DomainError.badInput(describe(variable, path, invalidValue));
      });
      values[variable.name] = value;
    }
    return values;
  };
}
