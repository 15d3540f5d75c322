import {
  getNullableType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  Kind,
  type DocumentNode,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type GraphQLUnionType,
} from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';
import { DomainError } from '../errors/domain-error';
import { isVerbatim } from './names';
import type { RestRecord, RestRoute } from './route';
import { OperationSelections, recordFieldName } from './selection';

/**
 * The documented REST form of an operation's result, derived from the operation's own selection and the schema's
 * types by one set of rules (docs/rest-records.md, "The record rules") instead of a hand-written presenter and JSON
 * Schema per record. Times reach the record as `Date`s (REST_LEAF_SERIALIZERS), or as graphql-js's ISO strings where
 * a route's operation is not compiled; both are written in the route's unit.
 */

export type JsonSchema = Record<string, unknown>;

interface Shape {
  present(value: unknown): unknown;
  schema: JsonSchema;
}

export interface CompiledRecord {
  present(data: unknown): unknown;
  schema: JsonSchema;
  /** The REST names of the fields of the records listed under `list` in the payload; undefined if there is no such list. */
  itemFields(list: string): string[] | undefined;
}

function orNull(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.enum)) return { ...schema, enum: [...(schema.enum as unknown[]), null] };
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (schema.type === undefined) return schema;
  return { anyOf: [schema, { type: 'null' }] };
}

const SCALAR_SCHEMAS: Record<string, JsonSchema> = {
  ID: { type: 'string' },
  String: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
};

class RecordCompiler {
  constructor(
    readonly selections: OperationSelections,
    private readonly rules: RestRecord,
    private readonly where: string,
  ) {}

  /** `verbatim`: below a verbatim field; `nullsWritten`: below one of `writesNulls` (its unset fields written as null). */
  shape(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, coordinate: string, verbatim: boolean, nullsWritten = false): Shape {
    if (!isNonNullType(type)) {
      const inner = this.nonNullShape(type, selectionSet, coordinate, verbatim, nullsWritten);
      return { present: (value) => (value === null || value === undefined ? null : inner.present(value)), schema: orNull(inner.schema) };
    }
    return this.nonNullShape(type.ofType, selectionSet, coordinate, verbatim, nullsWritten);
  }

  private nonNullShape(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, coordinate: string, verbatim: boolean, nullsWritten: boolean): Shape {
    const nullable = getNullableType(type);
    if (isListType(nullable)) {
      const item = this.shape(nullable.ofType, selectionSet, coordinate, verbatim, nullsWritten);
      return { present: (value) => (value as unknown[]).map((member) => item.present(member)), schema: { type: 'array', items: item.schema } };
    }
    if (isEnumType(nullable)) {
      if (verbatim) return { present: (value) => value, schema: { enum: nullable.getValues().map((v) => v.name) } };
      const values = new Map(nullable.getValues().map((v) => [v.name, typeof v.value === 'string' ? v.value : v.name]));
      return { present: (value) => values.get(value as string) ?? value, schema: { enum: [...values.values()] } };
    }
    if (isScalarType(nullable)) {
      if (nullable.name === 'DateTime' && !verbatim) {
        // An ISO time is written by the serializer (a Date's toJSON is its ISO string): nothing to do here.
        const times = this.rules.timesOf?.[coordinate.split('.')[0]!] ?? this.rules.times;
        return times === 'epochMs'
          ? { present: epochMs, schema: { type: 'integer', description: 'milliseconds since epoch' } }
          : { present: (value) => value, schema: { type: 'string', format: 'date-time' } };
      }
      return { present: (value) => value, schema: SCALAR_SCHEMAS[nullable.name] ?? {} };
    }
    if (isObjectType(nullable)) {
      if (!selectionSet) throw new Error(`${this.where}: ${coordinate} is an object without a selection`);
      return this.objectShape(nullable, selectionSet, verbatim, nullsWritten);
    }
    if (isUnionType(nullable)) {
      if (!selectionSet) throw new Error(`${this.where}: ${coordinate} is a union without a selection`);
      return this.unionShape(nullable, selectionSet, coordinate, verbatim, nullsWritten);
    }
    throw new Error(`${this.where}: ${coordinate} has a type REST records do not support (${String(nullable)})`);
  }

  /**
   * A union (an event's record): each member that a fragment on it selects is written as its own record, by that
   * fragment; the operation selects `__typename` to say which member a value is, and the record leaves it out. A
   * value of a member not selected here is NOT_SELECTED: GraphQL validation wants differing records of one union
   * under different aliases (`post: record { ... on Post {…} }`), which objectShape writes back as one field.
   */
  private unionShape(type: GraphQLUnionType, selectionSet: SelectionSetNode, coordinate: string, verbatim: boolean, nullsWritten: boolean): Shape {
    const typeConditionOf = (selection: SelectionSetNode['selections'][number]) =>
      selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition?.name.value : selection.kind === Kind.FRAGMENT_SPREAD ? this.selections.fragment(selection.name.value)?.typeCondition.name.value : undefined;
    const members = new Map(
      type.getTypes().flatMap((member) => {
        const selections = selectionSet.selections.filter((selection) => typeConditionOf(selection) === member.name);
        return selections.length === 0 ? [] : [[member.name, this.objectShape(member, { kind: Kind.SELECTION_SET, selections }, verbatim, nullsWritten)] as const];
      }),
    );
    return {
      present: (value) => {
        const typename = (value as { __typename?: string }).__typename;
        if (typename === undefined) throw new Error(`${this.where}: ${coordinate} needs __typename selected to be written`);
        return members.get(typename)?.present(value) ?? NOT_SELECTED;
      },
      schema: { oneOf: [...members.values()].map((member) => member.schema) },
    };
  }

