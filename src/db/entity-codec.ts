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
  return {
    fields: [...scalars.map((prop) => prop.name), ...relations.map((relation) => relation.name)],
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
