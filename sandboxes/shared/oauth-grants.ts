import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { invalidGrant } from './oauth-failure';

/**
 * What the sandboxes' grants share. Only SHA-256 hashes of codes and tokens are kept (in memory and in a state file),
 * so neither the state answer nor the file gives a usable token away.
 */

/** A code is good for 10 minutes of the sandbox clock, once. */
export const CODE_TTL_MS = 10 * 60_000;
/** How long an expired access token still answers "expired" (and a used code "used") before both are forgotten. */
const KEPT_AFTER_EXPIRY_MS = 24 * 3600_000;

export const hashSchema = z.string().regex(/^[0-9a-f]{64}$/);

export function hashOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** Withdraws what a grant gave: every refresh and access token of it, in each of `tokens`. */
export function revokeGrant(grantId: string, ...tokens: Map<string, { grantId: string | null }>[]): void {
  for (const records of tokens) {
    for (const [hash, record] of records) if (record.grantId === grantId) records.delete(hash);
  }
}

/** Keeps the maps (and a state file) from growing without end: long-expired tokens and codes answer as unknown. */
export function forgetExpired(now: number, ...expiring: Map<string, { expiresAt: number }>[]): void {
  for (const records of expiring) {
    for (const [hash, record] of records) if (record.expiresAt + KEPT_AFTER_EXPIRY_MS < now) records.delete(hash);
  }
}

/** What every sandbox's code records hold. */
interface CodeRecord {
  clientId: string;
  redirectUri: string;
  expiresAt: number;
  /** Set once exchanged: the grant its tokens belong to. */
  grantId: string | null;
}

/**
 * RFC 6749 section 4.1.3: the code's record, once it is known, unused, unexpired, and presented by the client it was
 * issued to with the same redirect_uri. A refused exchange leaves an unused code usable; a used one presented again
 * withdraws the grant it gave, from each of `grantTokens`.
 */
export function redeemableCode<R extends CodeRecord>(
  codes: Map<string, R>,
  input: { code: string; clientId: string; redirectUri: string },
  now: number,
  grantTokens: Map<string, { grantId: string | null }>[],
): R {
  const record = codes.get(hashOf(input.code));
  if (!record) throw invalidGrant('The authorization code is not known.');
  if (record.grantId !== null) {
    // RFC 6749 section 4.1.2: a code presented twice may have been stolen; what it gave is withdrawn.
    revokeGrant(record.grantId, ...grantTokens);
    throw invalidGrant('The authorization code was already used; the tokens issued for it are revoked.');
  }
  if (now >= record.expiresAt) throw invalidGrant('The authorization code has expired.');
  if (record.clientId !== input.clientId) throw invalidGrant('The authorization code was issued to another client.');
  if (record.redirectUri !== input.redirectUri) {
    throw invalidGrant('redirect_uri does not match the one the authorization code was issued for.');
  }
  return record;
}