  private objectShape(type: GraphQLObjectType, selectionSet: SelectionSetNode, verbatim: boolean, nullsWritten: boolean): Shape {
    const fields = this.selections.fieldsOf(selectionSet).map((node) => {
      const definition = type.getFields()[node.name.value];
      if (!definition) throw new Error(`${this.where}: ${type.name}.${node.name.value} is not a field`);
      const coordinate = `${type.name}.${definition.name}`;
      const key = (node.alias ?? node.name).value;
      const fieldVerbatim = verbatim || isVerbatim(this.rules, type.name, definition.name);
      const fieldNullsWritten = nullsWritten || (this.rules.writesNulls?.includes(coordinate) ?? false);
      // The provider's body leaves unset fields out; so does the document for the fields it marks optional. A verbatim
      // part whose keys the document lists (a scan's client) writes them as null instead.
      const absentWhenNull = (verbatim && !nullsWritten) || (this.rules.absentWhenNull?.includes(coordinate) ?? false);
      const shape = this.shape(definition.type, node.selectionSet, coordinate, fieldVerbatim, fieldNullsWritten);
      const union = isUnionType(getNullableType(definition.type));
      return { key, restName: recordFieldName(this.rules, type, node, definition, verbatim), absentWhenNull, shape, union };
    });
    const properties: Record<string, JsonSchema> = {};
    for (const field of fields) {
      const schema = field.absentWhenNull ? withoutNull(field.shape.schema) : field.shape.schema;
      const earlier = properties[field.restName];
      properties[field.restName] =
        field.union && earlier ? { oneOf: [...(earlier.oneOf as JsonSchema[]), ...(schema.oneOf as JsonSchema[])] } : schema;
    }
    const required = [...new Set(fields.filter((field) => !field.absentWhenNull).map((field) => field.restName))];
    return {
      present: (value) => {
        const source = value as Record<string, unknown>;
        const out: Record<string, unknown> = {};
        for (const field of fields) {
          const fieldValue = source[field.key];
          if (field.absentWhenNull && (fieldValue === null || fieldValue === undefined)) continue;
          const presented = field.shape.present(fieldValue);
          if (presented !== NOT_SELECTED) out[field.restName] = presented;
        }
        return out;
      },
      schema: {
        type: 'object',
        required,
        properties,
        additionalProperties: false,
      },
    };
  }
}

/** A union's value of a member this alias does not select (unionShape): another alias of the field writes it. */
const NOT_SELECTED = Symbol('not selected');

function epochMs(value: unknown): number {
  return value instanceof Date ? value.getTime() : Date.parse(value as string);
}

/**
 * How REST's compiled operations (src/rest/adapter.ts, graphql-jit's `customSerializers`) serialize leaf types
 * instead of the schema's scalar: `DateTime` is checked as the scalar checks it (graphql-scalars' DateTime, which
 * the schema's DateTimeISO formats) and stays a `Date`, so a record writes it in its unit without an ISO string
 * made and parsed back per time. The same values as the scalar's, with the same refusals.
 */
export const REST_LEAF_SERIALIZERS: Record<string, (value: unknown) => unknown> = {
  DateTime: (value) => {
    const date = DateTimeResolver.serialize(value);
    // The scalar's toISOString() refuses a timestamp out of range; so does this.
    if (Number.isNaN(date.getTime())) throw new RangeError('Invalid time value');
    return date;
  },
};

/** A field that is left out when null is never null in the answer. */
function withoutNull(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.enum)) return { ...schema, enum: schema.enum.filter((value) => value !== null) };
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((type) => type !== 'null');
    return { ...schema, type: types.length === 1 ? types[0] : types };
  }
  if (Array.isArray(schema.anyOf) && schema.anyOf.length === 2) return schema.anyOf[0] as JsonSchema;
  return schema;
}

/**
 * Compiled once per route at start-up. A payload at several paths (the branches of an `@include`/`@skip`) is
 * the first one present in the data.
 */
