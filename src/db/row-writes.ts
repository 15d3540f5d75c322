import type { EntityClass, EntityProperty, MetadataStorage, Platform } from '@mikro-orm/core';
import type { Change, FollowingWrite } from './change-statement';
import { codecOf, encodedProperties } from './entity-codec';

/*
 * Rows written by plain statements from entities held in memory, for the one statement that writes a change with
 * what goes with it (src/db/change-statement.ts, docs/write-path.md). The same fields as the entity's codec; each
 * value converted by the property's own ORM type (JSON, arrays), as a flush would.
 */

/** A property's value as its column takes it, and the placeholder (with the column's cast) it goes in. */
function columnValue<T>(prop: EntityProperty<T>, value: unknown, platform: Platform): { placeholder: string; value: unknown } {
  const type = prop.customType;
  const converted = value === null || value === undefined ? null : type ? (type.convertToDatabaseValue(value, platform, { mode: 'query' }) as unknown) : value;
  const columnType = prop.columnTypes[0] ?? '';
  // A converted value is text (JSON, an array literal): the cast makes it the column's type.
  return { placeholder: type && /^(jsonb?|\w+\[\])$/.test(columnType) ? `?::${columnType}` : '?', value: converted };
}

/**
 * `INSERT … RETURNING *` of an entity built in memory (`em.create(…, { persist: false })`): a record's creation.
 * `admittedBy` names a CTE of the statement (its `locks`) whose `ok` must be true: read first, so its refusal (a rate
 * limit's, src/limits/rate-limiter.ts) ends the statement before the row is written.
 */
export function insertChange<T extends object>(
  metadata: MetadataStorage,
  platform: Platform,
  entity: EntityClass<T>,
  instance: T,
  options: { admittedBy?: string } = {},
): Change {
  const meta = metadata.get<T>(entity.name);
  const { scalars, relations } = encodedProperties(metadata, entity);
  const record = instance as Record<string, unknown>;
  const columns: string[] = [];
  const placeholders: string[] = [];
  const values: unknown[] = [];
  for (const prop of scalars) {
    const column = columnValue(prop, record[prop.name], platform);
    columns.push(`"${prop.fieldNames[0]}"`);
    placeholders.push(column.placeholder);
    values.push(column.value);
  }
  for (const prop of relations) {
    const target = record[prop.name] as Record<string, unknown> | null | undefined;
    columns.push(`"${prop.fieldNames[0]}"`);
    placeholders.push('?');
    values.push(target?.[prop.targetMeta!.primaryKeys[0] as string] ?? null);
  }
  const rows = options.admittedBy
    ? `select ${placeholders.join(', ')} where (select ok from ${options.admittedBy})`
    : `values (${placeholders.join(', ')})`;
  return { sql: `insert into "${meta.tableName}" (${columns.join(', ')}) ${rows} returning *`, values };
}

/**
 * `INSERT … RETURNING *` of several entities built in memory, in one statement: a batch of records created together
 * (a campaign's posts). The same columns and values as `insertChange`'s, each value cast to its column's type (the
 * rows are a VALUES list read by a SELECT, whose values take no type from the table); `admittedBy` as there.
 */
export function insertRowsChange<T extends object>(
  metadata: MetadataStorage,
  platform: Platform,
  entity: EntityClass<T>,
  instances: readonly T[],
  options: { admittedBy?: string } = {},
): Change {
  if (instances.length === 0) throw new Error(`insertRowsChange(${entity.name}) was given no rows`);
  const meta = metadata.get<T>(entity.name);
  const { scalars, relations } = encodedProperties(metadata, entity);
  const properties = [...scalars, ...relations];
  const related = new Set(relations);
  const columns = properties.map((prop) => `"${prop.fieldNames[0]}"`);
  const values: unknown[] = [];
  const rows = instances.map((instance) => {
    const record = instance as Record<string, unknown>;
    const placeholders = properties.map((prop) => {
      const type = prop.columnTypes[0];
      if (!type) throw new Error(`insertRowsChange(${entity.name}): ${prop.name} has no column type`);
      if (related.has(prop)) {
        const target = record[prop.name] as Record<string, unknown> | null | undefined;
        values.push(target?.[prop.targetMeta!.primaryKeys[0] as string] ?? null);
      } else {
        values.push(columnValue(prop, record[prop.name], platform).value);
      }
      return `?::${type}`;
    });
    return `(${placeholders.join(', ')})`;
  });
  const admitted = options.admittedBy ? ` where (select ok from ${options.admittedBy})` : '';
  return {
    sql: `insert into "${meta.tableName}" (${columns.join(', ')}) select * from (values ${rows.join(', ')}) as lg_rows${admitted} returning *`,
    values,
  };
}

/**
 * `UPDATE … SET` the scalar properties in which `after` differs from `before` (the row as read), the version
 * counted and `updatedAt` stamped from `now`, `WHERE id = ? ${condition}` (which the caller writes: a guard, or
 * `and exists (select 1 from changed)` for a following write).
 */
export function updateWrite<T extends object>(
  metadata: MetadataStorage,
  platform: Platform,
  entity: EntityClass<T>,
  before: T,
  after: T,
  now: Date,
  condition: { sql: string; values: unknown[] },
): FollowingWrite & { sql: string } {
  const meta = metadata.get<T>(entity.name);
  const codec = codecOf(metadata, entity);
  const [was, becomes] = [codec.encode(before), codec.encode(after)];
  const record = after as Record<string, unknown>;
  const assignments: string[] = [];
  const values: unknown[] = [];
  for (const prop of encodedProperties(metadata, entity).scalars) {
    if (prop.name === meta.versionProperty || prop.name === 'updatedAt' || prop.primary) continue;
    if (JSON.stringify(was[prop.name]) === JSON.stringify(becomes[prop.name])) continue;
    const column = columnValue(prop, record[prop.name], platform);
    assignments.push(`"${prop.fieldNames[0]}" = ${column.placeholder}`);
    values.push(column.value);
  }
  if ('updatedAt' in meta.properties) {
    assignments.push(`"${meta.properties['updatedAt' as keyof typeof meta.properties].fieldNames[0]}" = ?`);
    values.push(now);
  }
  const version = meta.versionProperty && meta.properties[meta.versionProperty].fieldNames[0];
  if (version) assignments.push(`"${version}" = "${version}" + 1`);
  const id = meta.properties[meta.primaryKeys[0]!].fieldNames[0];
  return {
    sql: `update "${meta.tableName}" set ${assignments.join(', ')} where "${id}" = ? ${condition.sql}`,
    values: [...values, (before as Record<string, unknown>)[meta.primaryKeys[0] as string], ...condition.values],
  };
}
