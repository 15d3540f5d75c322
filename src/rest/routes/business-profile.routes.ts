import {
  RestBusinessProfileDocument,
  RestUpdateBusinessProfileDocument,
  type RestBusinessProfileFieldsFragment,
} from '../../generated/graphql';
import { optional } from '../presenters';
import { bodyFields, defineRoute, query } from '../route';

/** The business-profile shape of an account: created_at is an ISO 8601 string here, as documented. */
export function presentBusinessProfile(account: RestBusinessProfileFieldsFragment) {
  return {
    id: account.id,
    ...optional('reference_id', account.referenceId),
    name: account.name,
    number_of_locations: account.numberOfLocations,
    created_at: account.createdAt,
  };
}

const businessProfileSchema = {
  type: 'object',
  required: ['id', 'name', 'number_of_locations', 'created_at'],
  properties: {
    id: { type: 'string' },
    reference_id: { type: 'string', description: 'absent when not set' },
    name: { type: 'string' },
    number_of_locations: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
  },
};

const tag = 'Accounts and organization';

export const businessProfileRoutes = [
  defineRoute({
    method: 'GET',
    path: '/business-profile',
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
    present: (data) => (data.account ? presentBusinessProfile(data.account) : (data.accounts ?? []).map(presentBusinessProfile)),
    payloadSchema: { oneOf: [businessProfileSchema, { type: 'array', items: businessProfileSchema }] },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/business-profile',
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
    present: (data) => presentBusinessProfile(data.updateAccount),
    payloadSchema: businessProfileSchema,
  }),
];
