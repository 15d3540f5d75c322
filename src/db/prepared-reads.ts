import { raw, type EntityClass, type EntityProperty, type FilterQuery, type MetadataStorage, type QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { codecOf } from './entity-codec';

/*
 * Reads for answers that change nothing (the hot paths' lists and single reads): SQL written by MikroORM's query
 * builder once per shape of a filter, rows mapped by its own result mapper into plain instances, so a read pays for
 * no query building, hydration, identity map or change tracking it would not use (docs/benchmarks.md, "The prepared
 * reads on MikroORM's public API"). Public API only: `toSQL()`, the connection's `execute`, `mapResult`.
 */

/** One read's SQL, built once per shape of its filter; each request only fills in its values. */
interface PreparedRead {
  sql: string;
  /** Per binding: the filter's n-th text value, the limit, the offset, or a value that is part of the shape. */
  slots: ({ leaf: number } | { limit: true } | { offset: true } | { constant: unknown })[];
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
  // knex's form of the query (`?` placeholders, bindings apart), which the connection's `execute` takes.
  const { sql, bindings } = qb.getKnexQuery().toSQL();
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
  const prepared = intact ? { sql, slots } : null;
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
  let read: { sql: string; bindings: unknown[] };
  if (prepared) {
    const bindings = prepared.slots.map((slot) =>
      'leaf' in slot ? leaves[slot.leaf] : 'limit' in slot ? options.limit : 'offset' in slot ? options.offset : slot.constant,
    );
    read = { sql: prepared.sql, bindings };
  } else {
    const qb = em.createQueryBuilder(entity).select(select as never).where(where);
    if (options.orderBy) qb.orderBy(options.orderBy);
    if (options.limit !== undefined) qb.limit(options.limit);
    if (options.offset) qb.offset(options.offset);
    if (!options.byteBudget) return qb.execute<Record<string, unknown>[]>('all', true);
    const { sql, bindings } = qb.getKnexQuery().toSQL();
    read = { sql, bindings: [...bindings] };
  }
  if (options.byteBudget) {
    const { maxBytes, sizeProperty } = options.byteBudget;
    read = { ...read, sql: withinBytes(read.sql, em, entity, options.orderBy, sizeProperty), bindings: [...read.bindings, maxBytes] };
  }
  const rows = await em.getConnection().execute<Record<string, unknown>[]>(read.sql, read.bindings, 'all', em.getTransactionContext());
  // Columns to properties (and custom types to their values) by the mapper `find` uses; columns of no property
  // (`matched_rows`, `page_bytes`) are kept as they came.
  const comparator = em.getComparator();
  return rows.map((row) => comparator.mapResult<Record<string, unknown>>(entity.name, row));
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
