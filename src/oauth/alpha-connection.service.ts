import { recordEvent } from '../activity/record-event';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { requireOrganizationToken, requirePrincipal } from '../access/guards';
import type { Principal } from '../access/principal';
import { findIdentityWithinReach, findNamedAccount } from '../account/account.access';
import { reachesWholeOrganization } from '../access/reach';
import { Account } from '../account/account.entity';
import { AccountSyncStatus, SYNC_IN_PROGRESS } from '../account/account.enums';
import { AlphaIdentity } from '../account/alpha-identity.entity';
import { identityAccessToken } from '../account/alpha-tokens';
import { ApiToken } from '../auth/api-token.entity';
import { endTokens } from '../auth/token-management.service';
import { updateSubscriptionQuantity } from '../billing/billing.service';
import { DomainError } from '../errors/domain-error';
import { Organization } from '../organization/organization.entity';
import { AlphaProviderError } from '../providers/alpha/alpha.errors';
import { createAlphaPkce } from '../providers/alpha/alpha.oauth';
import { ALPHA_CONNECT_SCOPES, ALPHA_SCOPE_BUSINESS_MANAGE } from '../providers/alpha/alpha.types';
import { ConsentLostError } from '../providers/shared/provider-error';
import type { RequestScope } from '../request-scope';
import type { Runtime } from '../runtime';
import { isId } from '../shared/ids';
import { lockRow } from '../db/row-lock';
import { OAuthSession, OAuthSessionStatus } from './oauth-session.entity';
import { startSession, takeSession } from './oauth-session';
import { consentStepFailed, revokeQuietly } from './consent-failure';
import { checkRedirectUrl, redirectWith } from './redirect-url';
import { accountConnected, accountDisconnected, accountReconnected } from './oauth.events';
import { accountImportQueue } from '../account-import/account-import.queues';

/**
 * Connecting alpha accounts (the document's "Alpha account connection", product-decisions §7): generate-url, the
 * provider's consent, our callback, then connect; reconnect and disconnect later. The flows answer with URLs to
 * send the person to: outcomes travel in their query parameters, as the document writes them.
 */

/** More connections of one organization in progress than this: TOO_MANY_REQUESTS. */
const MAX_CONNECTIONS_IN_PROGRESS = 3;
export const ACCOUNT_INFO_FAILED = 'Failed to retrieve account information from the alpha provider';

export const UNKNOWN_CONSENT = 'This consent is unknown to the service: start again from your application.';

/** Where the provider sends the person back: our callback, under the service's public address. */
export function alphaCallbackUrl(runtime: Pick<Runtime, 'publicUrl'>): string {
  return `${runtime.publicUrl()}/oauth/alpha/callback`;
}

/**
 * Starts a consent: a single-use session (our state, hashed; the caller's state and redirect_url; a PKCE verifier,
 * sealed; an expiry) and the provider's authorize URL asking for offline access and the three permissions.
 * Starting a consent is the organization's act (it leads to a new account of the organization): organization
 * tokens only, as for connect (docs/oauth.md).
 */
export async function generateAlphaConsentUrl(scope: RequestScope, input: { redirectUrl: string; state?: string | null }): Promise<{ url: string }> {
  const principal = requireOrganizationToken(scope);
  const { runtime } = scope;
  const redirectUrl = checkRedirectUrl(input.redirectUrl, { httpsOnly: !runtime.config.isDevelopment });
  const pkce = createAlphaPkce();
  const now = runtime.clock.now();
  const { state } = await startSession(scope, {
    provider: 'alpha',
    organizationId: principal.organizationId,
    callerState: input.state ?? null,
    redirectUrl,
    codeVerifier: runtime.secrets.seal(pkce.codeVerifier),
    expiresAt: new Date(now.getTime() + runtime.config.oauthStateTtlSeconds * 1000),
    now,
  });
  const url = runtime.alphaOAuth.authorizeUrl({
    redirectUri: alphaCallbackUrl(runtime),
    state,
    codeChallenge: pkce.codeChallenge,
    scopes: ALPHA_CONNECT_SCOPES,
  });
  return { url };
}

/** What the alpha consent callback uses. */
export type AlphaCallbackDeps = Pick<Runtime, 'database' | 'clock' | 'alphaOAuth' | 'secrets' | 'config' | 'publicUrl'>;

/** What the callback does: send the person on (with `outcome`, the document's error or success), or (no session to send them to) refuse. */
export type CallbackOutcome = { redirect: string; outcome: string } | { refusal: string };

/**
 * The provider's redirect back. The session is taken once, atomically; then the code is exchanged (with the PKCE
 * verifier), the business permission checked, the person identified, and their tokens kept sealed. The person goes
 * to the stored redirect_url, with the document's success parameters or its `error`.
 */
