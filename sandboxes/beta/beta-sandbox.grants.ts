import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { invalidGrant } from '../shared/oauth-failure';
import {
  CODE_TTL_MS,
  forgetExpired,
  hashOf,
  hashSchema,
  newSecret,
  redeemableCode,
} from '../shared/oauth-grants';

/** The provider's authorization codes and tokens, kept as hashes (see shared/oauth-grants.ts). */

const CODE_PREFIX = 'bc_code_';
const ACCESS_TOKEN_PREFIX = 'bc_at_';
const APP_TOKEN_PREFIX = 'bc_app_';
const REFRESH_TOKEN_PREFIX = 'bc_rt_';

const codeRecordSchema = z.strictObject({
  hash: hashSchema,
  clientId: z.string().min(1),
  redirectUri: z.string().min(1),
  /** The company the person linked; null: none. */
  companyId: z.string().min(1).nullable(),
  scope: z.string().min(1),
  issuedAt: z.number(),
  expiresAt: z.number(),
  /** Set once exchanged: the grant its tokens belong to, revoked if the code comes back. */
  grantId: z.string().min(1).nullable(),
});

const refreshTokenRecordSchema = z.strictObject({
  hash: hashSchema,
  grantId: z.string().min(1),
  clientId: z.string().min(1),
  companyId: z.string().min(1).nullable(),
  scope: z.string().min(1),
  issuedAt: z.number(),
});

const accessTokenRecordSchema = z.strictObject({
  hash: hashSchema,
  /** person: from a consent (or its refresh), acting for `companyId`; app: client credentials, read only. */
  kind: z.enum(['person', 'app']),
  /** null for app tokens, which belong to no grant. */
  grantId: z.string().min(1).nullable(),
  clientId: z.string().min(1),
  companyId: z.string().min(1).nullable(),
  issuedAt: z.number(),
  expiresAt: z.number(),
});

type CodeRecord = z.infer<typeof codeRecordSchema>;
type RefreshTokenRecord = z.infer<typeof refreshTokenRecordSchema>;
type AccessTokenRecord = z.infer<typeof accessTokenRecordSchema>;

export const grantsPersistedSchema = z.strictObject({
  codes: z.array(codeRecordSchema),
  refreshTokens: z.array(refreshTokenRecordSchema),
  accessTokens: z.array(accessTokenRecordSchema),
});

export type BetaSandboxGrantsPersisted = z.infer<typeof grantsPersistedSchema>;

/** What a consent's code exchange or a refresh hands out; the route turns it into the token answer. */
export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresInSeconds: number;
  scope: string;
  companyId: string | null;
}

export type AccessTokenLookup =
  | { status: 'valid'; kind: 'person' | 'app'; companyId: string | null; clientId: string }
  | { status: 'expired' }
  | { status: 'unknown' };

export interface BetaSandboxGrantCounts {
  /** Issued since the last reset, and still exchangeable now. */
  codes: { issued: number; pending: number };
  /** Consents' access tokens (refreshes included). */
  accessTokens: { issued: number; active: number };
  /** Client-credentials tokens. */
  appTokens: { issued: number; active: number };
  refreshTokens: { issued: number; active: number };
}

export class BetaSandboxGrants {
  private readonly codes = new Map<string, CodeRecord>();
  private readonly refreshTokens = new Map<string, RefreshTokenRecord>();
  private readonly accessTokens = new Map<string, AccessTokenRecord>();
  private issued = { codes: 0, accessTokens: 0, appTokens: 0, refreshTokens: 0 };

  constructor(private readonly clock: () => number) {}

  clear(): void {
    this.codes.clear();
    this.refreshTokens.clear();
    this.accessTokens.clear();
    this.issued = { codes: 0, accessTokens: 0, appTokens: 0, refreshTokens: 0 };
  }

  /** A new single-use code, bound to the client, the redirect_uri and the company the person linked. */
  issueCode(input: { clientId: string; redirectUri: string; companyId: string | null; scope: string }): string {
    const now = this.clock();
    forgetExpired(now, this.accessTokens, this.codes);
    const code = newSecret(CODE_PREFIX);
    const hash = hashOf(code);
    this.codes.set(hash, { hash, ...input, issuedAt: now, expiresAt: now + CODE_TTL_MS, grantId: null });
    this.issued.codes += 1;
    return code;
  }

