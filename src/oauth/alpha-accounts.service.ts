import { recordEvent } from '../activity/record-event';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireOrganizationToken, requirePrincipal } from '../access/guards';
import type { Principal } from '../access/principal';
import { findIdentityWithinReach, findNamedAccount } from '../account/account.access';
import { reachesWholeOrganization } from '../access/reach';
import { Account } from '../account/account.entity';
import { AccountSyncStatus, SYNC_IN_PROGRESS } from '../account/account.enums';
import { AlphaIdentity } from '../account/alpha-identity.entity';
import { identityAccessToken } from '../account/alpha-tokens';
import { ApiToken } from '../auth/api-token.entity';
import { endTokens, type TokenEndDeps } from '../auth/token-management.service';
import { updateSubscriptionQuantity } from '../billing/billing.service';
import { DomainError } from '../errors/domain-error';
import { Organization } from '../organization/organization.entity';
import { AlphaProviderError } from '../providers/alpha/alpha.errors';
import { ConsentLostError } from '../providers/shared/provider-error';
import type { RequestScope } from '../request-scope';
import { isId } from '../shared/ids';
import { lockRow, lockRowToDelete } from '../db/row-lock';
import { OAuthSession, OAuthSessionStatus } from './oauth-session.entity';
import { consentNotFound, findCompletedAlphaConsent } from './alpha-consent.service';
import { consentStepFailed, revokeQuietly } from './consent-failure';
import { redirectWith } from './redirect-url';
import { accountConnected, accountDisconnected, accountReconnected } from './oauth.events';
import { accountImportQueue } from '../account-import/account-import.queues';
import type { AlphaClient } from '../providers/alpha/alpha.client';
import type { JobEngine } from '../jobs/job-engine';
import type { ConsentTokenDeps } from '../providers/shared/consent-tokens';

export type AccountLinkDeps = { alpha: AlphaClient; jobs: JobEngine } & ConsentTokenDeps & TokenEndDeps;

/**
 * The alpha accounts a consent links (the document's "Alpha account connection", product-decisions §7): connect
 * after the consent (src/oauth/alpha-consent.service.ts); reconnect and disconnect later. The flows answer with
 * URLs to send the person to: outcomes travel in their query parameters, as the document writes them.
 */

/** More connections of one organization in progress than this: TOO_MANY_REQUESTS. */
const MAX_CONNECTIONS_IN_PROGRESS = 3;
export const ACCOUNT_INFO_FAILED = 'Failed to retrieve account information from the alpha provider';

/** The answer of connect, reconnect and disconnect: where to send the person, and what happened (for GraphQL). */
export interface FlowOutcome {
  url: string;
  status: 'success' | 'success_disconnect' | 'success_reconnect' | 'error';
  errorMessage: string | null;
  account: Account | null;
}

function errorOutcome(redirectUrl: string, message: string, state: string | null | undefined): FlowOutcome {
  return { url: redirectWith(redirectUrl, { status: 'error', error_message: message, state }), status: 'error', errorMessage: message, account: null };
}

function requireExternalApi(externalApi: boolean | null | undefined): void {
  if (externalApi !== true) throw DomainError.badInput('external_api must be true');
}

/** `accounts/1001` or `1001` -> `1001`: the provider's account id as we keep it. */
export function providerAccountId(id: string): string {
  return id.startsWith('accounts/') ? id.slice('accounts/'.length) : id;
}

export interface ConnectArgs {
  uid?: string | null;
  alphaId: string;
  id: string;
  billingId: string;
  externalApi?: boolean | null;
  state?: string | null;
}

/**
 * Connects the provider account `id` of the person `alphaId` to the organization: the account is created here at
 * once, and a job imports its locations and reviews (progress on the account). The answer is the consent's
 * redirect_url with the outcome. Adding an account is the organization's act: organization tokens only.
 */
