import { requireOrganizationToken } from '../access/guards';
import { Account } from '../account/account.entity';
import { identityAccessToken } from '../account/alpha-tokens';
import { DomainError } from '../errors/domain-error';
import type { AlphaAccount, AlphaAccountType } from '../providers/alpha/alpha.types';
import { ConsentLostError, ProviderError } from '../providers/shared/provider-error';
import type { RequestScope } from '../request-scope';
import { providerAccountId } from './alpha-accounts.service';
import { consentNotFound, findCompletedAlphaConsent } from './alpha-consent.service';
import { consentStepFailed } from './consent-failure';
import type { AlphaClient } from '../providers/alpha/alpha.client';
import type { ConsentTokenDeps } from '../providers/shared/consent-tokens';

export type ConsentAccountsDeps = { alpha: AlphaClient } & ConsentTokenDeps;

/**
 * The provider accounts of the person who completed a consent, what connect takes the `id` of: a connection laid
 * over the provider's pages, its cursor a sealed place in the provider's list (docs/oauth.md, "The person's
 * accounts"). The total is counted only when asked for, by reading the rest of the list.
 */

/** The provider serves at most this many accounts per page (larger asks are capped): each call asks for a full one. */
export const PROVIDER_PAGE_SIZE = 20;
/** Provider calls one page may take: enough for the largest `first` (100) and two empty pages on the way. */
const MAX_PAGE_CALLS = 7;
/** Provider calls counting the rest of the list may take (2,000 accounts past the page). */
export const MAX_COUNT_CALLS = 100;

const BAD_CURSOR = 'after: not a cursor of this list (use the endCursor of the previous page, with the same alphaId)';

/** One account of the person at the provider. */
export interface ConsentAccount {
  /** The provider's id (`1001`): what connect takes as `id`. */
  id: string;
  name: string;
  type: AlphaAccountType;
  /** Our id of the account when this organization has it connected; null otherwise. */
  accountId: string | null;
  /** The cursor of the place right after this account. */
  cursor: string;
}

