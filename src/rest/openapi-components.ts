import { isDeepStrictEqual } from 'node:util';
import type { GraphQLEnumType } from 'graphql';
import type { JsonSchema } from './record';

/**
 * The named schemas of the OpenAPI document (`components.schemas`), shared by every operation that uses them through
 * `$ref`. A name stands for one schema: a second, different schema under a name already taken is a mistake of the
 * route table (two routes writing one record differently), refused at start-up rather than published as one type.
 */
export class SchemaComponents {
  private readonly schemas = new Map<string, { schema: JsonSchema; where: string }>();
  /** Names whose schema is being built (an input type that contains itself refers to itself). */
  private readonly building = new Set<string>();

  /** The `$ref` of the component `name`, holding `schema`. */
  add(name: string, schema: JsonSchema, where: string): JsonSchema {
    const existing = this.schemas.get(name);
    if (existing && !isDeepStrictEqual(existing.schema, schema)) {
      throw new Error(`OpenAPI: ${where} and ${existing.where} write ${name} differently; name one of them otherwise`);
    }
    if (!existing) this.schemas.set(name, { schema, where });
    return refTo(name);
  }

  /**
   * The `$ref` of the component `name`, built by `build` the first time it is asked for. A component being built
   * refers to itself without building again (recursive input types); `build` runs again for every other use, so a use
   * that would make it differently is refused (`add`).
   */
  define(name: string, where: string, build: () => JsonSchema): JsonSchema {
    if (this.building.has(name)) return refTo(name);
    this.building.add(name);
    try {
      return this.add(name, build(), where);
    } finally {
      this.building.delete(name);
    }
  }

  /** An enum of the schema, as the strings `values` (REST values or the enum's names). */
  enumeration(type: GraphQLEnumType, values: readonly string[], where: string): JsonSchema {
    const schema: JsonSchema = { type: 'string', enum: [...values] };
    if (type.description) schema.description = type.description;
    return this.add(type.name, schema, where);
  }

  /** `components.schemas`, by name in alphabetical order. */
  toJSON(): Record<string, JsonSchema> {
    return Object.fromEntries([...this.schemas].sort(([a], [b]) => a.localeCompare(b)).map(([name, { schema }]) => [name, schema]));
  }
}

export function refTo(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * How a GraphQL enum is written where REST reads or writes it: records and text parameters (path, query, header)
 * use its values (`app`), JSON bodies and the providers' verbatim bodies its names (`APP`), as graphql-js coerces
 * them (src/rest/variables.ts, src/rest/record.ts).
 */
export function enumStrings(type: GraphQLEnumType, form: 'values' | 'names'): string[] {
  return type.getValues().map((value) => (form === 'values' && typeof value.value === 'string' ? value.value : value.name));
}

/**
 * The enum as a component where its names and values are one spelling (one type for records, parameters and bodies);
 * where they differ, the REST values are the component and the names are written in place.
 */
export function enumSchema(components: SchemaComponents, type: GraphQLEnumType, form: 'values' | 'names', where: string): JsonSchema {
  const values = enumStrings(type, 'values');
  const wanted = enumStrings(type, form);
  if (form === 'values' || isDeepStrictEqual(values, wanted)) return components.enumeration(type, values, where);
  return { type: 'string', enum: wanted };
}

/**
 * A GraphQL description as REST readers need it: the camelCase names of the fields it mentions written as their REST
 * names (`additionalPhoneNumbers` -> `additional_phone_numbers`), by `renames` (GraphQL name -> REST name).
 */
export function restDescription(description: string, renames: ReadonlyMap<string, string>): string {
  return description.replace(/\b[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b/g, (word) => renames.get(word) ?? word);
}

/** `schema` or null: a `$ref` (which takes no sibling type) as `anyOf`, others with `null` added to their type or enum. */
export function orNull(schema: JsonSchema): JsonSchema {
  if (typeof schema.$ref === 'string') return { anyOf: [schema, { type: 'null' }] };
  if (Array.isArray(schema.enum)) return { ...schema, enum: [...(schema.enum as unknown[]), null], ...(typeof schema.type === 'string' ? { type: [schema.type, 'null'] } : {}) };
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (schema.type === undefined) return schema;
  return { anyOf: [schema, { type: 'null' }] };
}

/** The schema without its null (the inverse of `orNull`, and of record.ts's): `nullable` says whether it had one. */
export function splitNull(schema: JsonSchema): { core: JsonSchema; nullable: boolean } {
  if (Array.isArray(schema.anyOf) && schema.anyOf.length === 2 && isDeepStrictEqual(schema.anyOf[1], { type: 'null' })) {
    return { core: schema.anyOf[0] as JsonSchema, nullable: true };
  }
  let core = schema;
  let nullable = false;
  if (Array.isArray(core.enum) && core.enum.includes(null)) {
    core = { ...core, enum: core.enum.filter((value) => value !== null) };
    nullable = true;
  }
  if (Array.isArray(core.type) && core.type.includes('null')) {
    const types = (core.type as string[]).filter((type) => type !== 'null');
    core = { ...core, type: types.length === 1 ? types[0] : types };
    nullable = true;
  }
  return { core, nullable };
}
