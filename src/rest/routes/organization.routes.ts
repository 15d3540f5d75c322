import { RestOrganizationAccountsDocument, RestOrganizationDocument } from '../../generated/graphql';
import { defineRoute, type RestRecord } from '../route';

/** The organization-list shape of an account: times in ms, reference_id absent when unset. */
export const organizationAccountRecord = { times: 'epochMs', absentWhenNull: ['Account.referenceId'] } as const satisfies Omit<RestRecord, 'at'>;

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
      ...organizationAccountRecord,
      at: 'accounts',
      // The document answers 404 when the organization has no accounts; GraphQL's `accounts` is simply empty.
      emptyList: { code: 'ORGANIZATION_NOT_FOUND', message: 'Organization accounts not found' },
    },
    // It runs the `accounts` query of GET /business-profile, whose read limit it shares.
    errors: ['ORGANIZATION_NOT_FOUND', 'RATE_LIMIT_EXCEEDED'],
  }),
];