export interface ConsentAccountsPage {
  accounts: ConsentAccount[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  /** Every account of the person: reads the rest of the provider's list when the page did not reach its end. */
  totalCount(): Promise<number>;
}

/** A place in the provider's list: before the account `skip` of the page `token` (null: the first), `offset` accounts into the list. */
interface Place {
  token: string | null;
  skip: number;
  offset: number;
}

interface CursorBody extends Place {
  /** The organization and the person whose list it is: a cursor of another list is refused. */
  organization: string;
  person: string;
}

/**
 * The accounts the person `alphaId` has at the provider, after the consent this organization completed with them
 * (the one connect would use: authorized by the callback, unexpired, unused). An unknown person, another
 * organization's consent, one expired, used, or no longer accepted by the provider: the same NOT_FOUND connect answers.
 * Organization tokens only, as connect.
 */
export async function listConsentAccounts(scope: RequestScope<ConsentAccountsDeps>, args: { alphaId: string; first: number; after?: string | null }): Promise<ConsentAccountsPage> {
  const principal = requireOrganizationToken(scope);
  const { runtime } = scope;
  const session = await findCompletedAlphaConsent(scope.em, principal.organizationId, args.alphaId, runtime.clock.now());
  if (!session?.identity) throw consentNotFound();
  const person = session.identity.subject;
  const start = args.after ? openCursor(scope, args.after, principal.organizationId, person) : { token: null, skip: 0, offset: 0 };

  const identityId = session.identity.id;
  const readPage = async (token: string | null) => {
    try {
      const accessToken = await identityAccessToken(runtime, identityId);
      return await runtime.alpha.listAccounts({ pageSize: PROVIDER_PAGE_SIZE, ...(token ? { pageToken: token } : {}) }, { accessToken });
    } catch (error) {
      throw providerFailure(scope, error);
    }
  };

  const read = await readAccounts(readPage, start, args.first);
  const connected = await connectedAccounts(scope, principal.organizationId, read.accounts.map(({ account }) => account));
  const seal = (place: Place) => sealCursor(scope, { ...place, organization: principal.organizationId, person });
  let counted: Promise<number> | undefined;
  return {
    accounts: read.accounts.map(({ account, after }) => {
      const id = providerAccountId(account.name);
      return { id, name: account.accountName, type: account.type, accountId: connected.get(id) ?? null, cursor: seal(after) };
    }),
    hasNextPage: read.rest !== null,
    hasPreviousPage: start.offset > 0,
    totalCount: () => (counted ??= read.rest === null ? Promise.resolve(read.offset) : countRest(readPage, read.rest)),
  };
}

/** Where a read stopped: `counted` accounts are known up to `next` (null: the list ends there). */
interface Rest {
  counted: number;
  next: string | null;
}

/**
 * Up to `first` accounts from `start`, with the place after each; `rest` (null when the list ended) says how many
 * accounts are known so far and where the provider's list goes on.
 */
async function readAccounts(
  readPage: (token: string | null) => Promise<{ accounts: AlphaAccount[]; nextPageToken?: string }>,
  start: Place,
  first: number,
): Promise<{ accounts: { account: AlphaAccount; after: Place }[]; offset: number; rest: Rest | null }> {
  const accounts: { account: AlphaAccount; after: Place }[] = [];
  let { token, skip, offset } = start;
  for (let calls = 0; ; calls += 1) {
    if (calls === MAX_PAGE_CALLS) {
      // Empty pages that still promise more: the page ends here, and the last cursor goes on from this place.
      if (accounts.length === 0) throw new DomainError('SERVICE_UNAVAILABLE', 'The alpha provider served empty pages of accounts; try again', { retryAfterSeconds: 5 });
      return { accounts, offset, rest: { counted: offset, next: token } };
    }
    const page = await readPage(token);
    const next = page.nextPageToken ?? null;
    let index = skip;
    for (; index < page.accounts.length && accounts.length < first; index += 1) {
      offset += 1;
      const lastOfPage = index + 1 === page.accounts.length;
      accounts.push({ account: page.accounts[index]!, after: lastOfPage && next ? { token: next, skip: 0, offset } : { token, skip: index + 1, offset } });
    }
    const left = Math.max(page.accounts.length - index, 0);
    if (accounts.length === first && (left > 0 || next)) return { accounts, offset, rest: { counted: offset + left, next } };
    // The provider's page token is its word that more follow.
    if (!next) return { accounts, offset, rest: null };
    token = next;
    skip = 0;
  }
}

/** The number of accounts: those known, and every page from `next` on. */
async function countRest(readPage: (token: string | null) => Promise<{ accounts: AlphaAccount[]; nextPageToken?: string }>, rest: Rest): Promise<number> {
  let { counted, next } = rest;
  for (let calls = 0; next; calls += 1) {
    if (calls === MAX_COUNT_CALLS) {
      throw new DomainError(
        'OPERATION_LIMIT_EXCEEDED',
        `totalCount counts at most ${MAX_COUNT_CALLS * PROVIDER_PAGE_SIZE} accounts past the page: leave it out and follow the pages`,
      );
    }
    const page = await readPage(next);
    counted += page.accounts.length;
    next = page.nextPageToken ?? null;
  }
  return counted;
}

/** Our ids of the accounts of the list this organization has connected, by provider id: one query per page. */
async function connectedAccounts(scope: RequestScope<ConsentAccountsDeps>, organizationId: string, accounts: AlphaAccount[]): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const ids = accounts.map((account) => providerAccountId(account.name));
  const found = await scope.em.find(Account, { organization: organizationId, alphaAccountId: { $in: ids } }, { fields: ['id', 'alphaAccountId'] });
  return new Map(found.map((account) => [account.alphaAccountId!, account.id]));
}

/**
 * What a caller reads of a failed provider call: a consent the provider no longer accepts (its refresh token, or
 * its access token, refused) is no consent, as connect would find; any other failure of the provider is a 503 to
 * retry, with its own text. Logged once, at the flows' boundary.
 */
function providerFailure(scope: RequestScope<ConsentAccountsDeps>, error: unknown): unknown {
  if (!(error instanceof ProviderError)) return error;
  const failure = consentStepFailed(scope.log, 'listing the consent’s accounts', error);
  if (error instanceof ConsentLostError || error.status === 401) return consentNotFound();
  return new DomainError('SERVICE_UNAVAILABLE', `The alpha provider could not list the accounts now; try again (${failure.text})`, {
    retryAfterSeconds: error.retryAfterSeconds ?? 5,
  });
}

function sealCursor(scope: RequestScope<ConsentAccountsDeps>, body: CursorBody): string {
  return scope.runtime.secrets.seal(JSON.stringify(body));
}

function openCursor(scope: RequestScope<ConsentAccountsDeps>, cursor: string, organization: string, person: string): Place {
  let body: Partial<CursorBody>;
  try {
    body = JSON.parse(scope.runtime.secrets.open(cursor)) as Partial<CursorBody>;
  } catch {
    throw DomainError.badInput(BAD_CURSOR);
  }
  const { token, skip, offset } = body;
  if (body.organization !== organization || body.person !== person || (token !== null && typeof token !== 'string') || !Number.isInteger(skip) || !Number.isInteger(offset)) {
    throw DomainError.badInput(BAD_CURSOR);
  }
  return { token: token ?? null, skip: skip!, offset: offset! };
}
