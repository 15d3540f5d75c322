import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Organization } from '../organization/organization.entity';
import { newId } from '../shared/ids';
import { AlphaIdentity } from '../account/alpha-identity.entity';

export enum OAuthSessionStatus {
  /** generate-url made it; the person is at the provider's consent screen. */
  PENDING = 'PENDING',
  /** The callback came back with a usable consent; connect may use it. */
  AUTHORIZED = 'AUTHORIZED',
  /** The callback came back with an error, or could not complete. */
  FAILED = 'FAILED',
  /** An account was connected with it. */
  CONNECTED = 'CONNECTED',
}

export type OAuthProvider = 'alpha' | 'beta';

/**
 * One consent in progress (product-decisions §7, §9): our own random state (only its hash is kept), bound to the
 * caller's state, redirect_url and organization, with the PKCE verifier (sealed; the beta provider takes none) and
 * an expiry. The callback uses it once.
 */
@Entity({ tableName: 'oauth_session' })
// Open sessions are counted per organization and provider at each start; expired ones are deleted by expiry.
@Index({ properties: ['organization', 'provider', 'status'] })
@Index({ properties: ['expiresAt'] })
export class OAuthSession {
  [OptionalProps]?: 'id' | 'status' | 'identity' | 'tokenRefreshed' | 'createdAt' | 'completedAt' | 'callerState' | 'codeVerifier';

  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  /** Whose consent: the callback of one provider never takes a session of the other. */
  @Property({ type: 'text' })
  provider!: OAuthProvider;

  /** SHA-256 of the state sent to the provider: a leaked table does not let anyone complete a consent. */
  @Property({ type: 'text', unique: true })
  stateHash!: string;

  /** The caller's own state, returned unchanged. */
  @Property({ type: 'text', nullable: true })
  callerState: string | null = null;

  @Property({ type: 'text' })
  redirectUrl!: string;

  /** Sealed; null for a provider without PKCE. */
  @Property({ type: 'text', lazy: true, nullable: true })
  codeVerifier: string | null = null;

  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  @Enum({ items: () => OAuthSessionStatus, type: 'text' })
  status: OAuthSessionStatus = OAuthSessionStatus.PENDING;

  @ManyToOne(() => AlphaIdentity, { nullable: true, deleteRule: 'set null' })
  identity: AlphaIdentity | null = null;

  /** Whether the consent gave a refresh token (the callback's token_refreshed). */
  @Property({ type: 'boolean' })
  tokenRefreshed: boolean = false;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  completedAt: Date | null = null;
}
