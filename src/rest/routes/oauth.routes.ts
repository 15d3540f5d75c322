import { RestAlphaConsentAccountsDocument, RestConnectAccountDocument, RestDisconnectAccountDocument, RestGenerateAlphaUrlDocument, RestReconnectAccountDocument } from '../../generated/graphql';
import { body, defineRoute, query } from '../route';

const tag = 'Alpha account connection';

/** The query parameters connect, disconnect and reconnect share, with the document's names. */
const flowParameters = {
  uid: query('uid', 'user identifier (null for the external interface)'),
  externalApi: query('external_api', 'must be true'),
  state: query('state', 'returned unchanged in the url'),
};

/** The flows answer `{url, external_api: true}`: the url carries the outcome in its query parameters. */
const flowEnvelope = { bare: { external_api: true } } as const;

export const oauthRoutes = [
  defineRoute({
    method: 'POST',
    path: '/oauth/alpha/generate-url',
    operationId: 'generateAlphaConsentUrl',
    organizationTokenOnly: true,
    summary: 'The consent URL of the identity provider to send the person to (offline access, e-mail, profile, business management).',
    tag,
    operation: RestGenerateAlphaUrlDocument,
    variables: {
      redirectUrl: body('redirect_url', 'where the person returns: an absolute http(s) URL without credentials or fragment'),
      state: body('state', 'returned unchanged; at most 1024 characters'),
    },
    successStatus: 200,
    envelope: 'spread',
    payload: { times: 'epochMs', at: 'generateAlphaConsentUrl' },
    // CONSENT_SESSIONS_OPEN_LIMIT consents of the organization already wait for their callback.
    errors: ['RATE_LIMIT_EXCEEDED'],
  }),
  // Not a path of the interface document: how a REST caller learns the `id`s connect takes (docs/oauth.md).
  defineRoute({
    method: 'GET',
    path: '/oauth/alpha/accounts',
    operationId: 'listAlphaConsentAccounts',
    organizationTokenOnly: true,
    summary: 'After a completed consent, the accounts the person has at the provider (the ids connect takes), and whether the organization already has each.',
    tag,
    operation: RestAlphaConsentAccountsDocument,
    variables: {
      alphaId: query('alphaId', 'the identity-provider user id, from the callback'),
      first: query('first', 'accounts per page, 1 to 100, default 20'),
      after: query('after', 'the page_info.end_cursor of the previous page'),
    },
    successStatus: 200,
    envelope: 'spread',
    payload: { times: 'epochMs', at: 'alphaConsentAccounts' },
    // NOT_FOUND: no consent connect could use; SERVICE_UNAVAILABLE: the provider failed (Retry-After).
    errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  }),
  defineRoute({
    method: 'POST',
    path: '/connect/account',
    operationId: 'connectAlphaAccount',
    organizationTokenOnly: true,
    summary: 'Completes the connection after the callback; the account, its locations and reviews are imported by a job.',
    tag,
    operation: RestConnectAccountDocument,
    variables: {
      ...flowParameters,
      alphaId: query('alphaId', 'the identity-provider user id, from the callback'),
      id: query('id', 'the provider account to connect'),
      billingId: query('billing_id', 'the organization id, from the callback'),
    },
    successStatus: 200,
    envelope: flowEnvelope,
    payload: { times: 'epochMs', at: 'connectAlphaAccount' },
    errors: ['NOT_FOUND'],
  }),
  defineRoute({
    method: 'DELETE',
    path: '/disconnect/account',
    operationId: 'disconnectAlphaAccount',
    summary: 'Disconnects an account: it leaves the organization with its locations, posts and reviews.',
    tag,
    operation: RestDisconnectAccountDocument,
    variables: {
      ...flowParameters,
      alphaId: query('alphaId', 'the account to disconnect'),
      id: query('id', 'the profile id'),
    },
    successStatus: 200,
    envelope: flowEnvelope,
    payload: { times: 'epochMs', at: 'disconnectAlphaAccount' },
    errors: ['NOT_FOUND', 'CONFLICT'],
  }),
  defineRoute({
    method: 'POST',
    path: '/reconnect/account',
    operationId: 'reconnectAlphaAccount',
    summary: 'Refreshes a connection’s tokens and queues a full re-sync of the account.',
    tag,
    operation: RestReconnectAccountDocument,
    variables: {
      ...flowParameters,
      alphaId: query('alphaId', 'the identity-provider user id'),
      id: query('id', 'the profile (account) id'),
    },
    successStatus: 200,
    envelope: flowEnvelope,
    payload: { times: 'epochMs', at: 'reconnectAlphaAccount' },
    errors: ['NOT_FOUND'],
  }),
];
