import { RestOrganizationAccountsDocument, RestOrganizationDocument } from '../../generated/graphql';
import { defineRoute } from '../route';

export const organizationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/organization',
    operationId: 'getOrganization',
    summary: 'The organization of the token, with its accounts.',
    tag: 'Accounts and organization',
    organizationTokenOnly: true,
    operation: RestOrganizationDocument,
    variables: {},
    successStatus: 200,
    payload: { at: 'organization', times: 'epochMs' },
    errors: ['ORGANIZATION_NOT_FOUND'],
  }),
  defineRoute({
    method: 'GET',
    path: '/organization/accounts',
    operationId: 'listOrganizationAccounts',
    summary: 'The accounts of the organization (organization-list shape).',
    tag: 'Accounts and organization',
    organizationTokenOnly: true,
    operation: RestOrganizationAccountsDocument,
    variables: {},
    successStatus: 200,
    payload: {
      at: 'accounts',
      times: 'epochMs',
      absentWhenNull: ['Account.referenceId'],
      // The document answers 404 when the organization has no accounts; GraphQL's `accounts` is simply empty.
      emptyList: { code: 'ORGANIZATION_NOT_FOUND', message: 'Organization accounts not found' },
    },
    // It runs the `accounts` query of GET /business-profile, whose read limit it shares.
    errors: ['ORGANIZATION_NOT_FOUND', 'RATE_LIMIT_EXCEEDED'],
  }),
];
