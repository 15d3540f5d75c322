import { raw, ReferenceKind, type EntityClass, type EntityProperty, type FilterQuery, type MetadataStorage, type QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/** An entity as plain JSON: what travels inside an event. */
export type EntitySnapshot = Record<string, unknown>;

export interface SnapshotCodec<T> {
  encode(entity: T): EntitySnapshot;
  /** An unmanaged instance with the snapshot's values; relations are references holding only their id. */
  decode(snapshot: EntitySnapshot): T;
}

/**
 * Encodes an entity by its ORM metadata, the one description of its fields: every persisted scalar as it is
 * (dates as ISO strings), every many-to-one relation as its id. Lazy and hidden properties are left out (a
 * generated search column is neither read nor sent). A field added to the entity is in the snapshot at once.
 */
export function snapshotCodec<T extends object>(metadata: MetadataStorage, entity: EntityClass<T>): SnapshotCodec<T> & { fields: string[] } {
  const meta = metadata.get<T>(entity.name);
  const sent = (prop: EntityProperty<T>) => !prop.lazy && !prop.hidden && prop.persist !== false && !prop.formula;
  const scalars = meta.props.filter((prop) => prop.kind === ReferenceKind.SCALAR && sent(prop));
  const dates = new Set(scalars.filter((prop) => prop.runtimeType === 'Date').map((prop) => prop.name as string));
  const relations = meta.props
    .filter((prop) => prop.kind === ReferenceKind.MANY_TO_ONE && sent(prop))
    .map((prop) => ({ name: prop.name as string, primaryKey: prop.targetMeta!.primaryKeys[0] as string }));

  // Decoded instances are of the entity's class (its prototype) without its constructor (whose defaults, a new id
  // and the current time, are not the snapshot's) and without the ORM's accessors, which are for managed entities:
  // a prototype in between shadows them with plain writable properties, so decoding is plain assignment.
  const plainPrototype = Object.create(
    meta.prototype as object,
    Object.fromEntries(
      [...scalars.map((prop) => prop.name as string), ...relations.map((relation) => relation.name)].map((name) => [
        name,
        { value: undefined, writable: true, enumerable: false, configurable: true },
      ]),
    ),
  ) as object;
  return {
    fields: [...scalars.map((prop) => prop.name as string), ...relations.map((relation) => relation.name)],
    encode(instance) {
      const record = instance as Record<string, unknown>;
      const snapshot: EntitySnapshot = {};
      for (const prop of scalars) {
        const value = record[prop.name as string];
        snapshot[prop.name as string] = value instanceof Date ? value.toISOString() : (value ?? null);
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
        const name = prop.name as string;
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
  if (!byName) codecs.set(metadata, (byName = new Map()));
  let codec = byName.get(entity.name);
  if (!codec) byName.set(entity.name, (codec = snapshotCodec(metadata, entity) as ReturnType<typeof snapshotCodec>));
  return codec as ReturnType<typeof snapshotCodec<T>>;
}

/**
 * Reads for answers that change nothing: the same query a `find` would build from the same metadata and filter,
 * but rows become plain instances (as events decode them) instead of managed entities, so a list pays for no
 * hydration, identity map or change tracking it would not use. Never flush what this returns.
 */
export async function findPlain<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  options: { orderBy?: QueryOrderMap<T>; limit?: number; offset?: number } = {},
): Promise<T[]> {
  const codec = codecOf(em.getMetadata(), entity);
  const qb = em.createQueryBuilder(entity).select(codec.fields as never).where(where);
  if (options.orderBy) qb.orderBy(options.orderBy);
  if (options.limit !== undefined) qb.limit(options.limit);
  if (options.offset) qb.offset(options.offset);
  const rows = await qb.execute<Record<string, unknown>[]>('all', true);
  return rows.map((row) => codec.decode(row));
}

/**
 * `findPlain` and the number of rows the filter matches, in one statement (`count(*) over ()`); the count is asked
 * separately only when the page is empty (past the end), where no row carries it.
 */
export async function findPlainAndCount<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  options: { orderBy?: QueryOrderMap<T>; limit?: number; offset?: number } = {},
): Promise<[T[], number]> {
  const codec = codecOf(em.getMetadata(), entity);
  const qb = em
    .createQueryBuilder(entity)
    .select([...codec.fields, raw('count(*) over () as "matched_rows"')] as never)
    .where(where);
  if (options.orderBy) qb.orderBy(options.orderBy);
  if (options.limit !== undefined) qb.limit(options.limit);
  if (options.offset) qb.offset(options.offset);
  const rows = await qb.execute<Record<string, unknown>[]>('all', true);
  if (rows.length === 0) return [[], options.offset ? await em.count(entity, where) : 0];
  return [rows.map((row) => codec.decode(row)), Number(rows[0]!.matched_rows)];
}
