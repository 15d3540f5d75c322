import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { requireOrganizationToken } from '../access/guards';
import { AlphaIdentity } from '../account/alpha-identity.entity';
import { DomainError } from '../errors/domain-error';
import { createAlphaPkce, type AlphaOAuthClient } from '../providers/alpha/alpha.oauth';
import { ALPHA_CONNECT_SCOPES, ALPHA_SCOPE_BUSINESS_MANAGE } from '../providers/alpha/alpha.types';
import type { RequestScope } from '../request-scope';
import { OAuthSession, OAuthSessionStatus } from './oauth-session.entity';
import { startSession, takeSession, type SessionDeps } from './oauth-session';
import { consentStepFailed, revokeQuietly } from './consent-failure';
import { checkRedirectUrl, redirectWith } from './redirect-url';
import type { Clock } from '../shared/clock';
import type { Config } from '../config';
import type { Database } from '../db/orm';
import type { SecretBox } from '../shared/secret-box';
import type { ConsentTokenDeps } from '../providers/shared/consent-tokens';

export type ConsentServiceDeps = { publicUrl: () => string } & { config: Pick<Config, 'isDevelopment' | 'oauthStateTtlSeconds'> } & ConsentTokenDeps & SessionDeps;

/**
 * The alpha consent (the document's "Alpha account connection", product-decisions §7): generate-url, the
 * provider's consent, our callback; then the completed consent that connect and the list of the person's accounts
 * use. The callback answers with a URL to send the person to: outcomes travel in its query parameters.
 */

export const UNKNOWN_CONSENT = 'This consent is unknown to the service: start again from your application.';

/** Where the provider sends the person back: our callback, under the service's public address. */
export function alphaCallbackUrl(runtime: { publicUrl: () => string }): string {
  return `${runtime.publicUrl()}/oauth/alpha/callback`;
}

/**
 * Starts a consent: a single-use session (our state, hashed; the caller's state and redirect_url; a PKCE verifier,
 * sealed; an expiry) and the provider's authorize URL asking for offline access and the three permissions.
 * Starting a consent is the organization's act (it leads to a new account of the organization): organization
 * tokens only, as for connect (docs/oauth.md).
 */
export async function generateAlphaConsentUrl(scope: RequestScope<ConsentServiceDeps>, input: { redirectUrl: string; state?: string | null }): Promise<{ url: string }> {
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

export type AlphaCallbackDeps = { database: Database; clock: Clock; alphaOAuth: AlphaOAuthClient; secrets: SecretBox; config: Config; publicUrl: () => string };

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
