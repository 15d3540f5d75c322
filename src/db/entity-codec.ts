import { ReferenceKind, type EntityClass, type EntityProperty, type MetadataStorage } from '@mikro-orm/core';

/*
 * An entity as plain values and back, by its ORM metadata. Two kinds of reader need an entity without the unit of
 * work: an event carries its record as JSON and every subscriber decodes it, and the reads that change nothing
 * (src/db/prepared-reads.ts, src/db/row-transition.ts) turn rows into instances without the identity map. Both use
 * this one codec, so a field added to an entity is in events and plain reads at once.
 */

/** An entity as plain JSON: what travels inside an event. */
export type EntitySnapshot = Record<string, unknown>;

export interface SnapshotCodec<T> {
  encode(entity: T): EntitySnapshot;
  /** An unmanaged instance with the snapshot's values; relations are references holding only their id. */
  decode(snapshot: EntitySnapshot): T;
  /**
   * A new unmanaged instance: the class's own defaults (its field initializers: a new id, the time), then `values`
   * (relations as references holding their id, or plain instances). What a change written by its own statement
   * (src/db/row-writes.ts `insertChange`) inserts, without the cost of the ORM's entity factory.
   */
  create(values: { [K in keyof T]?: unknown }): T;
}

/**
 * The properties an entity is written and read by, plainly: every persisted scalar and many-to-one relation that
 * is neither lazy nor hidden (a generated search column is neither read nor sent).
 */
export function encodedProperties<T extends object>(metadata: MetadataStorage, entity: EntityClass<T>): { scalars: EntityProperty<T>[]; relations: EntityProperty<T>[] } {
  const meta = metadata.get<T>(entity.name);
  const sent = (prop: EntityProperty<T>) => !prop.lazy && !prop.hidden && prop.persist !== false && !prop.formula;
  return {
    scalars: meta.props.filter((prop) => prop.kind === ReferenceKind.SCALAR && sent(prop)),
    relations: meta.props.filter((prop) => prop.kind === ReferenceKind.MANY_TO_ONE && sent(prop)),
  };
}

/**
 * Encodes an entity by its ORM metadata, the one description of its fields: every persisted scalar as it is
 * (dates as ISO strings), every many-to-one relation as its id. Lazy and hidden properties are left out (a
 * generated search column is neither read nor sent). A field added to the entity is in the snapshot at once.
 */
export function snapshotCodec<T extends object>(metadata: MetadataStorage, entity: EntityClass<T>): SnapshotCodec<T> & { fields: string[] } {
  const meta = metadata.get<T>(entity.name);
  const { scalars, relations: relationProps } = encodedProperties(metadata, entity);
  const dates = new Set(scalars.filter((prop) => prop.runtimeType === 'Date').map((prop) => prop.name));
  const relations = relationProps.map((prop) => ({ name: prop.name, primaryKey: prop.targetMeta!.primaryKeys[0] as string }));

  // Decoded instances are of the entity's class (its prototype) without its constructor (whose defaults, a new id
  // and the current time, are not the snapshot's) and without the ORM's accessors, which are for managed entities:
  // a prototype in between shadows them with plain writable properties, so decoding is plain assignment.
  const plainPrototype = Object.create(
    meta.prototype,
    Object.fromEntries(
      [...scalars.map((prop) => prop.name), ...relations.map((relation) => relation.name)].map((name) => [
        name,
        { value: undefined, writable: true, enumerable: false, configurable: true },
      ]),
    ),
  ) as object;
  // The constructor run with the plain prototype as the new instance's (Reflect.construct's newTarget): its field
  // initializers assign to the plain properties, never to the ORM's accessors.
  const plainTarget = function () {} as unknown as new () => object;
  plainTarget.prototype = plainPrototype;
  return {
    fields: [...scalars.map((prop) => prop.name), ...relations.map((relation) => relation.name)],
    create(values) {
      return Object.assign(Reflect.construct(meta.class, [], plainTarget) as T, values);
    },
    encode(instance) {
      const record = instance as Record<string, unknown>;
      const snapshot: EntitySnapshot = {};
      for (const prop of scalars) {
        const value = record[prop.name];
        snapshot[prop.name] = value instanceof Date ? value.toISOString() : (value ?? null);
      }
      for (const relation of relations) {
        const target = record[relation.name] as Record<string, unknown> | null | undefined;
        snapshot[relation.name] = target?.[relation.primaryKey] ?? null;
      }
      return snapshot;
    },
    decode(snapshot) {
      const instance = Object.create(plainPrototype) as Record<string, unknown>;
      for (const prop of scalars) {
        const name = prop.name;
        const value = snapshot[name] ?? null;
        instance[name] = dates.has(name) && typeof value === 'string' ? new Date(value) : value;
      }
      for (const relation of relations) {
        const id = snapshot[relation.name];
        instance[relation.name] = id === null || id === undefined ? null : { [relation.primaryKey]: id };
      }
      return instance as T;
    },
  };
}

const codecs = new WeakMap<MetadataStorage, Map<string, ReturnType<typeof snapshotCodec>>>();

/** The codec of an entity, built once per ORM (its metadata). */
export function codecOf<T extends object>(metadata: MetadataStorage, entity: EntityClass<T>): ReturnType<typeof snapshotCodec<T>> {
  let byName = codecs.get(metadata);
  if (!byName) codecs.set(metadata, (byName = new Map<string, ReturnType<typeof snapshotCodec>>()));
  let codec = byName.get(entity.name);
  if (!codec) byName.set(entity.name, (codec = snapshotCodec(metadata, entity) as ReturnType<typeof snapshotCodec>));
  return codec as ReturnType<typeof snapshotCodec<T>>;
}

/** Column types whose `to_jsonb` is what `encode` gives of the property's mapped value. */
const JSON_AS_IS = /^(text|uuid|varchar(\(\d+\))?|character varying(\(\d+\))?|int|int2|int4|integer|smallint|boolean|bool|jsonb?|double( precision)?|float8|real|text\[\])$/;

/**
 * The snapshot `encode` gives, built by PostgreSQL from a row of the entity's table (`row`, an alias of a statement's
 * part): for a statement that changes rows it has not read and records them in the same statement (an activity
 * event, its news), when the row is known only to PostgreSQL. The same properties as `encode`; dates as ISO text in
 * UTC with milliseconds (the service writes dates from JavaScript, which has no finer precision). A column whose JSON
 * would differ from the mapped value (a bigint, a numeric) is refused rather than encoded differently.
 */
export function snapshotSql<T extends object>(metadata: MetadataStorage, entity: EntityClass<T>, row: string): string {
  const { scalars, relations } = encodedProperties(metadata, entity);
  const pairs = [
    ...scalars.map((prop) => {
      const column = `${row}."${prop.fieldNames[0]}"`;
      if (prop.runtimeType === 'Date') return `'${prop.name}', to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
      const type = (prop.columnTypes[0] ?? '').toLowerCase();
      if (!JSON_AS_IS.test(type)) throw new Error(`snapshotSql(${entity.name}): ${prop.name} is a ${type}, which this encoding does not cover`);
      return `'${prop.name}', ${column}`;
    }),
    ...relations.map((prop) => `'${prop.name}', ${row}."${prop.fieldNames[0]}"`),
  ];
  // A function takes at most 100 arguments: 50 pairs an object, the objects joined.
  const objects: string[] = [];
  for (let start = 0; start < pairs.length; start += 50) objects.push(`jsonb_build_object(${pairs.slice(start, start + 50).join(', ')})`);
  return objects.length === 1 ? objects[0]! : `(${objects.join(' || ')})`;
}
