import { Account } from '../account/account.entity';
import { ApiToken } from '../auth/api-token.entity';
import { Location } from '../location/location.entity';
import { Organization } from '../organization/organization.entity';

/** Every persisted entity, listed once for the ORM. */
export const entities = [Organization, Account, ApiToken, Location];
