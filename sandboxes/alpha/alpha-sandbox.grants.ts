import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { invalidGrant, OAuthFailure } from '../shared/oauth-failure';
import {
  CODE_TTL_MS,
  forgetExpired,
  hashOf,
  hashSchema,
  newSecret,
  redeemableCode,
  revokeGrant,
} from '../shared/oauth-grants';
import { SUB_PATTERN } from './alpha-sandbox.accounts';

/** The identity provider's authorization codes and tokens, kept as hashes (see shared/oauth-grants.ts). */

/** Shaped like the provider's: access tokens start `ya29.`, which is how the business API tells them apart. */
export const ACCESS_TOKEN_PREFIX = 'ya29.';
const REFRESH_TOKEN_PREFIX = '1//';
const CODE_PREFIX = '4/';

interface CodeRecord {
  hash: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  sub: string;
  scopes: string[];
  /** access_type=offline: the exchange gives a refresh token too. */
  offline: boolean;
  issuedAt: number;
  expiresAt: number;
  /** Set once exchanged: the grant its tokens belong to, revoked if the code comes back. */
  grantId: string | null;
}

interface RefreshTokenRecord {
  hash: string;
  grantId: string;
  clientId: string;
  sub: string;
  scopes: string[];
  issuedAt: number;
}

interface AccessTokenRecord {
  hash: string;
  grantId: string;
  clientId: string;
  sub: string;
  scopes: string[];
  issuedAt: number;
  expiresAt: number;
}

/** What a successful token request hands out; the route turns it into the token answer. */
export interface IssuedTokens {
  accessToken: string;
  expiresInSeconds: number;
  refreshToken?: string;
  scopes: string[];
  sub: string;
  clientId: string;
}

export type AccessTokenLookup =
  { status: 'valid'; sub: string; scopes: string[]; clientId: string } | { status: 'expired' } | { status: 'unknown' };

export interface AlphaSandboxGrantCounts {
  /** Issued since the last reset, and still exchangeable now. */
  codes: { issued: number; pending: number };
  accessTokens: { issued: number; active: number };
  refreshTokens: { issued: number; active: number };
}

const scopesSchema = z.array(z.string().min(1)).min(1);

export const grantsPersistedSchema = z.strictObject({
  codes: z.array(
    z.strictObject({
      hash: hashSchema,
      clientId: z.string().min(1),
      redirectUri: z.string().min(1),
      codeChallenge: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/),
      sub: z.string().regex(SUB_PATTERN),
      scopes: scopesSchema,
      offline: z.boolean(),
      issuedAt: z.number(),
      expiresAt: z.number(),
      grantId: z.string().min(1).nullable(),
    }),
  ),
  refreshTokens: z.array(
    z.strictObject({
      hash: hashSchema,
      grantId: z.string().min(1),
      clientId: z.string().min(1),
      sub: z.string().regex(SUB_PATTERN),
      scopes: scopesSchema,
      issuedAt: z.number(),
    }),
  ),
  accessTokens: z.array(
    z.strictObject({
      hash: hashSchema,
      grantId: z.string().min(1),
      clientId: z.string().min(1),
      sub: z.string().regex(SUB_PATTERN),
      scopes: scopesSchema,
      issuedAt: z.number(),
      expiresAt: z.number(),
    }),
  ),
});

export type AlphaSandboxGrantsPersisted = z.infer<typeof grantsPersistedSchema>;