  /** RFC 6749 section 4.1.3. A refused exchange leaves an unused code usable. */
  redeemCode(input: { code: string; clientId: string; redirectUri: string; ttlSeconds: number }): IssuedTokens {
    const now = this.clock();
    const record = redeemableCode(this.codes, input, now, [this.refreshTokens, this.accessTokens]);
    const grantId = randomBytes(12).toString('base64url');
    record.grantId = grantId;
    const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
    const refreshHash = hashOf(refreshToken);
    const base = { grantId, clientId: record.clientId, companyId: record.companyId };
    this.refreshTokens.set(refreshHash, { hash: refreshHash, ...base, scope: record.scope, issuedAt: now });
    this.issued.refreshTokens += 1;
    return {
      accessToken: this.issueAccessToken({ kind: 'person', ...base }, now, input.ttlSeconds),
      refreshToken,
      expiresInSeconds: input.ttlSeconds,
      scope: record.scope,
      companyId: record.companyId,
    };
  }

  /** A new access token of the refresh token's grant; the refresh token stays valid (no rotation). */
  refresh(input: { refreshToken: string; clientId: string; ttlSeconds: number }): IssuedTokens {
    const now = this.clock();
    const record = this.refreshTokens.get(hashOf(input.refreshToken));
    if (!record) throw invalidGrant('The refresh token is not known, or was revoked.');
    if (record.clientId !== input.clientId) throw invalidGrant('The refresh token was issued to another client.');
    forgetExpired(now, this.accessTokens, this.codes);
    const base = { grantId: record.grantId, clientId: record.clientId, companyId: record.companyId };
    return {
      accessToken: this.issueAccessToken({ kind: 'person', ...base }, now, input.ttlSeconds),
      refreshToken: input.refreshToken,
      expiresInSeconds: input.ttlSeconds,
      scope: record.scope,
      companyId: record.companyId,
    };
  }

  /** Client credentials: an app token of no company and no grant (nothing to refresh). */
  issueAppToken(input: { clientId: string; ttlSeconds: number }): { accessToken: string; expiresInSeconds: number } {
    const now = this.clock();
    forgetExpired(now, this.accessTokens, this.codes);
    const accessToken = this.issueAccessToken(
      { kind: 'app', grantId: null, clientId: input.clientId, companyId: null },
      now,
      input.ttlSeconds,
    );
    return { accessToken, expiresInSeconds: input.ttlSeconds };
  }

  lookupAccessToken(token: string): AccessTokenLookup {
    const record = this.accessTokens.get(hashOf(token));
    if (!record) return { status: 'unknown' };
    if (this.clock() >= record.expiresAt) return { status: 'expired' };
    return { status: 'valid', kind: record.kind, companyId: record.companyId, clientId: record.clientId };
  }

  counts(): BetaSandboxGrantCounts {
    const now = this.clock();
    const tokens = [...this.accessTokens.values()].filter((token) => now < token.expiresAt);
    return {
      codes: {
        issued: this.issued.codes,
        pending: [...this.codes.values()].filter((code) => code.grantId === null && now < code.expiresAt).length,
      },
      accessTokens: {
        issued: this.issued.accessTokens,
        active: tokens.filter((token) => token.kind === 'person').length,
      },
      appTokens: { issued: this.issued.appTokens, active: tokens.filter((token) => token.kind === 'app').length },
      refreshTokens: { issued: this.issued.refreshTokens, active: this.refreshTokens.size },
    };
  }

  /** The companies codes and tokens are bound to, for a state file's reference check. */
  companyIds(): Set<string> {
    const ids = new Set<string>();
    for (const record of [...this.codes.values(), ...this.refreshTokens.values(), ...this.accessTokens.values()]) {
      if (record.companyId !== null) ids.add(record.companyId);
    }
    return ids;
  }

  persisted(): BetaSandboxGrantsPersisted {
    return {
      codes: [...this.codes.values()].map((record) => ({ ...record })),
      refreshTokens: [...this.refreshTokens.values()].map((record) => ({ ...record })),
      accessTokens: [...this.accessTokens.values()].map((record) => ({ ...record })),
    };
  }

  /** Replaces everything; the caller has checked the records. Counters start afresh. */
  replace(data: BetaSandboxGrantsPersisted): void {
    this.clear();
    for (const record of data.codes) this.codes.set(record.hash, { ...record });
    for (const record of data.refreshTokens) this.refreshTokens.set(record.hash, { ...record });
    for (const record of data.accessTokens) this.accessTokens.set(record.hash, { ...record });
  }

  private issueAccessToken(
    base: Pick<AccessTokenRecord, 'kind' | 'grantId' | 'clientId' | 'companyId'>,
    now: number,
    ttlSeconds: number,
  ): string {
    const token = newSecret(base.kind === 'app' ? APP_TOKEN_PREFIX : ACCESS_TOKEN_PREFIX);
    const hash = hashOf(token);
    this.accessTokens.set(hash, { hash, ...base, issuedAt: now, expiresAt: now + ttlSeconds * 1000 });
    if (base.kind === 'app') this.issued.appTokens += 1;
    else this.issued.accessTokens += 1;
    return token;
  }
}
