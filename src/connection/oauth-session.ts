import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Organization } from '../organization/organization.entity';
import { OAuthSession, OAuthSessionStatus, type OAuthProvider } from './oauth-session.entity';

/** The consent sessions both providers' flows keep: made at generate-url, taken once by the callback. */

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A new session; returns the state to send to the provider (kept only as its hash). */
export async function startSession(
  em: EntityManager,
  input: { provider: OAuthProvider; organizationId: string; callerState: string | null; redirectUrl: string; codeVerifier: string | null; expiresAt: Date; now: Date },
): Promise<{ state: string }> {
  const state = randomBytes(32).toString('base64url');
  em.create(OAuthSession, {
    organization: em.getReference(Organization, input.organizationId),
    provider: input.provider,
    stateHash: sha256(state),
    callerState: input.callerState,
    redirectUrl: input.redirectUrl,
    codeVerifier: input.codeVerifier,
    expiresAt: input.expiresAt,
    createdAt: input.now,
  });
  await em.flush();
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