/** RFC 7636 S256: the challenge is the base64url SHA-256 of the verifier. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export class AlphaSandboxGrants {
  private readonly codes = new Map<string, CodeRecord>();
  private readonly refreshTokens = new Map<string, RefreshTokenRecord>();
  private readonly accessTokens = new Map<string, AccessTokenRecord>();
  private issued = { codes: 0, accessTokens: 0, refreshTokens: 0 };

  constructor(private readonly clock: () => number) {}

  clear(): void {
    this.codes.clear();
    this.refreshTokens.clear();
    this.accessTokens.clear();
    this.issued = { codes: 0, accessTokens: 0, refreshTokens: 0 };
  }

  /** A new single-use code, bound to everything its exchange must repeat or prove. */
  issueCode(input: {
    clientId: string;
    redirectUri: string;
    codeChallenge: string;
    sub: string;
    scopes: string[];
    offline: boolean;
  }): string {
    const now = this.clock();
    forgetExpired(now, this.accessTokens, this.codes);
    const code = newSecret(CODE_PREFIX);
    const hash = hashOf(code);
    this.codes.set(hash, { hash, ...input, issuedAt: now, expiresAt: now + CODE_TTL_MS, grantId: null });
    this.issued.codes += 1;
    return code;
  }

  /** RFC 6749 section 4.1.3 and RFC 7636 section 4.6. A refused exchange leaves an unused code usable. */
  redeemCode(input: {
    code: string;
    clientId: string;
    redirectUri: string;
    codeVerifier: string;
    ttlSeconds: number;
  }): IssuedTokens {
    const now = this.clock();
    const record = redeemableCode(this.codes, input, now, [this.refreshTokens, this.accessTokens]);
    if (s256(input.codeVerifier) !== record.codeChallenge) {
      throw invalidGrant('code_verifier does not match the code_challenge of the authorization request.');
    }
    const grantId = randomBytes(12).toString('base64url');
    record.grantId = grantId;
    const base = { grantId, clientId: record.clientId, sub: record.sub, scopes: record.scopes };
    let refreshToken: string | undefined;
    if (record.offline) {
      refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
      const hash = hashOf(refreshToken);
      this.refreshTokens.set(hash, { hash, ...base, issuedAt: now });
      this.issued.refreshTokens += 1;
    }
    const accessToken = this.issueAccessToken(base, now, input.ttlSeconds);
    return {
      accessToken,
      expiresInSeconds: input.ttlSeconds,
      ...(refreshToken !== undefined ? { refreshToken } : {}),
      scopes: [...record.scopes],
      sub: record.sub,
      clientId: record.clientId,
    };
  }

  /** A new access token of the refresh token's grant; `scopes`, when given, narrows it (RFC 6749 section 6). */
  refresh(input: {
    refreshToken: string;
    clientId: string;
    scopes: string[] | undefined;
    ttlSeconds: number;
  }): IssuedTokens {
    const now = this.clock();
    const record = this.refreshTokens.get(hashOf(input.refreshToken));
    if (!record) throw invalidGrant('Token has been expired or revoked.');
    if (record.clientId !== input.clientId) throw invalidGrant('The refresh token was issued to another client.');
    const scopes = input.scopes ?? record.scopes;
    const beyond = scopes.filter((scope) => !record.scopes.includes(scope));
    if (beyond.length > 0) {
      throw new OAuthFailure(400, 'invalid_scope', `Not granted to this refresh token: ${beyond.join(' ')}`);
    }
    forgetExpired(now, this.accessTokens, this.codes);
    const accessToken = this.issueAccessToken(
      { grantId: record.grantId, clientId: record.clientId, sub: record.sub, scopes },
      now,
      input.ttlSeconds,
    );
    return {
      accessToken,
      expiresInSeconds: input.ttlSeconds,
      scopes: [...scopes],
      sub: record.sub,
      clientId: record.clientId,
    };
  }

  /**
   * Revokes the grant the token (access or refresh) belongs to: its refresh token and all its access tokens, as the
   * provider does. False for a token it does not know, which RFC 7009 still answers 200.
   */
  revoke(token: string): boolean {
    const hash = hashOf(token);
    const grantId = this.refreshTokens.get(hash)?.grantId ?? this.accessTokens.get(hash)?.grantId;
    if (grantId === undefined) return false;
    revokeGrant(grantId, this.refreshTokens, this.accessTokens);
    return true;
  }

  lookupAccessToken(token: string): AccessTokenLookup {
    const record = this.accessTokens.get(hashOf(token));
    if (!record) return { status: 'unknown' };
    if (this.clock() >= record.expiresAt) return { status: 'expired' };
    return { status: 'valid', sub: record.sub, scopes: [...record.scopes], clientId: record.clientId };
  }

  counts(): AlphaSandboxGrantCounts {
    const now = this.clock();
    return {
      codes: {
        issued: this.issued.codes,
        pending: [...this.codes.values()].filter((code) => code.grantId === null && now < code.expiresAt).length,
      },
      accessTokens: {
        issued: this.issued.accessTokens,
        active: [...this.accessTokens.values()].filter((token) => now < token.expiresAt).length,
      },
      refreshTokens: { issued: this.issued.refreshTokens, active: this.refreshTokens.size },
    };
  }

  persisted(): AlphaSandboxGrantsPersisted {
    return {
      codes: [...this.codes.values()].map((record) => ({ ...record, scopes: [...record.scopes] })),
      refreshTokens: [...this.refreshTokens.values()].map((record) => ({ ...record, scopes: [...record.scopes] })),
      accessTokens: [...this.accessTokens.values()].map((record) => ({ ...record, scopes: [...record.scopes] })),
    };
  }

  /** Replaces everything; the caller has checked the records. Counters start afresh, as the post counters do. */
  replace(data: AlphaSandboxGrantsPersisted): void {
    this.clear();
    for (const record of data.codes) this.codes.set(record.hash, record);
    for (const record of data.refreshTokens) this.refreshTokens.set(record.hash, record);
    for (const record of data.accessTokens) this.accessTokens.set(record.hash, record);
  }

  private issueAccessToken(
    base: { grantId: string; clientId: string; sub: string; scopes: string[] },
    now: number,
    ttlSeconds: number,
  ): string {
    const token = newSecret(ACCESS_TOKEN_PREFIX);
    const hash = hashOf(token);
    this.accessTokens.set(hash, {
      hash,
      ...base,
      scopes: [...base.scopes],
      issuedAt: now,
      expiresAt: now + ttlSeconds * 1000,
    });
    this.issued.accessTokens += 1;
    return token;
  }
}
