import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Organization } from '../organization/organization.entity';
import { newId } from '../shared/ids';

/**
 * A beta consent that linked a company of the beta provider to the organization: the company id (the document's
 * company_id, a brand's beta_company_id) and the tokens the consent gave, sealed.
 */
@Entity({ tableName: 'beta_connection' })
@Unique({ properties: ['organization', 'companyId'] })
export class BetaConnection {
  [OptionalProps]?: 'id' | 'refreshToken' | 'createdAt' | 'updatedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Property({ type: 'text' })
  companyId!: string;

  /** Sealed. */
  @Property({ type: 'text', lazy: true })
  accessToken!: string;

  @Property({ type: 'timestamptz' })
  accessTokenExpiresAt!: Date;

  /** Sealed. */
  @Property({ type: 'text', nullable: true, lazy: true })
  refreshToken: string | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  updatedAt: Date = new Date();
}
