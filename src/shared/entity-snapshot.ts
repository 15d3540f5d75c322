import { raw, ReferenceKind, type EntityClass, type EntityProperty, type FilterQuery, type MetadataStorage, type QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager, Knex } from '@mikro-orm/postgresql';

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
  const dates = new Set(scalars.filter((prop) => prop.runtimeType === 'Date').map((prop) => prop.name));
  const relations = meta.props
    .filter((prop) => prop.kind === ReferenceKind.MANY_TO_ONE && sent(prop))
    .map((prop) => ({ name: prop.name, primaryKey: prop.targetMeta!.primaryKeys[0] as string }));

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

/** One read's SQL, built once per shape of its filter; each request only fills in its values. */
interface PreparedRead {
  sql: string;
  /** Per binding: the filter's n-th text value, the limit, the offset, or a value that is part of the shape. */
  slots: ({ leaf: number } | { limit: true } | { offset: true } | { constant: unknown })[];
  /** The builder it came from, for mapping rows to properties as the builder would. */
  qb: unknown;
}

type ReadOptions<T> = {
  orderBy?: QueryOrderMap<T>;
  limit?: number;
  offset?: number;
  /**
   * The rows stop before the one that would take them past `maxBytes`, each row counting the integer property
   * `sizeProperty` (its size, kept by the database); the first row always comes.
   */
  byteBudget?: { maxBytes: number; sizeProperty: string };
};

const preparedReads = new WeakMap<MetadataStorage, Map<string, PreparedRead | null>>();
const LIMIT_MARK = 987_654_301;
const OFFSET_MARK = 987_654_302;

/**
 * The filter's values that vary per request (texts and times) in a fixed order, and its shape with them left out:
 * a time left in would make every request a shape of its own.
 */
function shapeOf(value: unknown, leaves: unknown[], mark?: (index: number) => string): unknown {
  if (typeof value === 'string' || value instanceof Date) {
    leaves.push(value);
    return mark ? mark(leaves.length - 1) : typeof value === 'string' ? '?' : '?time';
  }
  if (Array.isArray(value)) return value.map((item) => shapeOf(item, leaves, mark));
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shapeOf(item, leaves, mark)]));
  }
  return value;
}

/**
 * The query `find` would build from the entity's metadata for this filter shape, built once by MikroORM's query
 * builder with marked values and kept as SQL; null when the builder changed a value (the read then builds as
 * usual). So a list pays for query building once per shape, not once per request.
 */
function preparedRead<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  options: ReadOptions<T>,
  select: unknown[],
  shapeKey: string,
): PreparedRead | null {
  let byShape = preparedReads.get(em.getMetadata());
  if (!byShape) preparedReads.set(em.getMetadata(), (byShape = new Map<string, PreparedRead | null>()));
  const key = `${entity.name}|${shapeKey}`;
  if (byShape.has(key)) return byShape.get(key)!;
  const nonce = Math.random().toString(36).slice(2);
  const marks: string[] = [];
  const markedWhere = shapeOf(where, [], (index) => (marks[index] = `lg:${nonce}:${index}`)) as FilterQuery<T>;
  const qb = em.createQueryBuilder(entity).select(select as never).where(markedWhere);
  if (options.orderBy) qb.orderBy(options.orderBy);
  if (options.limit !== undefined) qb.limit(LIMIT_MARK);
  if (options.offset) qb.offset(OFFSET_MARK);
  const { sql, bindings } = qb.toQuery()._sql as { sql: string; bindings: readonly unknown[] };
  const slots: PreparedRead['slots'] = bindings.map((binding) => {
    const leaf = typeof binding === 'string' ? marks.indexOf(binding) : -1;
    if (leaf >= 0) return { leaf };
    if (binding === LIMIT_MARK) return { limit: true };
    if (binding === OFFSET_MARK) return { offset: true };
    return { constant: binding };
  });
  const intact =
    slots.filter((slot) => 'leaf' in slot).length === marks.length &&
    !slots.some((slot) => 'constant' in slot && (typeof slot.constant === 'string' ? slot.constant.includes(nonce) : slot.constant === LIMIT_MARK || slot.constant === OFFSET_MARK)) &&
    !sql.includes(nonce);
  const prepared = intact ? { sql, slots, qb } : null;
  byShape.set(key, prepared);
  return prepared;
}

/**
 * The read's SQL wrapped so that its rows stop at a byte budget: the rows' sizes (the column of `sizeProperty`) are
 * summed in the read's order over the rows of the page only (never over the rows an offset skips). Each row carries
 * `page_bytes` (the running sum) and `page_rows` (the rows the page had before the budget); the budget is the last
 * binding. Rows past it are never rendered nor sent by the database.
 */
