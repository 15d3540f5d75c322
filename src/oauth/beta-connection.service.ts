import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { requireOrganizationToken } from '../access/guards';
import type { Principal } from '../access/principal';
import { DomainError } from '../errors/domain-error';
import type { RequestScope } from '../request-scope';
import { UNKNOWN_CONSENT, type CallbackOutcome } from './alpha-consent.service';
import { BetaConnection } from './beta-connection.entity';
import { consentAccessToken, type ConsentTokenDeps } from '../providers/shared/consent-tokens';
import { OAuthSession, OAuthSessionStatus } from './oauth-session.entity';
import { startSession, takeSession, type SessionDeps } from './oauth-session';
import { consentStepFailed } from './consent-failure';
import { checkRedirectUrl, redirectWith } from './redirect-url';
import type { BetaOAuthClient } from '../providers/beta/beta.oauth';
import type { Clock } from '../shared/clock';
import type { Database } from '../db/orm';
import type { SecretBox } from '../shared/secret-box';
import type { Config } from '../config';

export type BetaServiceDeps = { publicUrl: () => string } & { config: Pick<Config, 'oauthStateTtlSeconds'> } & ConsentTokenDeps & SessionDeps;

/** The beta operations need the organization's beta API access (403 BETA_API_DISABLED) and an organization token. */
export function requireBetaAccess(scope: RequestScope): Principal {
  const principal = requireOrganizationToken(scope);
  if (!principal.flags.betaApi) throw new DomainError('BETA_API_DISABLED', 'Beta API access is not enabled for this organization');
  return principal;
}

export function betaCallbackUrl(runtime: { publicUrl: () => string }): string {
  return `${runtime.publicUrl()}/oauth/beta/callback`;
}

/**
 * Starts a beta consent (product-decisions §9): a single-use session like the alpha one, for an absolute https
 * redirect_url (always), and the provider's authorize URL. The caller's state comes back unchanged.
 */
export async function generateBetaConsentUrl(scope: RequestScope<BetaServiceDeps>, input: { redirectUrl: string; state?: string | null }): Promise<{ url: string; state: string }> {
  const principal = requireBetaAccess(scope);
  const { runtime } = scope;
  const redirectUrl = checkRedirectUrl(input.redirectUrl, { httpsOnly: true });
  const now = runtime.clock.now();
  const { state } = await startSession(scope, {
    provider: 'beta',
    organizationId: principal.organizationId,
    callerState: input.state ?? null,
    redirectUrl,
    codeVerifier: null,
    expiresAt: new Date(now.getTime() + runtime.config.oauthStateTtlSeconds * 1000),
    now,
  });
  return { url: runtime.betaOAuth.authorizeUrl({ redirectUri: betaCallbackUrl(runtime), state }), state: input.state ?? '' };
}

export type BetaCallbackDeps = { database: Database; clock: Clock; betaOAuth: BetaOAuthClient; secrets: SecretBox; publicUrl: () => string };

type BetaCallbackError = 'access_denied' | 'missing_code' | 'invalid_state' | 'token_exchange_failed' | 'provisioning_failed';

/**
 * The beta provider's redirect back: the document's success (success=true, state, company_id) or its error table
 * (access_denied, missing_code, invalid_state, token_exchange_failed, provisioning_failed). The company's tokens
 * are kept sealed; its id is what brands name as beta_company_id.
 */
export async function completeBetaConsent(
  runtime: BetaCallbackDeps,
  query: { state?: string; code?: string; error?: string },
  log: FastifyBaseLogger,
): Promise<CallbackOutcome> {
  const em = runtime.database.orm.em.fork();
  const now = runtime.clock.now();
  const found = await takeSession(em, 'beta', query.state, now);
  if (!found) return { refusal: UNKNOWN_CONSENT };
  const { session } = found;
  const fail = (error: BetaCallbackError): CallbackOutcome => ({ redirect: redirectWith(session.redirectUrl, { error, state: session.callerState ?? '' }), outcome: error });
  if (!found.taken) return fail('invalid_state');
  if (query.error) return fail('access_denied');
  if (!query.code) return fail('missing_code');
  let tokens;
  try {
    tokens = await runtime.betaOAuth.exchangeCode({ code: query.code, redirectUri: betaCallbackUrl(runtime) });
  } catch (error) {
    consentStepFailed(log, 'the beta consent callback (token exchange)', error);
    return fail('token_exchange_failed');
  }
  const companyId = tokens.company_id;
  if (!companyId) return fail('provisioning_failed');
  try {
    await em.transactional(async (tx) => {
      const existing = await tx.findOne(BetaConnection, { organization: session.organization, companyId });
      const fields = {
        accessToken: runtime.secrets.seal(tokens.access_token),
        accessTokenExpiresAt: new Date(now.getTime() + tokens.expires_in * 1000),
        refreshToken: tokens.refresh_token ? runtime.secrets.seal(tokens.refresh_token) : null,
        updatedAt: now,
      };
      if (existing) Object.assign(existing, fields);
      else tx.create(BetaConnection, { organization: session.organization, companyId, ...fields, createdAt: now });
      await tx.nativeUpdate(OAuthSession, { id: session.id }, { status: OAuthSessionStatus.CONNECTED, completedAt: now });
    });
  } catch (error) {
    // The company was linked at the provider, but its connection could not be kept here.
    consentStepFailed(log, 'the beta consent callback (keeping the connection)', error);
    return fail('provisioning_failed');
  }
  return { redirect: redirectWith(session.redirectUrl, { success: 'true', state: session.callerState ?? '', company_id: companyId }), outcome: 'success' };
}

export type BetaTokenDeps = ConsentTokenDeps;

/**
 * A usable access token of the organization's consent for a company, refreshed (once, under a row lock) when it
 * is about to expire. Throws ConsentLostError when the organization has no consent for the company, or it is lost.
 */
export function betaAccessToken(runtime: BetaTokenDeps, organizationId: string, companyId: string): Promise<string> {
  return consentAccessToken(runtime, {
    provider: 'beta',
    entity: BetaConnection,
    where: { organization: organizationId, companyId },
    lost: {
      gone: `No beta consent of the organization links company ${companyId}: consent again`,
      noRefreshToken: `The beta consent of company ${companyId} gave no refresh token: consent again`,
      refused: `The beta provider no longer accepts the consent of company ${companyId}: consent again`,
    },
  });
}

/** Whether the organization's beta consent linked this company. */
export async function hasBetaCompany(em: EntityManager, organizationId: string, companyId: string): Promise<boolean> {
  return (await em.count(BetaConnection, { organization: organizationId, companyId })) > 0;
}
