import {
  astFromValue,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  TypeInfo,
  typeFromAST,
  valueFromAST,
  valueFromASTUntyped,
  visit,
  visitWithTypeInfo,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { isVerbatim, readsEnumByValue, restFieldName, type RestNaming } from './names';
import { enumSchema, orNull, restDescription, type SchemaComponents } from './openapi-components';
import type { JsonSchema } from './record';
import type { RestRoute, ValueSource } from './route';

/**
 * The types of what a route reads (parameters and bodies), derived from its operation's variables as
 * src/rest/variables.ts reads and coerces them, so the document cannot say other than the route does. The rules:
 * docs/openapi.md, "Types of what a route reads".
 */

const SCALARS: Readonly<Record<string, JsonSchema>> = {
  ID: { type: 'string' },
  String: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
};

export interface OperationVariable {
  type: GraphQLInputType;
  /** The value used when the variable is absent, as GraphQL holds it (an enum's internal value). */
  defaultValue?: unknown;
  /** The description of the argument the variable is passed to. */
  description?: string;
}

/** The operation's variables: their types, and the default and description of the argument each is passed to. */
export function operationVariables(schema: GraphQLSchema, route: RestRoute, operation: OperationDefinitionNode): Map<string, OperationVariable> {
  const variables = new Map<string, OperationVariable>();
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!type) throw new Error(`Route ${route.method} ${route.path}: no input type for $${definition.variable.name.value}`);
    const defaultValue = definition.defaultValue ? valueFromAST(definition.defaultValue, type) : undefined;
    variables.set(definition.variable.name.value, { type, ...(defaultValue === undefined ? {} : { defaultValue }) });
  }
  const typeInfo = new TypeInfo(schema);
  visit(
    route.operation,
    visitWithTypeInfo(typeInfo, {
      Argument(node) {
        if (node.value.kind !== Kind.VARIABLE) return;
        const variable = variables.get(node.value.name.value);
        const argument = typeInfo.getArgument();
        if (!variable || !argument) return;
        if (variable.description === undefined && argument.description) variable.description = argument.description;
        if (variable.defaultValue === undefined && argument.defaultValue !== undefined) variable.defaultValue = argument.defaultValue;
      },
    }),
  );
  return variables;
}

/** A default value as REST writes it (an enum by its value in text, by its name in JSON); undefined if none can be. */
function restDefault(value: unknown, type: GraphQLInputType, form: 'values' | 'names'): unknown {
  if (value === undefined || value === null) return undefined;
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isEnumType(inner)) {
    const enumValue = inner.getValues().find((candidate) => candidate.value === value);
    if (!enumValue) return undefined;
    return form === 'values' && typeof enumValue.value === 'string' ? enumValue.value : enumValue.name;
  }
  const ast = astFromValue(value, type);
  return ast ? valueFromASTUntyped(ast) : undefined;
}

function withDefault(schema: JsonSchema, value: unknown, type: GraphQLInputType, form: 'values' | 'names'): JsonSchema {
  const written = restDefault(value, type, form);
  if (written === undefined) return schema;
  // A $ref takes siblings in OpenAPI 3.1.
  return { ...schema, default: written };
}

/** A value read from text (a path, query or header value): its JSON type as the variable reader reads the text. */
export function textValueSchema(components: SchemaComponents, type: GraphQLInputType, where: string): JsonSchema {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return { type: 'array', items: textValueSchema(components, inner.ofType, where) };
  if (isEnumType(inner)) return enumSchema(components, inner, 'values', where);
  if (isInputObjectType(inner)) throw new Error(`${where}: ${inner.name} is an input object, which no path, query or header can carry`);
  // Other scalars (JSON) get the text itself.
  return { ...(SCALARS[inner.name] ?? { type: 'string' }) };
}

/** A value of a JSON body, at any depth: nullable where its type is. */
export function bodyValueSchema(components: SchemaComponents, type: GraphQLInputType, naming: RestNaming, verbatim: boolean, where: string): JsonSchema {
  if (isNonNullType(type)) return nonNullBodyValue(components, type.ofType, naming, verbatim, where);
  return orNull(nonNullBodyValue(components, type, naming, verbatim, where));
}

function nonNullBodyValue(components: SchemaComponents, type: GraphQLInputType, naming: RestNaming, verbatim: boolean, where: string): JsonSchema {
  if (isListType(type)) return { type: 'array', items: bodyValueSchema(components, type.ofType, naming, verbatim, where) };
  if (isEnumType(type)) return enumSchema(components, type, readsEnumByValue(naming, type.name) ? 'values' : 'names', where);
  if (isInputObjectType(type)) return inputObjectSchema(components, type, naming, verbatim, where);
  // Other scalars (JSON): any JSON value.
  return { ...(SCALARS[(type as { name: string }).name] ?? {}) };
}

