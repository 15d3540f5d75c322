import { z } from 'zod';
import {
  ALPHA_ACCOUNT_TYPES,
  ALPHA_VERIFICATION_STATES,
  type AlphaAccount,
  type AlphaAccountType,
  type AlphaVerificationState,
} from '../../src/providers/alpha/alpha.types';
import { reviewInputSchema } from './alpha-sandbox.reviews';

/**
 * The identity provider's people and the business accounts each owns. A person signs in as one of them on the
 * consent page; the business API then lets that person's access tokens reach exactly these accounts.
 */

/** A sandbox identity, as userinfo describes it; the sandbox asks no password (it has none). */
export interface AlphaSandboxIdentity {
  /** The identity provider's stable user id. */
  sub: string;
  email: string;
  name: string;
  picture: string;
}

export interface AccountRecord {
  /** Creation order: listing and page tokens rely on it. */
  seq: number;
  id: string;
  accountName: string;
  type: AlphaAccountType;
  verificationState: AlphaVerificationState;
  ownerSub: string;
}

// Ids become path segments and HTML option values: kept to characters that need no escaping in either.
export const SUB_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const LOCATION_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export const identitySchema = z.strictObject({
  sub: z.string().regex(SUB_PATTERN),
  email: z.email().max(254),
  name: z.string().min(1).max(200),
  picture: z.url({ protocol: /^https?$/ }).max(2048),
});

export const accountRecordSchema = z.strictObject({
  seq: z.number().int().min(1),
  id: z.string().regex(ACCOUNT_ID_PATTERN),
  accountName: z.string().min(1).max(200),
  type: z.enum(ALPHA_ACCOUNT_TYPES),
  verificationState: z.enum(ALPHA_VERIFICATION_STATES),
  ownerSub: z.string().regex(SUB_PATTERN),
});

/** The body of POST /_control/identities: a person, the accounts they own, their locations and the reviews on them. */
export const identityInputSchema = z.strictObject({
  /** Absent: a new random one. */
  sub: z.string().regex(SUB_PATTERN).optional(),
  email: z.email().max(254),
  name: z.string().min(1).max(200),
  /** Absent: an avatar address made from the sub. */
  picture: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional(),
  accounts: z
    .array(
      z.strictObject({
        /** Absent: a new random numeric id, as the provider's are. */
        accountId: z.string().regex(ACCOUNT_ID_PATTERN).optional(),
        accountName: z.string().min(1).max(200),
        type: z.enum(ALPHA_ACCOUNT_TYPES).default('LOCATION_GROUP'),
        verificationState: z.enum(ALPHA_VERIFICATION_STATES).default('VERIFIED'),
        locations: z
          .array(
            z.strictObject({
              /** Absent: a new random one, as the location API gives. */
              locationId: z.string().regex(LOCATION_ID_PATTERN).optional(),
              /** The location in the provider's shape, checked by the location API's own rules. */
              location: z.unknown(),
              reviews: z.array(reviewInputSchema).max(500).default([]),
            }),
          )
          .max(100)
          .default([]),
      }),
    )
    .max(50)
    .default([]),
});

export type AlphaSandboxIdentityInput = z.input<typeof identityInputSchema>;
export type AlphaSandboxIdentityPlan = z.output<typeof identityInputSchema>;

/** The account as the provider serves it; the sandbox's only role is the owner's. */
export function accountView(record: AccountRecord): AlphaAccount {
  return {
    name: `accounts/${record.id}`,
    accountName: record.accountName,
    type: record.type,
    verificationState: record.verificationState,
    role: 'OWNER',
  };
}

/** Identities and accounts, in creation order. */
export class AlphaSandboxDirectory {
  private readonly identities = new Map<string, AlphaSandboxIdentity>();
  private readonly accounts = new Map<string, AccountRecord>();

  clear(): void {
    this.identities.clear();
    this.accounts.clear();
  }

  identity(sub: string): AlphaSandboxIdentity | undefined {
    return this.identities.get(sub);
  }

  identityList(): AlphaSandboxIdentity[] {
    return [...this.identities.values()];
  }

  hasEmail(email: string): boolean {
    const lower = email.toLowerCase();
    return [...this.identities.values()].some((identity) => identity.email.toLowerCase() === lower);
  }

  addIdentity(identity: AlphaSandboxIdentity): void {
    this.identities.set(identity.sub, identity);
  }

  addAccount(record: AccountRecord): void {
    this.accounts.set(record.id, record);
  }

  account(id: string): AccountRecord | undefined {
    return this.accounts.get(id);
  }

  owns(sub: string, accountId: string): boolean {
    return this.accounts.get(accountId)?.ownerSub === sub;
  }

  /** Oldest first; `ownerSub` undefined lists every account (the service token's view). */
  listAccounts(input: { ownerSub: string | undefined; pageSize: number; afterSeq?: number }): {
    accounts: AccountRecord[];
    nextAfterSeq?: number;
  } {
    const matching = [...this.accounts.values()]
      .filter((record) => input.ownerSub === undefined || record.ownerSub === input.ownerSub)
      .filter((record) => input.afterSeq === undefined || record.seq > input.afterSeq)
      .sort((a, b) => a.seq - b.seq);
    const page = matching.slice(0, input.pageSize);
    return matching.length > page.length
      ? { accounts: page, nextAfterSeq: page[page.length - 1]!.seq }
      : { accounts: page };
  }

  persisted(): { identities: AlphaSandboxIdentity[]; accounts: AccountRecord[] } {
    return {
      identities: this.identityList().map((identity) => ({ ...identity })),
      accounts: [...this.accounts.values()].sort((a, b) => a.seq - b.seq).map((record) => ({ ...record })),
    };
  }

  /** Replaces everything; the caller has checked the records (unique ids, owners that exist). */
  replace(identities: AlphaSandboxIdentity[], accounts: AccountRecord[]): void {
    this.clear();
    for (const identity of identities) this.identities.set(identity.sub, identity);
    for (const record of accounts) this.accounts.set(record.id, record);
  }

  /** Identities with the names of the accounts they own, for GET /_control/state. */
  snapshotIdentities(): (AlphaSandboxIdentity & { accounts: string[] })[] {
    const accounts = [...this.accounts.values()].sort((a, b) => a.seq - b.seq);
    return this.identityList().map((identity) => ({
      ...identity,
      accounts: accounts.filter((record) => record.ownerSub === identity.sub).map((record) => `accounts/${record.id}`),
    }));
  }

  snapshotAccounts(): (AlphaAccount & { ownerSub: string })[] {
    return [...this.accounts.values()]
      .sort((a, b) => a.seq - b.seq)
      .map((record) => ({ ...accountView(record), ownerSub: record.ownerSub }));
  }
}
