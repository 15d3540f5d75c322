import {
  RestOrganizationAccountsDocument,
  RestOrganizationDocument,
  type RestOrganizationAccountFieldsFragment,
  type RestOrganizationFieldsFragment,
} from '../../generated/graphql';
import { DomainError } from '../../errors/domain-error';
import { epochMs, optional } from '../presenters';
import { defineRoute } from '../route';

export function presentOrganization(organization: RestOrganizationFieldsFragment) {
  return {
    id: organization.id,
    name: organization.name,
    accounts: organization.accounts.map((account) => ({ id: account.id, number_of_locations: account.numberOfLocations })),
    owners: organization.owners,
    created_at: epochMs(organization.createdAt),
    state: organization.state,
  };
}

/** The organization-list shape of an account. */
export function presentOrganizationAccount(account: RestOrganizationAccountFieldsFragment) {
  return {
    id: account.id,
    name: account.name,
    organization_id: account.organizationId,
    alpha_state: account.alphaState,
    created_at: epochMs(account.createdAt),
    country_codes: account.countryCodes,
    number_of_locations: account.numberOfLocations,
    ...optional('reference_id', account.referenceId),
  };
}

const organizationSchema = {
  type: 'object',
  required: ['id', 'name', 'accounts', 'owners', 'created_at', 'state'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    accounts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'number_of_locations'],
        properties: { id: { type: 'string' }, number_of_locations: { type: 'integer' } },
      },
    },
    owners: { type: 'array', items: { type: 'string' } },
    created_at: { type: 'integer', description: 'milliseconds since epoch' },
    state: { type: 'string', example: 'ACTIVE' },
  },
};

const organizationAccountSchema = {
  type: 'object',
  required: ['id', 'name', 'organization_id', 'alpha_state', 'created_at', 'country_codes', 'number_of_locations'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    organization_id: { type: 'string' },
    alpha_state: { type: 'string', example: 'VERIFIED' },
    created_at: { type: 'integer', description: 'milliseconds since epoch' },
    country_codes: { type: 'array', items: { type: 'string' } },
    number_of_locations: { type: 'integer' },
    reference_id: { type: 'string', description: 'absent when not set' },
  },
};

export const organizationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/organization',
    summary: 'The organization of the token, with its accounts.',
    tag: 'Accounts and organization',
    organizationTokenOnly: true,
    operation: RestOrganizationDocument,
    variables: {},
    successStatus: 200,
    present: (data) => presentOrganization(data.organization),
    payloadSchema: organizationSchema,
  }),
  defineRoute({
    method: 'GET',
    path: '/organization/accounts',
    summary: 'The accounts of the organization (organization-list shape).',
    tag: 'Accounts and organization',
    organizationTokenOnly: true,
    operation: RestOrganizationAccountsDocument,
    variables: {},
    successStatus: 200,
    present: (data) => {
      // The document answers 404 when the organization has no accounts; GraphQL's `accounts` is simply empty.
      if (data.accounts.length === 0) {
        throw new DomainError('ORGANIZATION_NOT_FOUND', 'Organization accounts not found');
      }
      return data.accounts.map(presentOrganizationAccount);
    },
    payloadSchema: { type: 'array', items: organizationAccountSchema },
  }),
];