function withinBytes<T extends object>(sql: string, em: EntityManager, entity: EntityClass<T>, orderBy: QueryOrderMap<T> | undefined, sizeProperty: string): string {
  const meta = em.getMetadata().get<T>(entity.name);
  const column = (property: string) => `"page"."${(meta.properties as Record<string, EntityProperty<T>>)[property]!.fieldNames[0]}"`;
  const order = Object.entries(orderBy ?? { [meta.primaryKeys[0]!]: 'asc' })
    .map(([property, direction]) => `${column(property)} ${String(direction).toLowerCase() === 'desc' ? 'desc' : 'asc'}`)
    .join(', ');
  return `select * from (
      select "page".*, sum(${column(sizeProperty)}) over (order by ${order} rows unbounded preceding) as "page_bytes",
        row_number() over (order by ${order}) as "page_row", count(*) over () as "page_rows"
      from (${sql}) as "page"
    ) as "page" where "page_row" = 1 or "page_bytes" <= ? order by ${order}`;
}

/** Rows of a read, as property names, through its prepared SQL (or built as usual where none could be prepared). */
async function readRows<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  options: ReadOptions<T>,
  select: unknown[],
): Promise<Record<string, unknown>[]> {
  const leaves: unknown[] = [];
  const shape = shapeOf(where, leaves);
  // What is selected is part of the shape (the same number of columns can be different ones).
  const selected = select.map((item) => (typeof item === 'string' ? item : (item as { sql?: string }).sql));
  const shapeKey = JSON.stringify([shape, options.orderBy ?? null, options.limit !== undefined, Boolean(options.offset), selected]);
  const prepared = preparedRead(em, entity, where, options, select, shapeKey);
  let read: { sql: string; bindings: unknown[]; qb: unknown };
  if (prepared) {
    const bindings = prepared.slots.map((slot) =>
      'leaf' in slot ? leaves[slot.leaf] : 'limit' in slot ? options.limit : 'offset' in slot ? options.offset : slot.constant,
    );
    read = { sql: prepared.sql, bindings, qb: prepared.qb };
  } else {
    const qb = em.createQueryBuilder(entity).select(select as never).where(where);
    if (options.orderBy) qb.orderBy(options.orderBy);
    if (options.limit !== undefined) qb.limit(options.limit);
    if (options.offset) qb.offset(options.offset);
    if (!options.byteBudget) return qb.execute<Record<string, unknown>[]>('all', true);
    const { sql, bindings } = qb.toQuery()._sql as { sql: string; bindings: readonly unknown[] };
    read = { sql, bindings: [...bindings], qb };
  }
  if (options.byteBudget) {
    const { maxBytes, sizeProperty } = options.byteBudget;
    read = { ...read, sql: withinBytes(read.sql, em, entity, options.orderBy, sizeProperty), bindings: [...read.bindings, maxBytes] };
  }
  const rows = await em.getConnection().execute<Record<string, unknown>[]>(read.sql, read.bindings, 'all', em.getTransactionContext());
  const meta = em.getMetadata().get<T>(entity.name);
  const driver = em.getDriver() as unknown as {
    mapResult(row: Record<string, unknown>, meta: unknown, populate: unknown[], qb: unknown): Record<string, unknown> | null;
  };
  return rows.map((row) => driver.mapResult(row, meta, [], read.qb) ?? {});
}

/**
 * Reads for answers that change nothing: the same query a `find` would build from the same metadata and filter
 * (built once per filter shape), but rows become plain instances (as events decode them) instead of managed
 * entities, so a list pays for no hydration, identity map or change tracking it would not use. Never flush what
 * this returns.
 */
export async function findPlain<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  options: ReadOptions<T> = {},
): Promise<T[]> {
  const codec = codecOf(em.getMetadata(), entity);
  const rows = await readRows(em, entity, where, options, codec.fields);
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
  options: ReadOptions<T> = {},
): Promise<[T[], number]> {
  const codec = codecOf(em.getMetadata(), entity);
  const rows = await readRows(em, entity, where, options, [...codec.fields, raw('count(*) over () as "matched_rows"')]);
  if (rows.length === 0) return [[], options.offset ? await em.count(entity, where) : 0];
  return [rows.map((row) => codec.decode(row)), Number(rows[0]!.matched_rows)];
}

/** A page read within a byte budget: its rows, the rows the filter matches, and whether the budget ended it early. */
export interface BoundedPage<T> {
  items: T[];
  /** Rows matching the filter over all pages (0 when not asked for). */
  matched: number;
  /** The page held fewer rows than it would have without the budget. */
  cut: boolean;
  /** The size of its rows' JSON, as the budget counted it. */
  bytes: number;
}

/**
 * `findPlainAndCount` (`count: false`: `findPlain`) of a page bounded in bytes: its rows stop before the one that
 * would take the page past `byteBudget.maxBytes`, and the first row always comes, so a page always moves on. The
 * rows past the budget never leave the database, so an answer's size no longer grows with its records' size.
 */
