import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { readAllWith, type WriteAlong } from './change-statement';
import { codecOf } from './entity-codec';
import { statementsApart } from './statements';

/** Jobs whose reads one statement carries at most. */
const MAX_BATCH = 64;

/**
 * One read for the jobs that start together: a fetch's jobs start in one turn of the event loop, and each reads its
 * record with its own writes along (its unit of work's RUNNING, src/db/change-statement.ts `readAllWith`); those
 * reads go out as one statement (DataLoader's batching, no caching: each job must read afresh). `readMany` answers
 * the records found, by key; a key it does not answer reads as undefined (the record is gone).
 */
export function batchedReadWith<K, R>(readMany: (keys: K[], along: WriteAlong[]) => Promise<Map<K, R>>): (key: K, along: WriteAlong[]) => Promise<R | undefined> {
  const loader = new DataLoader<{ key: K; along: WriteAlong[] }, R | undefined>(
    async (entries) => {
      const found = await readMany([...new Set(entries.map((entry) => entry.key))], entries.flatMap((entry) => entry.along));
      return entries.map((entry) => found.get(entry.key));
    },
    { cache: false, maxBatchSize: MAX_BATCH },
  );
  return (key, along) => loader.load({ key, along });
}

/**
 * `readMany` for a record its job reads by id alone (a review, a brand, a scan): its rows as plain instances
 * (src/db/entity-codec.ts), by id, in one statement carrying `along`. A job changes its record by a guarded statement
 * of its own, so the read needs no unit of work.
 */
export function readByIds<T extends object>(em: () => EntityManager, entity: EntityClass<T>): (ids: string[], along: WriteAlong[]) => Promise<Map<string, T>> {
  return async (ids, along) => {
    const reader = em();
    const metadata = reader.getMetadata();
    const meta = metadata.get<T>(entity.name);
    const key = meta.primaryKeys[0]!;
    const prop = meta.properties[key];
    const select = { sql: `select * from "${meta.tableName}" where "${prop.fieldNames[0]}" = any(?::${prop.columnTypes[0]}[])`, values: [ids] };
    const rows = await readAllWith(statementsApart(reader), select, along);
    const codec = codecOf(metadata, entity);
    return new Map(rows.map((row) => {
      const record = codec.decode(reader.getComparator().mapResult<Record<string, unknown>>(entity.name, row));
      return [(record as Record<string, unknown>)[key] as string, record];
    }));
  };
}
