import { randomBytes } from 'node:crypto';

/**
 * A UUID v7: time-ordered (good for B-tree inserts and "newest first" ordering) with 74 random bits,
 * so identifiers are opaque and unguessable, never sequential integers.
 */
export function newId(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Lookups by an id that is not a UUID can never match; callers treat them as "not found" without a query error. */
export function isId(value: string): boolean {
  return UUID_PATTERN.test(value);
}
