import type { EntityClass, MetadataStorage } from '@mikro-orm/core';
import type { Change } from './change-statement';
import { encodedProperties } from './entity-codec';

/**
 * `INSERT … RETURNING *` of an entity built in memory (`em.create(…, { persist: false })`), by its metadata: the
 * change of a record's creation, for the one statement that also writes what goes with it
 * (src/db/change-statement.ts). The same fields as the entity's codec; JSON properties as JSON.
 */
export function insertChange<T extends object>(metadata: MetadataStorage, entity: EntityClass<T>, instance: T): Change {
  const meta = metadata.get<T>(entity.name);
  const { scalars, relations } = encodedProperties(metadata, entity);
  const record = instance as Record<string, unknown>;
  const columns: string[] = [];
  const placeholders: string[] = [];
  const values: unknown[] = [];
  for (const prop of scalars) {
    const json = prop.columnTypes[0] === 'jsonb' || prop.columnTypes[0] === 'json';
    const value = record[prop.name] ?? null;
    columns.push(`"${prop.fieldNames[0]}"`);
    placeholders.push(json ? '?::jsonb' : '?');
    values.push(json && value !== null ? JSON.stringify(value) : value);
  }
  for (const prop of relations) {
    const target = record[prop.name] as Record<string, unknown> | null | undefined;
    columns.push(`"${prop.fieldNames[0]}"`);
    placeholders.push('?');
    values.push(target?.[prop.targetMeta!.primaryKeys[0] as string] ?? null);
  }
  return { sql: `insert into "${meta.tableName}" (${columns.join(', ')}) values (${placeholders.join(', ')}) returning *`, values };
}
