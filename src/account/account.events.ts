import { defineRecordType } from '../activity/activity.enums';
import { Account } from './account.entity';

/** An account is its own account. */
export const accountRecordType = defineRecordType({
  name: 'account',
  key: 'ACCOUNT',
  entity: Account,
  owner: (account) => ({ organizationId: account.organization.id, accountId: account.id }),
});