export async function connectAlphaAccount(scope: RequestScope<AccountLinkDeps>, args: ConnectArgs): Promise<FlowOutcome> {
  const principal = requireOrganizationToken(scope);
  requireExternalApi(args.externalApi);
  if (args.billingId !== principal.organizationId) throw DomainError.badInput('billing_id is not the organization of this token');
  const { runtime } = scope;
  const now = runtime.clock.now();
  const session = await findCompletedAlphaConsent(scope.em, principal.organizationId, args.alphaId, now, args.state);
  if (!session?.identity) throw consentNotFound();
  const identity = session.identity;
  const state = session.callerState;
  const alphaAccountId = providerAccountId(args.id.trim());
  if (!alphaAccountId) throw DomainError.badInput('id must name the account to connect');

  const inProgress = await scope.em.count(Account, { organization: principal.organizationId, syncStatus: { $in: [...SYNC_IN_PROGRESS] } });
  if (inProgress >= MAX_CONNECTIONS_IN_PROGRESS) return errorOutcome(session.redirectUrl, 'TOO_MANY_REQUESTS', state);
  if (await scope.em.count(Account, { organization: principal.organizationId, alphaAccountId })) {
    return errorOutcome(session.redirectUrl, 'ACCOUNT_ALREADY_CONNECTED', state);
  }

  let accountName: string;
  try {
    const accessToken = await identityAccessToken(runtime, identity.id);
    const remote = await runtime.alpha.getAccount(`accounts/${alphaAccountId}`, { accessToken });
    accountName = remote.accountName ?? `accounts/${alphaAccountId}`;
    const firstPage = await runtime.alpha.listLocations({ accountId: alphaAccountId, pageSize: 1 }, { accessToken });
    if (firstPage.locations.length === 0) return errorOutcome(session.redirectUrl, 'NO_LOCATION_FOUND', state);
  } catch (error) {
    const failure = consentStepFailed(scope.log, 'connect', error);
    // The business API failed reading the account: the document's fixed text. Anything else: its own (safe) text.
    return errorOutcome(session.redirectUrl, error instanceof AlphaProviderError ? ACCOUNT_INFO_FAILED : failure.text, state);
  }

  let account: Account;
  try {
    account = await scope.em.transactional(async (em) => {
      const created = em.create(Account, {
        organization: em.getReference(Organization, principal.organizationId),
        name: accountName,
        alphaAccountId,
        alphaIdentity: em.getReference(AlphaIdentity, identity.id),
        syncStatus: AccountSyncStatus.QUEUED,
        syncProgress: { locations: 0, reviews: 0 },
        createdAt: now,
      });
      await em.nativeUpdate(OAuthSession, { id: session.id }, { status: OAuthSessionStatus.CONNECTED, completedAt: now });
      await em.flush();
      await runtime.jobs.enqueue(em, accountImportQueue, { accountId: created.id });
      recordEvent(em, runtime, accountConnected, created);
      return created;
    });
  } catch (error) {
    // Another request connected it meanwhile (unique per organization).
    if (error instanceof UniqueConstraintViolationException) return errorOutcome(session.redirectUrl, 'ACCOUNT_ALREADY_CONNECTED', state);
    throw error;
  }
  return {
    url: redirectWith(session.redirectUrl, { status: 'success', alpha_profile_id: account.id, business_name: account.name, state }),
    status: 'success',
    errorMessage: null,
    account,
  };
}

/**
 * The account a flow names, by our id or by the provider's account id (the first of `ids` that names one), within
 * the principal's reach (src/access/reach.ts): an account token finds only its own account.
 */
async function accountOfFlow(em: EntityManager, principal: Principal, ids: (string | null | undefined)[]): Promise<Account | null> {
  for (const id of ids.map((value) => value?.trim()).filter((value): value is string => Boolean(value))) {
    const account = await findNamedAccount(em, principal, isId(id) ? { id } : { alphaAccountId: providerAccountId(id) });
    if (account) return account;
  }
  return null;
}

export interface DisconnectArgs {
  uid?: string | null;
  alphaId: string;
  id?: string | null;
  externalApi?: boolean | null;
  state?: string | null;
}

/**
 * Disconnects an account, its four effects in order (in one transaction; the provider's token revocation, which
 * is not ours, after it): the account leaves the person's connected accounts; the person's tokens are removed when
 * no other account uses them; the account leaves the organization (with its locations, posts, reviews and update
 * jobs); the subscription counts the locations left. An account token disconnects only its own account: any other
 * is "not found", as an unknown one.
 */
export async function disconnectAlphaAccount(scope: RequestScope<AccountLinkDeps>, args: DisconnectArgs): Promise<FlowOutcome> {
  const principal = requirePrincipal(scope);
  requireExternalApi(args.externalApi);
  const { runtime } = scope;
  const account = await accountOfFlow(scope.em, principal, [args.alphaId, args.id]);
  if (!account) throw DomainError.notFound('Account');
  const identity = account.alphaIdentity;
  if (!identity) throw new DomainError('CONFLICT', 'This account was not connected through the alpha consent: there is nothing to disconnect');
  const now = runtime.clock.now();
  const removed = await scope.em.transactional(async (em) => {
    // Under the account's row lock, then its consent's (the order a reconnect takes them too): a disconnect at the
    // same time may have removed the account (then it is unknown here as well), and of two accounts of one person
    // disconnected at once, the later one counts the earlier one gone.
    const current = await lockRowToDelete(em, Account, { id: account.id, alphaIdentity: identity.id });
    if (!current || !(await lockRowToDelete(em, AlphaIdentity, { id: identity.id }))) return null;
    // The account's own tokens go with it (the foreign key cascades): they must stop authenticating at once.
    const accountTokens = (await em.find(ApiToken, { account: account.id }, { fields: ['id'] })).map((token) => token.id);
    // 1. out of the person's connected accounts
    current.alphaIdentity = null;
    await em.flush();
    // 2. their tokens, unless another account still uses them
    const others = await em.count(Account, { alphaIdentity: identity.id });
    let sealed: string | null = null;
    if (others === 0) {
      const kept = await em.findOneOrFail(AlphaIdentity, identity.id, { populate: ['refreshToken', 'accessToken'] });
      sealed = kept.refreshToken ?? kept.accessToken;
      em.remove(kept);
    }
    // 3. out of the organization (the event keeps the account as it was last)
    recordEvent(em, runtime, accountDisconnected, current);
    em.remove(current);
    await em.flush();
    // 4. the subscription
    await updateSubscriptionQuantity(em, principal.organizationId, now);
    return { revoke: sealed, accountTokens };
  });
  if (!removed) throw DomainError.notFound('Account');
  const { revoke, accountTokens } = removed;
  await endTokens(runtime, accountTokens);
  if (revoke) await revokeQuietly(scope.log, 'disconnect', () => runtime.alphaOAuth.revoke(runtime.secrets.open(revoke)));
  return {
    url: redirectWith(identity.redirectUrl, { status: 'success_disconnect', state: args.state, account_id: account.id }),
    status: 'success_disconnect',
    errorMessage: null,
    account: null,
  };
}

