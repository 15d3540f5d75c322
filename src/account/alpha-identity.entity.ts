import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Organization } from '../organization/organization.entity';
import { newId } from '../shared/ids';

/**
 * A person's consent at the alpha provider, for one organization: who they are there (`subject`, the document's
 * alphaId) and the tokens their consent gave, sealed (src/shared/secret-box.ts). The accounts connected through it
 * call the provider with its access token, refreshed with its refresh token.
 */
@Entity({ tableName: 'alpha_identity' })
@Unique({ properties: ['organization', 'subject'] })
export class AlphaIdentity {
  [OptionalProps]?: 'id' | 'email' | 'name' | 'refreshToken' | 'createdAt' | 'updatedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  /** The identity provider's user id (`sub`). */
  @Property({ type: 'text' })
  subject!: string;

  @Property({ type: 'text', nullable: true })
  email: string | null = null;

  @Property({ type: 'text', nullable: true })
  name: string | null = null;

  /** Sealed. */
  @Property({ type: 'text', lazy: true })
  accessToken!: string;

  @Property({ type: 'timestamptz' })
  accessTokenExpiresAt!: Date;

  /** Sealed; null when the consent gave none (no offline access). */
  @Property({ type: 'text', nullable: true, lazy: true })
  refreshToken: string | null = null;

  @Property({ type: 'text[]' })
  scopes!: string[];

  /** Where this identity's flows return: the redirect_url of its latest consent. */
  @Property({ type: 'text' })
  redirectUrl!: string;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  updatedAt: Date = new Date();
}
