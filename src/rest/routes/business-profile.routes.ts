import { RestBusinessProfileDocument, RestUpdateBusinessProfileDocument } from '../../generated/graphql';
import { bodyFields, defineRoute, query, type RestRecord } from '../route';

/** The business-profile shape of an account: created_at is an ISO 8601 string here, as documented. */
const businessProfileRecord = {
  times: 'iso',
  absentWhenNull: ['Account.referenceId'],
} as const satisfies Omit<RestRecord, 'at'>;

const tag = 'Accounts and organization';

export const businessProfileRoutes = [
  defineRoute({
    method: 'GET',
    path: '/business-profile',
    operationId: 'getBusinessProfile',
    summary: 'One account by account_id and/or reference_id; with neither, every account of the organization.',
    tag,
    organizationTokenOnly: true,
    operation: RestBusinessProfileDocument,
    variables: {
      accountId: query('account_id', 'the account id'),
      referenceId: query('reference_id', "the caller's reference id of the account"),
    },
    derive: (read) => ({ one: Boolean(read.accountId || read.referenceId) }),
    successStatus: 200,
    payload: { ...businessProfileRecord, at: ['account', 'accounts'] },
    errors: ['NOT_FOUND', 'RATE_LIMIT_EXCEEDED'],
  }),
  defineRoute({
    method: 'PATCH',
    path: '/business-profile',
    operationId: 'updateBusinessProfile',
    summary: 'Renames an account or changes its reference id (only when looked up by account_id).',
    tag,
    organizationTokenOnly: true,
    operation: RestUpdateBusinessProfileDocument,
    variables: {
      accountId: query('account_id', 'the account id'),
      referenceId: query('reference_id', "the caller's reference id of the account"),
      input: bodyFields({ name: 'name', referenceId: 'reference_id' }),
    },
    successStatus: 200,
    payload: { ...businessProfileRecord, at: 'updateAccount' },
    errors: ['NOT_FOUND', 'CONFLICT', 'RATE_LIMIT_EXCEEDED'],
  }),
];