export function compileRecord(schema: GraphQLSchema, document: DocumentNode, rules: RestRecord, where: string): CompiledRecord {
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error(`${where}: no operation`);
  const compiler = new RecordCompiler(new OperationSelections(schema, document, where), rules, where);
  const branches = (typeof rules.at === 'string' ? [rules.at] : rules.at).map((path) => {
    const { field, type, coordinate } = compiler.selections.locate(operation, path);
    const keys = path.split('.');
    return { keys, shape: compiler.shape(type, field.selectionSet, coordinate, false) };
  });
  const valueAt = (data: unknown, keys: readonly string[]): unknown =>
    keys.reduce<unknown>((value, key) => (value === null || value === undefined ? undefined : (value as Record<string, unknown>)[key]), data);

  return {
    present(data) {
      for (const branch of branches) {
        const value = valueAt(data, branch.keys);
        if (value === undefined) continue;
        // The document answers some empty lists with an error (GraphQL's list is simply empty).
        if (rules.emptyList && Array.isArray(value) && value.length === 0) throw new DomainError(rules.emptyList.code, rules.emptyList.message);
        return branch.shape.present(value);
      }
      throw new Error(`${where}: the operation's data has no payload at ${branches.map((b) => b.keys.join('.')).join(' or ')}`);
    },
    schema:
      branches.length === 1
        ? withoutNull(branches[0]!.shape.schema)
        : { oneOf: branches.map((branch) => withoutNull(branch.shape.schema)) },
    itemFields(list) {
      const members = withoutNull(branches[0]!.shape.schema).properties as Record<string, JsonSchema> | undefined;
      const items = members?.[list] ? (withoutNull(members[list]).items as JsonSchema | undefined) : undefined;
      const properties = items?.properties as Record<string, unknown> | undefined;
      return properties ? Object.keys(properties) : undefined;
    },
  };
}

/**
 * A route's success body: its payload in the route's envelope, with the records of the payload named by `name`
 * (/openapi.json's components; the route's serializer takes them as compiled). With a field selection, the listed
 * items need only the fields always kept. One definition for the document and the serializer.
 */
export function successBodySchema(
  route: RestRoute,
  payloadSchema: JsonSchema,
  name: (payload: JsonSchema, rootMayBeShared: boolean) => JsonSchema = (payload) => payload,
): JsonSchema {
  let payload = payloadSchema;
  const selection = route.payload.fieldSelection;
  if (selection) {
    const members = payload.properties as Record<string, JsonSchema>;
    const list = members[selection.list]!;
    payload = {
      ...payload,
      properties: { ...members, [selection.list]: { ...list, items: { ...(list.items as object), required: [...selection.always] } } },
    };
  }
  const envelope = route.envelope ?? 'payload';
  // Only a payload of its own may be a shared record: the other envelopes write its members beside theirs.
  payload = name(payload, envelope === 'payload');
  if (envelope === 'spread') {
    return {
      type: 'object',
      required: ['success', ...((payload.required as string[]) ?? [])],
      properties: { success: { const: true }, ...(payload.properties as object) },
      additionalProperties: false,
    };
  }
  if (typeof envelope === 'object') {
    const constants = envelope.bare;
    return {
      type: 'object',
      required: [...((payload.required as string[]) ?? []), ...Object.keys(constants)],
      properties: { ...(payload.properties as object), ...Object.fromEntries(Object.entries(constants).map(([key, value]) => [key, { const: value }])) },
      additionalProperties: false,
    };
  }
  return { type: 'object', required: ['success', 'payload'], properties: { success: { const: true }, payload }, additionalProperties: false };
}

/**
 * The schema of the serializer a route writes its success body with (Fastify's response schema for the success
 * status); undefined: JSON.stringify writes it, where the route says so (`writer`) or its schema cannot be compiled.
 */
export function successSerializerSchema(route: RestRoute, payloadSchema: JsonSchema): JsonSchema | undefined {
  if (route.payload.writer === 'JSON.stringify') return undefined;
  return serializerSchema(successBodySchema(route, payloadSchema));
}

/**
 * The schema a route's success body is serialized by (fast-json-stringify, as Fastify's response schema): the same
 * bytes as JSON.stringify of the presented body. Undefined for a `oneOf`/`anyOf`: docs/rest-records.md, "How a
 * success body is written". `required` is left out where an object's required members do not all come first: the
 * serializer writes those first, and the record's order is the document's (the presenter writes them anyway).
 */
export function serializerSchema(body: JsonSchema): JsonSchema | undefined {
  if ('oneOf' in body || 'anyOf' in body) return undefined;
  const out: JsonSchema = { ...body };
  if (body.items !== undefined) {
    const items = serializerSchema(body.items as JsonSchema);
    if (!items) return undefined;
    out.items = items;
  }
  if (body.properties !== undefined) {
    const properties: Record<string, JsonSchema> = {};
    for (const [key, member] of Object.entries(body.properties as Record<string, JsonSchema>)) {
      const compiled = serializerSchema(member);
      if (!compiled) return undefined;
      properties[key] = compiled;
    }
    out.properties = properties;
    const required = (body.required as string[] | undefined) ?? [];
    const keys = Object.keys(properties);
    if (!keys.every((key, index) => required.includes(key) === index < required.length)) delete out.required;
  }
  return out;
}