/** The REST name of an input field, and whether the value below it is the provider's own body (names kept). */
function restField(naming: RestNaming, type: GraphQLInputObjectType, field: string, verbatim: boolean): { name: string; verbatim: boolean } {
  return {
    name: verbatim ? field : restFieldName(naming, type.name, field),
    verbatim: verbatim || isVerbatim(naming, type.name, field),
  };
}

function inputFieldSchema(
  components: SchemaComponents,
  field: { type: GraphQLInputType; defaultValue?: unknown; description?: string | null },
  naming: RestNaming,
  verbatim: boolean,
  renames: ReadonlyMap<string, string>,
  where: string,
): JsonSchema {
  let schema = withDefault(bodyValueSchema(components, field.type, naming, verbatim, where), field.defaultValue, field.type, 'names');
  if (field.description) schema = { ...schema, description: restDescription(field.description, renames) };
  return schema;
}

const isRequired = (field: { type: GraphQLInputType; defaultValue?: unknown }) => isNonNullType(field.type) && field.defaultValue === undefined;

/** A nested input object: a component named after its GraphQL type, in the names the body uses below it. */
function inputObjectSchema(components: SchemaComponents, type: GraphQLInputObjectType, naming: RestNaming, verbatim: boolean, where: string): JsonSchema {
  return components.define(type.name, where, () => {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    const fields = Object.values(type.getFields());
    const renames = new Map(fields.map((field) => [field.name, restField(naming, type, field.name, verbatim).name]));
    for (const field of fields) {
      const rest = restField(naming, type, field.name, verbatim);
      properties[rest.name] = inputFieldSchema(components, field, naming, rest.verbatim, renames, where);
      if (isRequired(field)) required.push(rest.name);
    }
    return {
      type: 'object',
      ...(type.description ? { description: type.description } : {}),
      ...(required.length > 0 ? { required } : {}),
      properties,
      additionalProperties: false,
    };
  });
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
  style?: string;
  explode?: boolean;
}

/** The path, query and header parameters a route reads into its variables, typed by the variables' types. */
export function variableParameters(components: SchemaComponents, route: RestRoute, variables: Map<string, OperationVariable>, where: string): ParameterObject[] {
  return Object.entries(route.variables as Record<string, ValueSource>).flatMap(([name, source]): ParameterObject[] => {
    if (source.from === 'body' || source.from === 'bodyFields') return [];
    const variable = variables.get(name);
    if (!variable) throw new Error(`${where}: $${name} is not a variable of its operation`);
    const schema = withDefault(textValueSchema(components, variable.type, where), variable.defaultValue, variable.type, 'values');
    const required = source.from === 'path' || Boolean(source.required) || isRequired(variable);
    const description = source.description ?? variable.description;
    const list = isListType(isNonNullType(variable.type) ? variable.type.ofType : variable.type);
    return [
      {
        name: source.name,
        in: source.from,
        required,
        ...(description ? { description } : {}),
        schema,
        // Lists are read comma-separated (`a,b`), and a parameter is sent once.
        ...(list ? { style: 'form', explode: false } : {}),
      },
    ];
  });
}

/** The JSON body a route reads: its fields, typed, the required ones listed; undefined if it reads none. */
export function requestBodySchema(components: SchemaComponents, route: RestRoute, variables: Map<string, OperationVariable>, where: string): JsonSchema | undefined {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, source] of Object.entries(route.variables as Record<string, ValueSource>)) {
    if (source.from !== 'body' && source.from !== 'bodyFields') continue;
    const variable = variables.get(name);
    if (!variable) throw new Error(`${where}: $${name} is not a variable of its operation`);
    if (source.from !== 'bodyFields') {
      properties[source.name] = inputFieldSchema(components, { ...variable, description: source.description ?? variable.description }, {}, false, new Map(), where);
      if (isRequired(variable)) required.push(source.name);
      continue;
    }
    // An input object assembled from body fields: each field under its REST name.
    const input = isNonNullType(variable.type) ? variable.type.ofType : variable.type;
    if (!isInputObjectType(input)) throw new Error(`${where}: $${name} is read from body fields but is no input object`);
    const naming = source.naming ?? {};
    const renames = new Map(Object.entries(source.fields));
    for (const [inputField, restName] of Object.entries(source.fields)) {
      const field = input.getFields()[inputField];
      if (!field) throw new Error(`${where}: ${input.name}.${inputField} is not a field`);
      properties[restName] = inputFieldSchema(components, field, naming, isVerbatim(naming, input.name, inputField), renames, where);
      if (isRequired(field)) required.push(restName);
    }
  }
  if (Object.keys(properties).length === 0) return undefined;
  // Fields the route does not read are ignored, not refused (docs/decisions.md): no additionalProperties here.
  return { type: 'object', ...(required.length > 0 ? { required } : {}), properties };
}
