import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

// Random bytes drawn from the CSPRNG a few KB at a time, as crypto.randomUUID caches its own: one call into it per
// 200 ids rather than two per id (a post's write makes several ids).
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomBytesFromPool(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + size));
  poolOffset += size;
  return bytes;
}

/**
 * A UUID v7: time-ordered (good for B-tree inserts, and lists ordered by id are in creation order) with 62
 * random bits, so identifiers are opaque and unguessable, never sequential integers. Within one millisecond
 * the 12-bit rand_a field is a counter (RFC 9562, method 1), so ids of one process are strictly increasing.
 */
export function newId(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    // Start low in the counter's range, so a burst within one millisecond rarely overflows it.
    sequence = randomBytesFromPool(2).readUInt16BE(0) & 0x7ff;
  } else if (++sequence > 0xfff) {
    lastMs += 1;
    sequence = 0;
  }
  const bytes = randomBytesFromPool(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Lookups by an id that is not a UUID can never match; callers treat them as "not found" without a query error. */
export function isId(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** A well-formed id no row has: filtering by it matches nothing (used for ids that are not UUIDs at all). */
export const NO_MATCH_ID = '00000000-0000-0000-0000-000000000000';
