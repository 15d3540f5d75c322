import { defineModule } from '../resource-module';
import { Account } from './account.entity';
import { accountRecordType } from './account.events';
import { AccountResolver } from './account.resolver';
import { AlphaIdentity } from './alpha-identity.entity';
import { OrganizationAccountsResolver } from './organization-accounts.resolver';

export const accountModule = defineModule({
  name: 'account',
  entities: [Account, AlphaIdentity],
  resolvers: [OrganizationAccountsResolver, AccountResolver],
  recordTypes: [accountRecordType],
});
