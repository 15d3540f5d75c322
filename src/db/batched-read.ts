import DataLoader from 'dataloader';
import type { WriteAlong } from './change-statement';

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