export async function findPlainWithinBytes<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  options: ReadOptions<T> & { byteBudget: NonNullable<ReadOptions<T>['byteBudget']>; count: boolean },
): Promise<BoundedPage<T>> {
  const codec = codecOf(em.getMetadata(), entity);
  const fields = [...codec.fields, options.byteBudget.sizeProperty];
  const select = options.count ? [...fields, raw('count(*) over () as "matched_rows"')] : fields;
  const rows = await readRows(em, entity, where, options, select);
  if (rows.length === 0) return { items: [], matched: options.count && options.offset ? await em.count(entity, where) : 0, cut: false, bytes: 0 };
  const last = rows[rows.length - 1]!;
  return {
    items: rows.map((row) => codec.decode(row)),
    matched: options.count ? Number(rows[0]!.matched_rows) : 0,
    cut: rows.length < Number(last.page_rows),
    bytes: Number(last.page_bytes),
  };
}

/** One transition's SQL, built once per shape (which properties it sets and tests); each call fills in its values. */
interface PreparedTransition {
  sql: string;
  /** updatedAt is set to the call's `now` (the entity has one, and the call does not set it itself). */
  stamped: boolean;
}
const preparedTransitions = new WeakMap<MetadataStorage, Map<string, PreparedTransition>>();

/**
 * Changes one row in one statement, `UPDATE … SET … WHERE <guard> RETURNING *`, and answers it as committed by that
 * statement (a plain instance, as `findPlain` gives) or null when no row holds the guard any more. For the hot
 * transitions of jobs whose guard is the whole rule (a post still waiting for its publish): no read before it and
 * no lock held between two statements, where `changeLocked` (src/shared/row-lock.ts) reads the row, locks it and
 * flushes the ORM's change set. As a flush would: the version is counted and `updatedAt` stamped from `now`
 * (src/db/orm.ts). `where` and `set` hold scalar properties only; a null in `where` tests IS NULL. The SQL is
 * written from the entity's metadata (table, columns, version property), the one description of its fields, once
 * per shape. Run it in the change's transaction (`em` is the transaction's), so what the transition records goes
 * with it.
 */
export async function transitionRow<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: Partial<Record<keyof T & string, string | null>>,
  set: Partial<Record<keyof T & string, string | Date | null>>,
  now: Date,
): Promise<T | null> {
  const metadata = em.getMetadata();
  const meta = metadata.get<T>(entity.name);
  const properties = meta.properties as Record<string, EntityProperty<T>>;
  const column = (property: string) => {
    const prop = properties[property];
    if (!prop || prop.kind !== ReferenceKind.SCALAR) throw new Error(`transitionRow(${entity.name}): ${property} is not a scalar property`);
    return `"${prop.fieldNames[0]}"`;
  };
  const setKeys = Object.keys(set);
  const whereEntries = Object.entries(where) as [string, string | null][];
  const shape = JSON.stringify([setKeys, whereEntries.map(([key, value]) => [key, value === null])]);
  let byShape = preparedTransitions.get(metadata);
  if (!byShape) preparedTransitions.set(metadata, (byShape = new Map<string, PreparedTransition>()));
  let prepared = byShape.get(`${entity.name}|${shape}`);
  if (!prepared) {
    const version: string | undefined = meta.versionProperty;
    const stamped = 'updatedAt' in properties && !setKeys.includes('updatedAt');
    const assignments = [
      ...setKeys.map((key) => `${column(key)} = ?`),
      ...(stamped ? [`${column('updatedAt')} = ?`] : []),
      ...(version ? [`${column(version)} = ${column(version)} + 1`] : []),
    ];
    const tests = whereEntries.map(([key, value]) => (value === null ? `${column(key)} is null` : `${column(key)} = ?`));
    const sql = `update "${meta.tableName}" set ${assignments.join(', ')} where ${tests.join(' and ')} returning *`;
    prepared = { sql, stamped };
    byShape.set(`${entity.name}|${shape}`, prepared);
  }
  const bindings = [
    ...setKeys.map((key) => set[key as keyof T & string] ?? null),
    ...(prepared.stamped ? [now] : []),
    ...whereEntries.flatMap(([, value]) => (value === null ? [] : [value])),
  ];
  const rows = await em.getConnection().execute<Record<string, unknown>[]>(prepared.sql, bindings, 'all', em.getTransactionContext<Knex.Transaction>());
  const row = rows[0];
  if (!row) return null;
  const driver = em.getDriver() as unknown as { mapResult(row: Record<string, unknown>, meta: unknown): Record<string, unknown> | null };
  return codecOf(metadata, entity).decode(driver.mapResult(row, meta) ?? {});
}