export async function completeAlphaConsent(
  runtime: AlphaCallbackDeps,
  query: { state?: string; code?: string; error?: string; scope?: string },
  log: FastifyBaseLogger,
): Promise<CallbackOutcome> {
  const em = runtime.database.orm.em.fork();
  const now = runtime.clock.now();
  const found = await takeSession(em, 'alpha', query.state, now);
  if (!found) return { refusal: UNKNOWN_CONSENT };
  const { session } = found;
  // The session is FAILED from the moment it is taken, until the consent succeeds.
  const fail = (error: 'access_denied' | 'invalid_state' | 'invalid_grant' | 'oauth_error'): CallbackOutcome => ({
    redirect: redirectWith(session.redirectUrl, { error, state: session.callerState }),
    outcome: error,
  });
  if (!found.taken) return fail('invalid_state');
  if (query.error) return fail(query.error === 'access_denied' ? 'access_denied' : 'oauth_error');
  if (!query.code) return fail('oauth_error');
  const code = query.code;

  // From here the person has a place to go back to: whatever fails is the document's oauth_error, logged once.
  try {
    const tokens = await runtime.alphaOAuth.exchangeCode({
      code,
      redirectUri: alphaCallbackUrl(runtime),
      codeVerifier: runtime.secrets.open(session.codeVerifier!),
    });
    const scopes = tokens.scope.split(' ').filter(Boolean);
    if (!scopes.includes(ALPHA_SCOPE_BUSINESS_MANAGE)) {
      // Without it the tokens are of no use to us: give them back.
      await revokeQuietly(log, 'the alpha consent callback', () => runtime.alphaOAuth.revoke(tokens.refresh_token ?? tokens.access_token));
      return fail('invalid_grant');
    }
    const person = await runtime.alphaOAuth.userInfo(tokens.access_token);

    const identity = await em.transactional(async (tx) => {
      const existing = await tx.findOne(AlphaIdentity, { organization: session.organization, subject: person.sub }, { populate: ['refreshToken'] });
      const fields = {
        email: person.email ?? null,
        name: person.name ?? null,
        accessToken: runtime.secrets.seal(tokens.access_token),
        accessTokenExpiresAt: new Date(now.getTime() + tokens.expires_in * 1000),
        scopes,
        redirectUrl: session.redirectUrl,
        updatedAt: now,
        // A consent without offline access keeps the refresh token of an earlier one.
        ...(tokens.refresh_token ? { refreshToken: runtime.secrets.seal(tokens.refresh_token) } : {}),
      };
      const kept = existing ? Object.assign(existing, fields) : tx.create(AlphaIdentity, { organization: session.organization, subject: person.sub, ...fields, createdAt: now });
      const current = await tx.findOneOrFail(OAuthSession, session.id);
      current.status = OAuthSessionStatus.AUTHORIZED;
      current.identity = kept;
      current.tokenRefreshed = Boolean(tokens.refresh_token);
      // Connect follows within the same time allowed for the consent.
      current.expiresAt = new Date(now.getTime() + runtime.config.oauthStateTtlSeconds * 1000);
      return kept;
    });
    return {
      redirect: redirectWith(session.redirectUrl, {
        uid: 'null',
        alphaId: identity.subject,
        billing_id: session.organization.id,
        token_refreshed: String(Boolean(tokens.refresh_token)),
        external_api: 'true',
        state: session.callerState,
      }),
      outcome: 'success',
    };
  } catch (error) {
    consentStepFailed(log, 'the alpha consent callback', error);
    return fail('oauth_error');
  }
}

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

/**
 * The answer to a consent that cannot be used: unknown person, another organization's consent, expired, used, or
 * no longer accepted by the provider. One answer for all, so that it tells nothing of other organizations' consents.
 */
export function consentNotFound(): DomainError {
  return DomainError.notFound('Consent (complete the consent first: generate-url, then the callback)');
}

/**
 * The completed consent of the person `alphaId` that the organization may still use (connect, and the list of the
 * person's accounts): authorized by the callback, not yet used by a connect, within its time; the latest, or the
 * one of the caller's `state` when given. Null when there is none.
 */
export function findCompletedAlphaConsent(em: EntityManager, organizationId: string, alphaId: string, now: Date, callerState?: string | null): Promise<OAuthSession | null> {
  return em.findOne(
    OAuthSession,
    {
      organization: organizationId,
      status: OAuthSessionStatus.AUTHORIZED,
      identity: { subject: alphaId },
      expiresAt: { $gt: now },
      provider: 'alpha',
      ...(callerState !== undefined && callerState !== null ? { callerState } : {}),
    },
    { orderBy: { createdAt: 'desc' }, populate: ['identity'] },
  );
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
export async function connectAlphaAccount(scope: RequestScope, args: ConnectArgs): Promise<FlowOutcome> {
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
export async function disconnectAlphaAccount(scope: RequestScope, args: DisconnectArgs): Promise<FlowOutcome> {
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
    const current = await lockRow(em, Account, { id: account.id, alphaIdentity: identity.id });
    if (!current || !(await lockRow(em, AlphaIdentity, { id: identity.id }))) return null;
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
export async function reconnectAlphaAccount(scope: RequestScope, args: DisconnectArgs): Promise<FlowOutcome> {
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