/**
 * Where a reconnect's outcome goes: the redirect_url of the person's consent (`person`, found within the
 * principal's reach), else of the latest consent within reach (an organization token: its organization's latest
 * identity or consent session; an account token: only its own account's consent). It depends on nothing out of
 * reach, so an account or person out of reach answers exactly as an unknown one. Null when there is no consent.
 */
async function reconnectRedirectUrl(em: EntityManager, principal: Principal, person: AlphaIdentity | null): Promise<string | null> {
  if (person) return person.redirectUrl;
  const latestIdentity = await findIdentityWithinReach(em, principal);
  const latestSession = reachesWholeOrganization(principal)
    ? await em.findOne(OAuthSession, { organization: principal.organizationId, provider: 'alpha' }, { orderBy: { createdAt: 'desc', id: 'desc' } })
    : null;
  if (latestIdentity && latestSession) {
    return latestIdentity.updatedAt >= latestSession.createdAt ? latestIdentity.redirectUrl : latestSession.redirectUrl;
  }
  return latestIdentity?.redirectUrl ?? latestSession?.redirectUrl ?? null;
}

/**
 * Refreshes a connection: the person's refresh token gives a new access token, the account's connection is marked
 * refreshed, and a full re-sync (the document's data export) is queued. NotFoundException when the account (within
 * the principal's reach), the person's consent or the refresh token is missing or refused; other failures pass
 * their text on. Only an organization without any consent answers 404: there is no redirect_url to answer with.
 */
export async function reconnectAlphaAccount(scope: RequestScope<AccountLinkDeps>, args: DisconnectArgs): Promise<FlowOutcome> {
  const principal = requirePrincipal(scope);
  requireExternalApi(args.externalApi);
  const { runtime } = scope;
  const identity = await findIdentityWithinReach(scope.em, principal, args.alphaId);
  const redirectUrl = await reconnectRedirectUrl(scope.em, principal, identity);
  if (!redirectUrl) throw DomainError.notFound('Consent');
  const account = await accountOfFlow(scope.em, principal, [args.id]);
  if (!identity || !account || account.alphaIdentity?.id !== identity.id) {
    return errorOutcome(redirectUrl, 'NotFoundException', args.state);
  }
  try {
    // The refresh token must still hold, whatever the access token's expiry; the new tokens are kept under the
    // person's row lock (in a transaction of its own, so no other lock is held across the provider call).
    await identityAccessToken(runtime, identity.id, { force: true });
    const resynced = await scope.em.transactional(async (em) => {
      // Under their row locks, the account first and then its person, as a disconnect takes them: a disconnect
      // may have removed them since they were read. Then the answer is the unknown account's (docs/decisions.md:
      // a record that is gone is each caller's outcome).
      const current = await lockRow(em, Account, { id: account.id, alphaIdentity: identity.id });
      const kept = current ? await lockRow(em, AlphaIdentity, { id: identity.id }) : null;
      if (!current || !kept) return false;
      // An import still waiting to start re-syncs everything anyway: a second would only race it.
      const waiting = current.syncStatus === AccountSyncStatus.QUEUED;
      current.syncStatus = AccountSyncStatus.QUEUED;
      current.syncError = null;
      await em.flush();
      if (!waiting) await runtime.jobs.enqueue(em, accountImportQueue, { accountId: account.id });
      recordEvent(em, runtime, accountReconnected, current);
      return true;
    });
    if (!resynced) return errorOutcome(redirectUrl, 'NotFoundException', args.state);
  } catch (error) {
    const failure = consentStepFailed(scope.log, 'reconnect', error);
    // The consent is lost (no refresh token, refused, or removed meanwhile): the document's NotFoundException.
    return errorOutcome(redirectUrl, error instanceof ConsentLostError ? 'NotFoundException' : failure.text, args.state);
  }
  return {
    url: redirectWith(redirectUrl, { status: 'success_reconnect', state: args.state, account_id: account.id }),
    status: 'success_reconnect',
    errorMessage: null,
    account,
  };
}
