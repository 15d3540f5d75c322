import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { lockUntilCommit } from '../db/advisory-lock';
import { DomainError } from '../errors/domain-error';
import { requireBelowOpenLimit, type LimitDeps } from '../limits/request-limits';
import { Organization } from '../organization/organization.entity';
import type { RequestScope } from '../request-scope';
import { OAuthSession, OAuthSessionStatus, type OAuthProvider } from './oauth-session.entity';
import { countOpenSessions, deleteSessionsExpiredBefore } from './oauth-session.sql';

export type SessionDeps = LimitDeps;

/** The consent sessions both providers' flows keep: made at generate-url, taken once by the callback. */

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The caller's `state` is stored and sent back in a redirect: bounded, so that redirect stays one a browser follows. */
export const CALLER_STATE_MAX = 1024;
/**
 * An expired session is kept this long, so a person who comes back late is still sent to the caller with
 * `invalid_state`; then it is deleted (a callback naming it answers 400, as for a state never issued).
 */
const EXPIRED_SESSION_KEPT_MS = 24 * 3600_000;
/** Expired sessions deleted per start, oldest first: each start removes more than it adds, at a bounded cost. */
const EXPIRED_SESSIONS_DELETED_PER_START = 100;

function callerState(value: string | null): string | null {
  if (value !== null && [...value].length > CALLER_STATE_MAX) throw DomainError.badInput(`state must be at most ${CALLER_STATE_MAX} characters`);
  return value;
}

/**
 * A new session; returns the state to send to the provider (kept only as its hash). Bounded per organization and
 * provider (docs/oauth.md): while CONSENT_SESSIONS_OPEN_LIMIT sessions wait for their callback, another is a 429
 * until the oldest expires. Each start also deletes sessions that expired more than a day ago.
 */
export async function startSession(
  scope: RequestScope<SessionDeps>,
  input: { provider: OAuthProvider; organizationId: string; callerState: string | null; redirectUrl: string; codeVerifier: string | null; expiresAt: Date; now: Date },
): Promise<{ state: string }> {
  const checkedState = callerState(input.callerState);
  const state = randomBytes(32).toString('base64url');
  await scope.em.transactional(async (em) => {
    // Concurrent starts of one organization and provider count one after the other, so the limit holds exactly.
    await lockUntilCommit(em, `consent-sessions:${input.organizationId}:${input.provider}`);
    await deleteSessionsExpiredBefore(em, new Date(input.now.getTime() - EXPIRED_SESSION_KEPT_MS), EXPIRED_SESSIONS_DELETED_PER_START);
    const { open, firstExpiry } = await countOpenSessions(em, input);
    requireBelowOpenLimit(scope, 'consent-sessions', open, ((firstExpiry ?? input.now).getTime() - input.now.getTime()) / 1000);
    em.create(OAuthSession, {
      organization: em.getReference(Organization, input.organizationId),
      provider: input.provider,
      stateHash: sha256(state),
      callerState: checkedState,
      redirectUrl: input.redirectUrl,
      codeVerifier: input.codeVerifier,
      expiresAt: input.expiresAt,
      createdAt: input.now,
    });
  });
  return { state };
}

/**
 * The session of a callback's state: `null` when the state names none of this provider's; else the session and
 * whether this callback took it (single use, within its time: one atomic update decides between concurrent ones).
 * A taken session is FAILED until its flow marks it otherwise.
 */
export async function takeSession(em: EntityManager, provider: OAuthProvider, state: string | undefined, now: Date): Promise<{ session: OAuthSession; taken: boolean } | null> {
  if (!state) return null;
  const session = await em.findOne(OAuthSession, { stateHash: sha256(state), provider }, { populate: ['codeVerifier'] });
  if (!session) return null;
  const taken = await em.nativeUpdate(
    OAuthSession,
    { id: session.id, status: OAuthSessionStatus.PENDING, expiresAt: { $gt: now } },
    { status: OAuthSessionStatus.FAILED, completedAt: now },
  );
  return { session, taken: taken > 0 };
}
