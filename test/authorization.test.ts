import { buildClientSchema, getIntrospectionQuery, type GraphQLSchema, type IntrospectionQuery } from 'graphql';
import { randomBytes } from 'node:crypto';
import { routeTable } from '../src/rest/routes';
import { toNodeId } from '../src/graphql/node-id';
import { newId } from '../src/shared/ids';
import { formOf, submit, visit } from './support/browser';
import { connect, connectAlice, importEnded, runConsent } from './support/consent';
import { createOrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually, pollPost } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { postProbe, subscribe, updateJobProbe, type Probe, type Recorder } from './support/ws';
import { workProbe } from './support/async-work';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

/**
 * Whose accounts a token reaches (src/access/reach.ts): an organization token every account of its
 * organization, an account token its own account only. Every GraphQL operation of the served schema and every
 * route of the REST route table is run by three intruders naming the victim's ids: the account token of another
 * account of the victim's organization, and another organization's organization and account tokens. Each request
 * is sent once with the victim's ids and once with well-formed ids nobody has: the two answers must be the same
 * (status and body, apart from the ids themselves), the answer must reveal nothing of the victim, and at the end
 * every record of the victim is as it was. An operation or route added to the service without a case here fails
 * the first test until it is listed.
 */

/** The ids a request may name, of the victim, or of nobody (the same kinds, well-formed). */
interface Ids {
  /** The `account_id` that selects the account an operation acts in (ignored for account tokens). */
  scopeAccountId: string;
  /** An account as the thing acted on: looked up, updated, disconnected, given a token. */
  accountId: string;
  accountReferenceId: string;
  /** The provider's id of that account (`1001`). */
  alphaAccountId: string;
  /** The person at the provider who connected it (the flows' alphaId). */
  personId: string;
  /** A person whose consent the victim's organization completed but did not use yet, and their account. */
  pendingPersonId: string;
  pendingAlphaAccountId: string;
  organizationId: string;
  locationId: string;
  storeCode: string;
  placeId: string;
  postId: string;
  campaignId: string;
  updateJobId: string;
  /** A unit of asynchronous work (docs/async-work.md). */
  workId: string;
  reviewId: string;
  reviewName: string;
  scanId: string;
  segmentId: string;
  betaCompanyId: string;
  tokenId: string;
  /** A webhook endpoint of the organization (disabled: nothing is sent during the test). */
  webhookEndpointId: string;
  /** An activity event of the victim's records. */
  eventId: string;
  /** The global ids `node` takes (src/graphql/node.ts) of the records above. */
  accountNodeId: string;
  tokenNodeId: string;
  workNodeId: string;
  segmentNodeId: string;
  scanNodeId: string;
  locationNodeId: string;
  updateJobNodeId: string;
  postNodeId: string;
  reviewNodeId: string;
  webhookEndpointNodeId: string;
}

type NodeIdName = 'accountNodeId' | 'tokenNodeId' | 'workNodeId' | 'segmentNodeId' | 'scanNodeId' | 'locationNodeId' | 'updateJobNodeId' | 'postNodeId' | 'reviewNodeId' | 'webhookEndpointNodeId';

/** The ids with the global ids of their records, keyed as each record's `defineNode` says. */
function withNodeIds(ids: Omit<Ids, NodeIdName>): Ids {
  const inAccount = (name: string, id: string) => toNodeId(name, [ids.accountId, id]);
  return {
    ...ids,
    accountNodeId: toNodeId('Account', [ids.accountId]),
    tokenNodeId: toNodeId('ApiToken', [ids.tokenId]),
    workNodeId: toNodeId('AsyncWork', [ids.workId]),
    segmentNodeId: toNodeId('BetaBrand', [ids.segmentId]),
    scanNodeId: inAccount('CompetitorScan', ids.scanId),
    locationNodeId: inAccount('Location', ids.locationId),
    updateJobNodeId: inAccount('LocationUpdateJob', ids.updateJobId),
    postNodeId: inAccount('Post', ids.postId),
    reviewNodeId: inAccount('Review', ids.reviewId),
    webhookEndpointNodeId: toNodeId('WebhookEndpoint', [ids.webhookEndpointId]),
  };
}

const NODE_ID_NAMES: NodeIdName[] = ['accountNodeId', 'tokenNodeId', 'workNodeId', 'segmentNodeId', 'scanNodeId', 'locationNodeId', 'updateJobNodeId', 'postNodeId', 'reviewNodeId', 'webhookEndpointNodeId'];

/** What an intruder has of its own: its account, a location there, its organization, its person and beta company. */
interface Own {
  accountId: string;
  locationId: string;
  organizationId: string;
  personId: string;
  betaCompanyId: string;
}

interface Intruder {
  name: string;
  token: string;
  own: Own;
}

interface Request {
  method: string;
  path: string;
  body?: unknown;
}

const ATTACK = 'https://intruder.example/return';

/** The intruders, in the order beforeAll makes them. */
const INTRUDERS = [
  'the account token of another account of the organization',
  'another organization’s organization token',
  'another organization’s account token',
] as const;

// ---------------------------------------------------------------------------------------------------------------
// One case per GraphQL query and mutation, each with the requests it is tried with.

interface GraphQLCase {
  document: string;
  variables: (ids: Ids, own: Own) => Record<string, unknown>;
}

const post = { summary: 'Intruder news' };

const GRAPHQL_CASES: Record<string, GraphQLCase[]> = {
  account: [
    { document: 'query ($id: ID) { account(id: $id) { id name referenceId } }', variables: (ids) => ({ id: ids.accountId }) },
    { document: 'query ($r: String) { account(referenceId: $r) { id name referenceId } }', variables: (ids) => ({ r: ids.accountReferenceId }) },
  ],
  accounts: [{ document: 'query { accounts { id name } }', variables: () => ({}) }],
  accountsConnection: [{ document: 'query { accountsConnection(first: 50) { totalCount edges { cursor node { id name nodeId } } } }', variables: () => ({}) }],
  node: NODE_ID_NAMES.map((name) => ({
    document: 'query ($n: ID!) { node(nodeId: $n) { __typename nodeId ... on Account { id name } ... on Post { id } ... on Location { id name } ... on Review { id comment } } }',
    variables: (ids: Ids) => ({ n: ids[name] }),
  })),
  asyncWork: [
    {
      document: 'query ($a: ID) { asyncWork(accountId: $a, first: 50) { totalCount edges { node { id kind subjectId accountId } } } }',
      variables: (ids) => ({ a: ids.scopeAccountId }),
    },
  ],
  events: [
    {
      document: 'query ($a: ID, $r: ID) { events(accountId: $a, recordId: $r, first: 50) { totalCount edges { node { id type recordId accountId } } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, r: ids.postId }),
    },
  ],
  eventsPage: [
    {
      document: 'query ($a: ID, $r: ID) { eventsPage(accountId: $a, recordId: $r) { found events { id type recordId accountId } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, r: ids.postId }),
    },
  ],
  asyncWorkCounts: [{ document: 'query ($a: ID) { asyncWorkCounts(accountId: $a) { kind status count } }', variables: (ids) => ({ a: ids.scopeAccountId }) }],
  asyncWorkItem: [{ document: 'query ($id: ID!) { asyncWorkItem(id: $id) { id kind subjectId } }', variables: (ids) => ({ id: ids.workId }) }],
  providerHealth: [{ document: 'query { providerHealth { provider calls } }', variables: () => ({}) }],
  providerBudgets: [{ document: 'query { providerBudgets { provider pausedUntil waitingWork nextWaitingDueAt } }', variables: () => ({}) }],
  retryAsyncWork: [{ document: 'mutation ($id: ID!) { retryAsyncWork(id: $id) { id status } }', variables: (ids) => ({ id: ids.workId }) }],
  apiTokens: [{ document: 'query ($a: ID) { apiTokens(accountId: $a) { id accountId } }', variables: (ids) => ({ a: ids.accountId }) }],
  apiTokensConnection: [
    {
      document: 'query ($a: ID) { apiTokensConnection(accountId: $a, includeRevoked: true, first: 10) { totalCount nodes { id accountId nodeId } } }',
      variables: (ids) => ({ a: ids.accountId }),
    },
  ],
  betaBrand: [{ document: 'query ($s: String!) { betaBrand(segmentId: $s) { segmentId brandName } }', variables: (ids) => ({ s: ids.segmentId }) }],
  betaBrands: [{ document: 'query { betaBrands { segmentId brandName } }', variables: () => ({}) }],
  betaBrandsConnection: [{ document: 'query { betaBrandsConnection(first: 10) { totalCount nodes { segmentId brandName nodeId } } }', variables: () => ({}) }],
  competitorScan: [
    { document: 'query ($a: ID, $s: ID) { competitorScan(accountId: $a, scanId: $s) { id status text } }', variables: (ids) => ({ a: ids.scopeAccountId, s: ids.scanId }) },
    { document: 'query ($a: ID, $l: ID) { competitorScan(accountId: $a, locationId: $l) { id status text } }', variables: (ids) => ({ a: ids.scopeAccountId, l: ids.locationId }) },
    { document: 'query ($a: ID, $p: String) { competitorScan(accountId: $a, placeId: $p) { id status text } }', variables: (ids) => ({ a: ids.scopeAccountId, p: ids.placeId }) },
  ],
  competitorScans: [
    {
      document: 'query ($a: ID, $l: ID) { competitorScans(accountId: $a, locationId: $l, first: 10) { totalCount edges { node { id } } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, l: ids.locationId }),
    },
  ],
  location: [{ document: 'query ($a: ID, $id: ID!) { location(accountId: $a, id: $id) { id name } }', variables: (ids) => ({ a: ids.scopeAccountId, id: ids.locationId }) }],
  locationUpdateJob: [
    { document: 'query ($a: ID, $id: ID!) { locationUpdateJob(accountId: $a, id: $id) { id status } }', variables: (ids) => ({ a: ids.scopeAccountId, id: ids.updateJobId }) },
  ],
  locationUpdateJobs: [
    {
      document: 'query ($a: ID, $l: ID) { locationUpdateJobs(accountId: $a, locationId: $l, page: 1, perPage: 10) { found updates { id } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, l: ids.locationId }),
    },
    {
      document: 'query ($a: ID, $id: ID) { locationUpdateJobs(accountId: $a, id: $id, page: 1, perPage: 10) { found updates { id } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, id: ids.updateJobId }),
    },
  ],
  locationUpdateJobsConnection: [
    {
      document: 'query ($a: ID, $l: ID) { locationUpdateJobsConnection(accountId: $a, locationId: $l, first: 10) { totalCount edges { node { id nodeId } } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, l: ids.locationId }),
    },
  ],
  locationUpdateJobsPage: [
    {
      document: 'query ($a: ID, $id: ID) { locationUpdateJobsPage(accountId: $a, id: $id, page: 1, perPage: 10) { found updates { id } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, id: ids.updateJobId }),
    },
  ],
  locations: [
    {
      document: 'query ($a: ID, $s: String) { locations(accountId: $a, storeCode: $s, first: 10) { totalCount edges { node { id name } } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, s: ids.storeCode }),
    },
  ],
  locationsPage: [
    {
      document: 'query ($a: ID, $s: String) { locationsPage(accountId: $a, storeCode: $s, page: 1, perPage: 10) { found locations { id name } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, s: ids.storeCode }),
    },
  ],
  organization: [{ document: 'query { organization { id name accounts { id name } } }', variables: () => ({}) }],
  post: [{ document: 'query ($a: ID, $id: ID!) { post(accountId: $a, id: $id) { id state params { summary } } }', variables: (ids) => ({ a: ids.scopeAccountId, id: ids.postId }) }],
  posts: [
    {
      document: 'query ($a: ID, $l: ID) { posts(accountId: $a, locationId: $l, first: 10) { totalCount edges { node { id } } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, l: ids.locationId }),
    },
    {
      document: 'query ($a: ID, $c: ID) { posts(accountId: $a, campaignId: $c, first: 10) { totalCount edges { node { id } } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, c: ids.campaignId }),
    },
  ],
  postsPage: [
    {
      document: 'query ($a: ID, $l: ID) { postsPage(accountId: $a, locationId: $l, page: 1, perPage: 10) { found posts { id } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, l: ids.locationId }),
    },
  ],
  review: [
    { document: 'query ($a: ID, $id: ID!) { review(accountId: $a, id: $id) { id name comment } }', variables: (ids) => ({ a: ids.scopeAccountId, id: ids.reviewId }) },
    { document: 'query ($a: ID, $id: ID!) { review(accountId: $a, id: $id) { id name comment } }', variables: (ids) => ({ a: ids.scopeAccountId, id: ids.reviewName }) },
  ],
  reviews: [
    {
      document: 'query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l, first: 10) { totalCount edges { node { id comment } } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, l: ids.locationId }),
    },
  ],
  answerReview: [
    {
      document: 'mutation ($a: ID, $r: String!) { answerReview(accountId: $a, reviewId: $r, answer: "Taken over") { message review { id } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, r: ids.reviewName }),
    },
  ],
  connectAlphaAccount: [
    {
      document: 'mutation ($p: ID!, $id: ID!, $b: ID!) { connectAlphaAccount(alphaId: $p, id: $id, billingId: $b, state: "s") { url status errorMessage account { id } } }',
      variables: (ids) => ({ p: ids.pendingPersonId, id: ids.pendingAlphaAccountId, b: ids.organizationId }),
    },
    {
      document: 'mutation ($p: ID!, $id: ID!, $b: ID!) { connectAlphaAccount(alphaId: $p, id: $id, billingId: $b) { url status errorMessage account { id } } }',
      variables: (ids, own) => ({ p: ids.pendingPersonId, id: ids.pendingAlphaAccountId, b: own.organizationId }),
    },
  ],
  alphaConsentAccounts: [
    {
      document: 'query ($p: ID!) { alphaConsentAccounts(alphaId: $p) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id name type connected accountId } } } }',
      variables: (ids) => ({ p: ids.pendingPersonId }),
    },
    { document: 'query ($p: ID!) { alphaConsentAccounts(alphaId: $p, first: 1) { nodes { id name connected accountId } } }', variables: (ids) => ({ p: ids.personId }) },
  ],
  createAccountToken: [{ document: 'mutation ($a: ID!) { createAccountToken(accountId: $a) { token apiToken { id accountId } } }', variables: (ids) => ({ a: ids.accountId }) }],
  createBetaBrand: [
    {
      document: 'mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId locations } }',
      variables: (ids, own) => ({
        input: { betaCompanyId: own.betaCompanyId, brandName: 'Intruder', countryCode: 'US', primaryCategory: 'cafe', ownershipType: 'BRAND_OWNER', locationIds: [ids.locationId] },
      }),
    },
    {
      document: 'mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId locations } }',
      variables: (ids) => ({
        input: { betaCompanyId: ids.betaCompanyId, brandName: 'Intruder', countryCode: 'US', primaryCategory: 'cafe', ownershipType: 'BRAND_OWNER' },
      }),
    },
  ],
  createLocation: [
    {
      document: 'mutation ($a: ID, $input: CreateLocationInput!) { createLocation(accountId: $a, input: $input) { id name } }',
      variables: (ids) => ({ a: ids.scopeAccountId, input: { name: 'Intruder shop', categoryId: 'gcid:cafe', countryCode: 'US', address: '1 Main St', city: 'Springfield', postal: '12345' } }),
    },
  ],
  createPost: [
    {
      document: 'mutation ($a: ID, $input: CreatePostInput!) { createPost(accountId: $a, input: $input) { post { id } replayed } }',
      variables: (ids) => ({ a: ids.scopeAccountId, input: { locationId: ids.locationId, params: post } }),
    },
  ],
  createPostCampaign: [
    {
      document: 'mutation ($a: ID, $input: CreatePostCampaignInput!) { createPostCampaign(accountId: $a, input: $input) { campaignId posts { id } } }',
      variables: (ids) => ({ a: ids.scopeAccountId, input: { locationIds: [ids.locationId], params: post } }),
    },
  ],
  deleteBetaBrand: [{ document: 'mutation ($s: String!) { deleteBetaBrand(segmentId: $s) { segmentId deleted } }', variables: (ids) => ({ s: ids.segmentId }) }],
  deletePost: [{ document: 'mutation ($a: ID, $id: ID!) { deletePost(accountId: $a, id: $id) { id state message } }', variables: (ids) => ({ a: ids.scopeAccountId, id: ids.postId }) }],
  disableCitations: [
    { document: 'mutation ($a: ID, $l: ID!) { disableCitations(accountId: $a, locationId: $l) { message locationId removed } }', variables: (ids) => ({ a: ids.scopeAccountId, l: ids.locationId }) },
  ],
  disconnectAlphaAccount: [
    { document: 'mutation ($x: ID!) { disconnectAlphaAccount(alphaId: $x, state: "s") { url status } }', variables: (ids) => ({ x: ids.accountId }) },
    { document: 'mutation ($x: ID!) { disconnectAlphaAccount(alphaId: $x, state: "s") { url status } }', variables: (ids) => ({ x: ids.alphaAccountId }) },
    { document: 'mutation ($x: ID!, $id: ID) { disconnectAlphaAccount(alphaId: $x, id: $id) { url status } }', variables: (ids) => ({ x: ids.personId, id: ids.accountId }) },
  ],
  generateAlphaConsentUrl: [{ document: 'mutation ($r: String!) { generateAlphaConsentUrl(redirectUrl: $r, state: "s") { url } }', variables: () => ({ r: ATTACK }) }],
  generateBetaConsentUrl: [{ document: 'mutation ($r: String!) { generateBetaConsentUrl(redirectUrl: $r) { url state } }', variables: () => ({ r: ATTACK }) }],
  reconnectAlphaAccount: [
    {
      document: 'mutation ($p: ID!, $id: ID!) { reconnectAlphaAccount(alphaId: $p, id: $id, state: "s") { url status errorMessage account { id } } }',
      variables: (ids) => ({ p: ids.personId, id: ids.accountId }),
    },
    {
      document: 'mutation ($p: ID!, $id: ID!) { reconnectAlphaAccount(alphaId: $p, id: $id, state: "s") { url status errorMessage account { id } } }',
      variables: (ids) => ({ p: ids.personId, id: ids.alphaAccountId }),
    },
    {
      document: 'mutation ($p: ID!, $id: ID!) { reconnectAlphaAccount(alphaId: $p, id: $id, state: "s") { url status errorMessage account { id } } }',
      variables: (ids, own) => ({ p: own.personId, id: ids.accountId }),
    },
  ],
  revokeApiToken: [{ document: 'mutation ($id: ID!) { revokeApiToken(id: $id) { id revokedAt } }', variables: (ids) => ({ id: ids.tokenId }) }],
  runCompetitorScan: [
    {
      document: 'mutation ($a: ID, $l: ID!) { runCompetitorScan(accountId: $a, locationId: $l, text: "bakery", radiusKm: 1, rings: 0) { id status } }',
      variables: (ids) => ({ a: ids.scopeAccountId, l: ids.locationId }),
    },
  ],
  updateAccount: [
    { document: 'mutation ($id: ID) { updateAccount(where: { id: $id }, input: { name: "Taken over" }) { id name } }', variables: (ids) => ({ id: ids.accountId }) },
    { document: 'mutation ($r: String) { updateAccount(where: { referenceId: $r }, input: { name: "Taken over" }) { id name } }', variables: (ids) => ({ r: ids.accountReferenceId }) },
  ],
  updateBetaBrand: [
    { document: 'mutation ($s: String!) { updateBetaBrand(segmentId: $s, input: { brandName: "Taken over" }) { segmentId brandName } }', variables: (ids) => ({ s: ids.segmentId }) },
  ],
  updateLocation: [
    {
      document: 'mutation ($a: ID, $l: ID!) { updateLocation(accountId: $a, locationId: $l, input: { websiteUri: "https://intruder.example" }) { id message } }',
      variables: (ids) => ({ a: ids.scopeAccountId, l: ids.locationId }),
    },
  ],
  webhookEndpoints: [{ document: 'query { webhookEndpoints(first: 10) { totalCount nodes { id url } } }', variables: () => ({}) }],
  webhookEndpointsPage: [{ document: 'query { webhookEndpointsPage(page: 1, perPage: 10) { found endpoints { id url } } }', variables: () => ({}) }],
  webhookEndpoint: [{ document: 'query ($id: ID!) { webhookEndpoint(id: $id) { id url } }', variables: (ids) => ({ id: ids.webhookEndpointId }) }],
  webhookDeliveries: [
    { document: 'query ($e: ID!) { webhookDeliveries(endpointId: $e, first: 10) { totalCount nodes { id eventId } } }', variables: (ids) => ({ e: ids.webhookEndpointId }) },
  ],
  webhookDeliveriesPage: [
    { document: 'query ($e: ID!) { webhookDeliveriesPage(endpointId: $e, page: 1, perPage: 10) { found deliveries { id eventId } } }', variables: (ids) => ({ e: ids.webhookEndpointId }) },
  ],
  createWebhookEndpoint: [
    { document: 'mutation { createWebhookEndpoint(input: { url: "https://intruder.example/hook", eventTypes: [POST_STATE_CHANGED], enabled: false }) { endpoint { id } } }', variables: () => ({}) },
  ],
  updateWebhookEndpoint: [
    { document: 'mutation ($id: ID!) { updateWebhookEndpoint(id: $id, input: { url: "https://intruder.example/hook" }) { id url } }', variables: (ids) => ({ id: ids.webhookEndpointId }) },
  ],
  deleteWebhookEndpoint: [{ document: 'mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { id deleted } }', variables: (ids) => ({ id: ids.webhookEndpointId }) }],
  rotateWebhookSecret: [{ document: 'mutation ($id: ID!) { rotateWebhookSecret(id: $id) { secret endpoint { id } } }', variables: (ids) => ({ id: ids.webhookEndpointId }) }],
  pingWebhookEndpoint: [{ document: 'mutation ($id: ID!) { pingWebhookEndpoint(id: $id) { id } }', variables: (ids) => ({ id: ids.webhookEndpointId }) }],
  triggerTestEvent: [{ document: 'mutation { triggerTestEvent(type: ACCOUNT_CONNECTED) { id type } }', variables: () => ({}) }],
  redeliverWebhookEvent: [
    { document: 'mutation ($e: ID!, $ev: ID!) { redeliverWebhookEvent(endpointId: $e, eventId: $ev) { id } }', variables: (ids) => ({ e: ids.webhookEndpointId, ev: ids.eventId }) },
  ],
};

// ---------------------------------------------------------------------------------------------------------------
// One case per REST route of the route table.

type RestCase = (ids: Ids, own: Own) => { path?: Record<string, string>; query?: Record<string, string>; body?: unknown };

const flow = { external_api: 'true', state: 's' };

const REST_CASES: Record<string, RestCase[]> = {
  'GET /organization': [() => ({})],
  'GET /organization/accounts': [() => ({})],
  'GET /business-profile': [(ids) => ({ query: { account_id: ids.accountId } }), (ids) => ({ query: { reference_id: ids.accountReferenceId } })],
  'PATCH /business-profile': [
    (ids) => ({ query: { account_id: ids.accountId }, body: { name: 'Taken over' } }),
    (ids) => ({ query: { reference_id: ids.accountReferenceId }, body: { name: 'Taken over' } }),
  ],
  'POST /post': [(ids) => ({ query: { account_id: ids.scopeAccountId }, body: { location_id: ids.locationId, params: post } })],
  'GET /post': [(ids) => ({ query: { account_id: ids.scopeAccountId, location_id: ids.locationId } })],
  'GET /post/:id': [(ids) => ({ path: { id: ids.postId }, query: { account_id: ids.scopeAccountId } })],
  'DELETE /post/:id': [(ids) => ({ path: { id: ids.postId }, query: { account_id: ids.scopeAccountId } })],
  'POST /location': [
    (ids) => ({ query: { account_id: ids.scopeAccountId }, body: { name: 'Intruder shop', category_id: 'gcid:cafe', country_code: 'US', address: '1 Main St', city: 'Springfield', postal: '12345' } }),
  ],
  'GET /location': [(ids) => ({ query: { account_id: ids.scopeAccountId, store_code: ids.storeCode } })],
  'PATCH /location/update': [(ids) => ({ query: { account_id: ids.scopeAccountId, location_id: ids.locationId }, body: { website_uri: 'https://intruder.example' } })],
  'GET /location/updates': [
    (ids) => ({ query: { account_id: ids.scopeAccountId, location_id: ids.locationId } }),
    (ids) => ({ query: { account_id: ids.scopeAccountId, id: ids.updateJobId } }),
  ],
  'GET /events': [
    (ids) => ({ query: { account_id: ids.scopeAccountId } }),
    (ids) => ({ query: { account_id: ids.scopeAccountId, record_id: ids.postId } }),
  ],
  'POST /citations/disable': [(ids) => ({ query: { account_id: ids.scopeAccountId }, body: { location_id: ids.locationId } })],
  'POST /review/answer': [(ids) => ({ query: { account_id: ids.scopeAccountId }, body: { review_id: ids.reviewName, answer: 'Taken over' } })],
  'POST /oauth/alpha/generate-url': [() => ({ body: { redirect_url: ATTACK, state: 's' } })],
  'GET /oauth/alpha/accounts': [(ids) => ({ query: { alphaId: ids.pendingPersonId } }), (ids) => ({ query: { alphaId: ids.personId, first: '1' } })],
  'POST /connect/account': [
    (ids) => ({ query: { uid: 'null', alphaId: ids.pendingPersonId, id: ids.pendingAlphaAccountId, billing_id: ids.organizationId, ...flow } }),
    (ids, own) => ({ query: { uid: 'null', alphaId: ids.pendingPersonId, id: ids.pendingAlphaAccountId, billing_id: own.organizationId, ...flow } }),
  ],
  'DELETE /disconnect/account': [
    (ids) => ({ query: { alphaId: ids.accountId, ...flow } }),
    (ids) => ({ query: { alphaId: ids.alphaAccountId, ...flow } }),
    (ids) => ({ query: { alphaId: ids.personId, id: ids.accountId, ...flow } }),
  ],
  'POST /reconnect/account': [
    (ids) => ({ query: { alphaId: ids.personId, id: ids.accountId, ...flow } }),
    (ids) => ({ query: { alphaId: ids.personId, id: ids.alphaAccountId, ...flow } }),
    (ids, own) => ({ query: { alphaId: own.personId, id: ids.accountId, ...flow } }),
  ],
  'POST /oauth/beta/generate-url': [() => ({ body: { redirect_url: ATTACK, state: 's' } })],
  'GET /beta/brands/:segment_id': [(ids) => ({ path: { segment_id: ids.segmentId } })],
  'PATCH /beta/brands/:segment_id': [(ids) => ({ path: { segment_id: ids.segmentId }, body: { brand_name: 'Taken over' } })],
  'DELETE /beta/brands/:segment_id': [(ids) => ({ path: { segment_id: ids.segmentId } })],
  'GET /competitor-scan': [
    (ids) => ({ query: { account_id: ids.scopeAccountId, scanId: ids.scanId } }),
    (ids) => ({ query: { account_id: ids.scopeAccountId, location_id: ids.locationId } }),
    (ids) => ({ query: { account_id: ids.scopeAccountId, placeId: ids.placeId } }),
  ],
  // Organization tokens only (docs/webhooks.md); the victim's endpoint is disabled, so nothing is sent meanwhile.
  'GET /webhooks': [() => ({ query: { page: '1', per_page: '10' } })],
  'POST /webhooks': [() => ({ body: { url: 'https://intruder.example/hook', event_types: ['POST_STATE_CHANGED'], enabled: false } })],
  'GET /webhooks/:id': [(ids) => ({ path: { id: ids.webhookEndpointId } })],
  'PATCH /webhooks/:id': [(ids) => ({ path: { id: ids.webhookEndpointId }, body: { url: 'https://intruder.example/hook', enabled: true } })],
  'DELETE /webhooks/:id': [(ids) => ({ path: { id: ids.webhookEndpointId } })],
  'POST /webhooks/:id/rotate-secret': [(ids) => ({ path: { id: ids.webhookEndpointId } })],
  'POST /webhooks/:id/ping': [(ids) => ({ path: { id: ids.webhookEndpointId } })],
  'GET /webhooks/:id/deliveries': [(ids) => ({ path: { id: ids.webhookEndpointId } }), (ids) => ({ path: { id: ids.webhookEndpointId }, query: { event_id: ids.eventId } })],
  'POST /webhooks/:id/redeliver': [(ids) => ({ path: { id: ids.webhookEndpointId }, body: { event_id: ids.eventId } })],
};

// ---------------------------------------------------------------------------------------------------------------
// One case per subscription field: the filters it is subscribed with.

interface SubscriptionCase {
  document: string;
  variables: (ids: Ids) => Record<string, unknown>;
  /** A probe event of the intruder's own scope that the filter lets through (proves the subscription is live). */
  probe: (own: Own, variables: Record<string, unknown>) => Probe;
}

const POST_UPDATED = 'subscription ($p: ID, $l: ID) { postUpdated(postId: $p, locationId: $l) { id version state accountId params { summary } } }';
const WORK_UPDATED = 'subscription ($a: ID) { asyncWorkUpdated(accountId: $a) { id version status accountId subjectId } }';
const JOB_UPDATED = 'subscription ($j: ID, $l: ID) { locationUpdateJobUpdated(jobId: $j, locationId: $l) { id version status accountId } }';

const SUBSCRIPTION_CASES: Record<string, SubscriptionCase[]> = {
  postUpdated: [
    { document: POST_UPDATED, variables: (ids) => ({ p: ids.postId }), probe: (own, v) => postProbeOf(own, v) },
    { document: POST_UPDATED, variables: (ids) => ({ l: ids.locationId }), probe: (own, v) => postProbeOf(own, v) },
    { document: POST_UPDATED, variables: () => ({}), probe: (own, v) => postProbeOf(own, v) },
  ],
  asyncWorkUpdated: [
    { document: WORK_UPDATED, variables: (ids) => ({ a: ids.scopeAccountId }), probe: (own, v) => workProbeOf(own, v) },
    { document: WORK_UPDATED, variables: () => ({}), probe: (own, v) => workProbeOf(own, v) },
  ],
  locationUpdateJobUpdated: [
    { document: JOB_UPDATED, variables: (ids) => ({ j: ids.updateJobId }), probe: (own, v) => jobProbeOf(own, v) },
    { document: JOB_UPDATED, variables: (ids) => ({ l: ids.locationId }), probe: (own, v) => jobProbeOf(own, v) },
    { document: JOB_UPDATED, variables: () => ({}), probe: (own, v) => jobProbeOf(own, v) },
  ],
};

/**
 * Subscriptions whose messages carry no record of their own (no id and version to tell a probe by): each has a case
 * of its own below, 'subscriptions naming the victim’s ids'.
 */
const SUBSCRIPTIONS_OF_THEIR_OWN_CASE = ['eventStream'];

/**
 * A probe of asyncWorkUpdated: a unit of work at version 0 (no real one has it) of the intruder's own organization,
 * sent as of its own account and as of the account the subscription names: an organization token's filter lets the
 * second through, an account token's (which ignores the argument) the first; the recorder needs one.
 */
function workProbeOf(own: Own, variables: Record<string, unknown>): Probe {
  return workProbe(t.stack.runtime.events, { organizationId: own.organizationId, accountIds: [own.accountId, (variables.a as string | undefined) ?? own.accountId] });
}

function postProbeOf(own: Own, variables: Record<string, unknown>): Probe {
  return postProbe(t.stack.runtime.events, {
    organizationId: own.organizationId,
    accountId: own.accountId,
    locationId: (variables.l as string | undefined) ?? own.locationId,
    postId: variables.p as string | undefined,
  });
}

function jobProbeOf(own: Own, variables: Record<string, unknown>): Probe {
  return updateJobProbe(t.stack.runtime.events, {
    organizationId: own.organizationId,
    accountId: own.accountId,
    locationId: (variables.l as string | undefined) ?? own.locationId,
    jobId: variables.j as string | undefined,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The victim, the intruders, and what is compared.

let t: TestStack;
let schema: GraphQLSchema;
let victim: Ids;
let nobody: Ids;
/** The victim's own tokens: its organization's and its account's (for the events the subscriptions must not see). */
let victimTokens: { organization: string; account: string };
let intruders: Intruder[];
/** What the victim has that no intruder may see: ids and names (values of 8 characters or more). */
let victimSecrets: string[];
let before: Record<string, unknown[]>;
/** How much was tried, for the summary line. */
const stats = { requests: 0, compared: 0, subscriptions: 0 };
let attackStartedAt: Date;

const hex = (bytes = 6) => randomBytes(bytes).toString('hex');
const urlOf = (url: string) => new URL(url).searchParams;

async function gql<T = any>(token: string, document: string, variables: Record<string, unknown> = {}): Promise<T> {
  const answer = await graphql(t.url, document, { token, variables });
  if (answer.body.errors) throw new Error(`${document}: ${JSON.stringify(answer.body.errors)}`);
  return answer.body.data as T;
}

/** A beta consent for a company, as the person's browser goes through it. */
async function linkBetaCompany(token: string, company: string): Promise<void> {
  const generated = await http(t.url, 'POST', '/oauth/beta/generate-url', { token, body: { redirect_url: 'https://app.example/beta' } });
  expect(generated.status).toBe(200);
  const page = await visit(generated.body.url);
  const toCallback = await submit(formOf(page.body, generated.body.url), { button: ['decision', 'approve'], select: company });
  const landed = urlOf((await visit(toCallback.location!)).location!);
  expect(landed.get('company_id')).toBe(company);
}

async function sql<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
  return await t.em().getConnection().execute<T[]>(text, values);
}

/**
 * Every row of the victim's organization, in every table that has one (by organization, account or location),
 * as text. The rate-limit and usage counters are left out: they count the callers' requests, not the victim's data.
 */
async function victimRows(organizationId: string): Promise<Record<string, unknown[]>> {
  const columns = await sql<{ table_name: string; column_name: string }>(
    `select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and column_name in ('organization_id', 'account_id', 'location_id')
        and table_name not in ('rate_limit_event', 'usage_counter') order by table_name, column_name`,
  );
  const owned = {
    organization_id: '= ?',
    account_id: 'in (select id from account where organization_id = ?)',
    location_id: 'in (select l.id from location l join account a on a.id = l.account_id where a.organization_id = ?)',
  } as Record<string, string>;
  const tables = [...new Set(columns.map((column) => column.table_name))];
  const snapshot: Record<string, unknown[]> = { organization: await sql('select * from organization where id = ?', [organizationId]) };
  for (const table of tables) {
    const conditions = columns.filter((column) => column.table_name === table).map((column) => `"${column.column_name}" ${owned[column.column_name]}`);
    snapshot[table] = await sql(`select * from "${table}" t where ${conditions.join(' or ')} order by t::text`, conditions.map(() => organizationId));
  }
  return snapshot;
}

/** Replaces each of `values` (whole, also URL-encoded) by its name, so two answers about different ids compare. */
function normalized(text: string, values: [string, string][]): string {
  let result = text;
  const escape = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const [name, value] of [...values].sort((a, b) => b[1].length - a[1].length)) {
    for (const form of new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)])) {
      result = result.replace(new RegExp(`(?<![A-Za-z0-9])${escape(form)}(?![A-Za-z0-9])`, 'g'), `<${name}>`);
    }
  }
  return result;
}

/** The ids a request carries, by name: those of `ids` that appear in it. */
function carried(request: string, ids: Ids): [string, string][] {
  return (Object.entries(ids) as [string, string][]).filter(([, value]) => request.includes(value) || request.includes(encodeURIComponent(value)));
}

interface Finding {
  intruder: string;
  what: string;
  problem: string;
}

/**
 * Sends a request built with the victim's ids and the same built with nobody's: the answers must be the same but
 * for the ids, and neither may carry anything of the victim's that the request did not name. A request naming no
 * id of the victim (generate-url) is sent once, for the second check only.
 */
async function probeBoth(
  intruder: Intruder,
  what: string,
  build: (ids: Ids) => Request,
  findings: Finding[],
): Promise<void> {
  const scopes: ('victim' | 'own')[] = ['victim', 'own'];
  const sent = new Set<string>();
  for (const scope of scopes) {
    const withScope = (ids: Ids): Ids => ({ ...ids, scopeAccountId: scope === 'own' ? intruder.own.accountId : ids.scopeAccountId });
    const foreignRequest = build(withScope(victim));
    const key = JSON.stringify(foreignRequest);
    // The own-account variant differs only where a request has an account_id.
    if (sent.has(key)) continue;
    sent.add(key);
    const label = `${what} ${key.length > 300 ? `${key.slice(0, 300)}…` : key}`;
    const foreignIds = carried(key, victim);
    const foreign = await send(intruder.token, foreignRequest);
    stats.requests += 1;
    const leaked = victimSecrets.filter((secret) => !foreignIds.some(([, value]) => value === secret) && normalized(foreign, foreignIds).includes(secret));
    if (leaked.length > 0) findings.push({ intruder: intruder.name, what: label, problem: `reveals ${leaked.join(', ')}: ${foreign.slice(0, 400)}` });
    if (foreignIds.length === 0) continue;
    const unknownRequest = build(withScope(nobody));
    const unknown = await send(intruder.token, unknownRequest);
    stats.requests += 1;
    stats.compared += 1;
    const asForeign = normalized(foreign, foreignIds);
    const asUnknown = normalized(unknown, carried(JSON.stringify(unknownRequest), nobody));
    if (asForeign !== asUnknown) {
      findings.push({ intruder: intruder.name, what: label, problem: `foreign ids answer\n  ${asForeign.slice(0, 500)}\nunknown ids answer\n  ${asUnknown.slice(0, 500)}` });
    }
  }
}

/** The answer as one text: status and body. */
async function send(token: string, request: Request): Promise<string> {
  const answer = await http(t.url, request.method, request.path, { token, body: request.body });
  return `${answer.status} ${JSON.stringify(answer.body)}`;
}

function restRequest(method: string, routePath: string, parts: ReturnType<RestCase>): Request {
  const path = routePath.replace(/:(\w+)/g, (_match, name: string) => encodeURIComponent(parts.path?.[name] ?? ''));
  const query = parts.query ? `?${new URLSearchParams(parts.query)}` : '';
  return { method, path: `${path}${query}`, body: parts.body };
}

function rootFieldNames(kind: 'query' | 'mutation' | 'subscription'): string[] {
  const type = kind === 'query' ? schema.getQueryType() : kind === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  return Object.keys(type?.getFields() ?? {}).sort();
}

beforeAll(async () => {
  t = await startTestStack({
    POST_RATE_LIMIT_PER_MINUTE: '100000',
    LOCATION_CREATE_RATE_LIMIT_PER_MINUTE: '100000',
    LOCATION_READ_RATE_LIMIT_PER_MINUTE: '100000',
    LOCATION_UPDATE_RATE_LIMIT_PER_HOUR: '100000',
    BUSINESS_PROFILE_READ_RATE_LIMIT_PER_MINUTE: '100000',
    BUSINESS_PROFILE_UPDATE_RATE_LIMIT_PER_MINUTE: '100000',
    CITATIONS_RATE_LIMIT_PER_MINUTE: '100000',
  });
  schema = buildClientSchema((await graphql<IntrospectionQuery>(t.url, getIntrospectionQuery())).body.data!);

  // The victim: Alice's account 1001, connected through her consent, with a post, a campaign, an update, a scan,
  // its reviews, an account token and a brand of the organization on one of its locations.
  const victimOrg = await createOrganizationFixture(t.em(), { accounts: 0, betaApi: true, citationsApi: true, name: 'Victim Org' });
  const accountId = await connectAlice(t.url, victimOrg.token);
  const reference = `victim-ref-${hex()}`;
  await gql(victimOrg.token, 'mutation ($id: ID, $r: String) { updateAccount(where: { id: $id }, input: { referenceId: $r }) { id } }', { id: accountId, r: reference });
  const victimToken = await gql<{ createAccountToken: { token: string; apiToken: { id: string } } }>(
    victimOrg.token,
    'mutation ($a: ID!) { createAccountToken(accountId: $a, label: "victim") { token apiToken { id } } }',
    { a: accountId },
  );
  const account = victimToken.createAccountToken.token;
  const { locations } = await gql<{ locations: { edges: { node: { id: string; name: string; referenceId: string; placeId: string; websiteUri: string | null } }[] } }>(
    account,
    'query { locations(first: 10) { edges { node { id name referenceId placeId websiteUri } } } }',
  );
  const location = locations.edges.map((edge) => edge.node).find((node) => node.placeId && node.referenceId && node.websiteUri)!;
  expect(location).toBeDefined();

  const created = await http(t.url, 'POST', '/post', { token: account, body: { location_id: location.id, params: { summary: `Victim news ${hex()}` } } });
  expect(created.status).toBe(202);
  const postId = created.body.payload.id as string;
  await pollPost(t.url, account, accountId, postId);
  const campaign = await gql<{ createPostCampaign: { campaignId: string; posts: { id: string }[] } }>(
    account,
    'mutation ($input: CreatePostCampaignInput!) { createPostCampaign(input: $input) { campaignId posts { id } } }',
    { input: { locationIds: [location.id], params: { summary: `Victim campaign ${hex()}` } } },
  );
  for (const { id } of campaign.createPostCampaign.posts) await pollPost(t.url, account, accountId, id);
  const updated = await http(t.url, 'PATCH', `/location/update?location_id=${location.id}`, { token: account, body: { website_uri: `https://victim.example/${hex()}` } });
  expect(updated.status).toBe(200);
  const updateJobId = updated.body.payload.id as string;
  await eventually(async () => {
    const job = await gql(account, 'query ($id: ID!) { locationUpdateJob(id: $id) { status } }', { id: updateJobId });
    return ['SUCCEEDED', 'FAILED'].includes(job.locationUpdateJob.status) ? job : undefined;
  }, 30000, 'the victim’s location update');
  const scan = await gql<{ runCompetitorScan: { id: string } }>(
    account,
    'mutation ($l: ID!) { runCompetitorScan(locationId: $l, text: "bakery", radiusKm: 1, rings: 0) { id } }',
    { l: location.id },
  );
  await eventually(async () => {
    const found = await gql(account, 'query ($id: ID) { competitorScan(scanId: $id) { status } }', { id: scan.runCompetitorScan.id });
    return ['COMPLETED', 'FAILED'].includes(found.competitorScan.status) ? found : undefined;
  }, 30000, 'the victim’s scan');
  const { reviews } = await gql<{ reviews: { edges: { node: { id: string; name: string } }[] } }>(
    account,
    'query ($l: ID!) { reviews(locationId: $l, first: 1) { edges { node { id name } } } }',
    { l: location.id },
  );
  const review = reviews.edges[0]!.node;
  await linkBetaCompany(victimOrg.token, 'company-1001');
  const brand = await gql<{ createBetaBrand: { segmentId: string } }>(
    victimOrg.token,
    'mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId } }',
    { input: { betaCompanyId: 'company-1001', brandName: `Victim brand ${hex()}`, countryCode: 'DE', primaryCategory: 'bakery', ownershipType: 'BRAND_OWNER', locationIds: [location.id] } },
  );
  await eventually(async () => {
    const found = await gql(victimOrg.token, 'query ($s: String!) { betaBrand(segmentId: $s) { betaSyncStatus } }', { s: brand.createBetaBrand.segmentId });
    return found.betaBrand.betaSyncStatus !== 'PENDING' ? found : undefined;
  }, 30000, 'the victim’s brand to be pushed');

  // The insider: Carol's account 3003 in the victim's organization, with its own account token. Carol's consent is
  // then completed once more by the organization, not used yet: a consent an account token must not use.
  const carol = await runConsent(t.url, victimOrg.token, { person: 'alpha-user-carol', state: 'carol', redirectUrl: 'https://victim.example/carol' });
  const insiderAccountId = urlOf((await connect(t.url, victimOrg.token, carol.landed, '3003')).body.url).get('alpha_profile_id')!;
  expect((await importEnded(t.url, victimOrg.token, insiderAccountId)).syncStatus).toBe('SUCCEEDED');
  const insiderToken = (await gql(victimOrg.token, 'mutation ($a: ID!) { createAccountToken(accountId: $a) { token } }', { a: insiderAccountId })).createAccountToken.token as string;
  const insiderLocation = (await gql(insiderToken, 'query { locations(first: 1) { edges { node { id } } } }')).locations.edges[0].node.id as string;
  await runConsent(t.url, victimOrg.token, { person: 'alpha-user-carol', state: 'pending', redirectUrl: 'https://victim.example/pending' });

  // Another organization, with beta and citations access, its own account and location, Bob's consent and a company.
  const other = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true, betaApi: true, citationsApi: true, name: 'Other Org' });
  await runConsent(t.url, other.token, { person: 'alpha-user-bob', state: 'bob', redirectUrl: 'https://other.example/bob' });
  await linkBetaCompany(other.token, 'company-2002');
  const otherOwn: Own = {
    accountId: other.accounts[0]!.account.id,
    locationId: other.accounts[0]!.locations[0]!.id,
    organizationId: other.organization.id,
    personId: 'alpha-user-bob',
    betaCompanyId: 'company-2002',
  };

  // A disabled endpoint: it receives nothing, so its rows stay as they are while the intruders try.
  const hook = await gql<{ createWebhookEndpoint: { endpoint: { id: string } } }>(
    victimOrg.token,
    'mutation { createWebhookEndpoint(input: { url: "https://victim.example/hook", eventTypes: [POST_STATE_CHANGED], enabled: false }) { endpoint { id } } }',
  );
  const [victimEvent] = await sql<{ id: string }>('select id from activity_event where account_id = ? order by id limit 1', [accountId]);

  victim = withNodeIds({
    scopeAccountId: accountId,
    accountId,
    accountReferenceId: reference,
    alphaAccountId: '1001',
    personId: 'alpha-user-alice',
    pendingPersonId: 'alpha-user-carol',
    pendingAlphaAccountId: '3004',
    organizationId: victimOrg.organization.id,
    locationId: location.id,
    storeCode: location.referenceId,
    placeId: location.placeId,
    postId,
    campaignId: campaign.createPostCampaign.campaignId,
    updateJobId,
    workId: (await sql<{ id: string }>('select id from async_work where account_id = ? order by id desc limit 1', [accountId]))[0]!.id,
    reviewId: review.id,
    reviewName: review.name,
    scanId: scan.runCompetitorScan.id,
    segmentId: brand.createBetaBrand.segmentId,
    betaCompanyId: 'company-1001',
    tokenId: victimToken.createAccountToken.apiToken.id,
    webhookEndpointId: hook.createWebhookEndpoint.endpoint.id,
    eventId: victimEvent!.id,
  });
  nobody = withNodeIds({
    scopeAccountId: newId(),
    accountId: newId(),
    accountReferenceId: `victim-ref-${hex()}`,
    alphaAccountId: String(8000 + (randomBytes(2).readUInt16BE(0) % 1000)),
    personId: `alpha-user-${hex()}`,
    pendingPersonId: `alpha-user-${hex()}`,
    pendingAlphaAccountId: String(7000 + (randomBytes(2).readUInt16BE(0) % 1000)),
    organizationId: newId(),
    locationId: newId(),
    storeCode: `store-${hex()}`,
    placeId: `place-${hex()}`,
    postId: newId(),
    campaignId: newId(),
    updateJobId: newId(),
    workId: newId(),
    reviewId: newId(),
    reviewName: `accounts/${8000 + (randomBytes(2).readUInt16BE(0) % 1000)}/locations/${hex()}/reviews/${hex()}`,
    scanId: newId(),
    segmentId: `brand-${newId()}`,
    betaCompanyId: `company-${hex()}`,
    tokenId: newId(),
    webhookEndpointId: newId(),
    eventId: newId(),
  });
  victimTokens = { organization: victimOrg.token, account };
  const victimNames = [
    'Alice Bakery Group',
    ...locations.edges.map((edge) => edge.node.name),
    ...(await sql<{ text: string }>("select params->>'summary' as text from post where account_id = ?", [accountId])).map((row) => row.text),
  ];
  victimSecrets = [
    ...new Set([
      ...Object.entries(victim)
        .filter(([name]) => !['organizationId', 'personId', 'pendingPersonId', 'pendingAlphaAccountId', 'betaCompanyId', 'alphaAccountId'].includes(name))
        .map(([, value]) => value),
      ...locations.edges.map((edge) => edge.node.id),
      ...victimNames,
    ]),
  ].filter((value) => value.length >= 8);

  intruders = [
    {
      name: INTRUDERS[0],
      token: insiderToken,
      own: { accountId: insiderAccountId, locationId: insiderLocation, organizationId: victimOrg.organization.id, personId: 'alpha-user-carol', betaCompanyId: 'company-1001' },
    },
    { name: INTRUDERS[1], token: other.token, own: otherOwn },
    { name: INTRUDERS[2], token: other.accounts[0]!.token, own: otherOwn },
  ];
  before = await victimRows(victim.organizationId);
  attackStartedAt = new Date();
}, 180000);

afterAll(async () => {
  console.log(
    `authorization: ${stats.requests} requests by ${INTRUDERS.length} intruders, ${stats.compared} answers to the victim's ids compared with unknown ids' answers, ` +
      `${stats.subscriptions} subscriptions; over ${Object.keys(GRAPHQL_CASES).length} queries and mutations and ${Object.keys(REST_CASES).length} REST routes`,
  );
  await t?.close();
});

describe('the authorization matrix', () => {
  it('has a case for every query, mutation and subscription of the served schema and every route of the route table', () => {
    expect(Object.keys(GRAPHQL_CASES).sort()).toEqual([...rootFieldNames('query'), ...rootFieldNames('mutation')].sort());
    expect([...Object.keys(SUBSCRIPTION_CASES), ...SUBSCRIPTIONS_OF_THEIR_OWN_CASE].sort()).toEqual(rootFieldNames('subscription'));
    expect(Object.keys(REST_CASES).sort()).toEqual(routeTable.map((route) => `${route.method} ${route.path}`).sort());
  });

  it.each(INTRUDERS)('GraphQL, with %s naming the victim’s ids: what unknown ids get, nothing of the victim', async (name) => {
    const intruder = intruders.find((candidate) => candidate.name === name)!;
    const findings: Finding[] = [];
    for (const [field, cases] of Object.entries(GRAPHQL_CASES)) {
      for (const graphQLCase of cases) {
        await probeBoth(intruder, field, (ids) => ({ method: 'POST', path: '/graphql', body: { query: graphQLCase.document, variables: graphQLCase.variables(ids, intruder.own) } }), findings);
      }
    }
    expect(findings).toEqual([]);
  }, 120000);

  it.each(INTRUDERS)('REST, with %s naming the victim’s ids: what unknown ids get, nothing of the victim', async (name) => {
    const intruder = intruders.find((candidate) => candidate.name === name)!;
    const findings: Finding[] = [];
    for (const route of routeTable) {
      const label = `${route.method} ${route.path}`;
      for (const restCase of REST_CASES[label] ?? []) {
        await probeBoth(intruder, label, (ids) => restRequest(route.method, route.path, restCase(ids, intruder.own)), findings);
      }
    }
    expect(findings).toEqual([]);
  }, 120000);

  it('left every record of the victim as it was, and queued no job about it', async () => {
    expect(await victimRows(victim.organizationId)).toEqual(before);
    const pattern = [victim.accountId, victim.locationId, victim.postId, victim.updateJobId, victim.scanId, victim.segmentId, victim.reviewId].join('|');
    const jobs = await sql<{ name: string; data: unknown }>('select name, data from pgboss.job where created_on >= ? and data::text ~ ?', [attackStartedAt, pattern]);
    expect(jobs).toEqual([]);
  });
});

describe('subscriptions naming the victim’s ids', () => {
  it('deliver none of the victim’s events to any intruder, as for unknown ids', async () => {
    const recorders: { label: string; recorder: Recorder<unknown> }[] = [];
    const control = {
      posts: await subscribe(t.url, victimTokens.account, POST_UPDATED, {}, postProbeOf(ownOfVictim(), {})),
      jobs: await subscribe(t.url, victimTokens.account, JOB_UPDATED, {}, jobProbeOf(ownOfVictim(), {})),
    };
    try {
      for (const intruder of intruders) {
        for (const [field, cases] of Object.entries(SUBSCRIPTION_CASES)) {
          for (const [index, subscriptionCase] of cases.entries()) {
            for (const [whose, ids] of [['victim', victim], ['nobody', nobody]] as const) {
              const variables = subscriptionCase.variables(ids);
              if (whose === 'nobody' && Object.keys(variables).length === 0) continue;
              const label = `${intruder.name}: ${field} #${index} with ${whose}'s ids ${JSON.stringify(variables)}`;
              stats.subscriptions += 1;
              recorders.push({ label, recorder: await subscribe(t.url, intruder.token, subscriptionCase.document, variables, subscriptionCase.probe(intruder.own, variables)) });
            }
          }
        }
      }
      // The victim's post changes (it is deleted), a new post is published, and its location is updated.
      const account = victimTokens.account;
      const deleted = await http(t.url, 'DELETE', `/post/${victim.postId}`, { token: account });
      expect(deleted.status).toBe(202);
      const created = await http(t.url, 'POST', '/post', { token: account, body: { location_id: victim.locationId, params: { summary: 'Victim again' } } });
      const newPost = created.body.payload.id as string;
      await pollPost(t.url, account, victim.accountId, newPost);
      await pollPost(t.url, account, victim.accountId, victim.postId, (record) => record.state === 'DELETED');
      const updated = await http(t.url, 'PATCH', `/location/update?location_id=${victim.locationId}`, { token: account, body: { website_uri: 'https://victim.example/again' } });
      const jobId = updated.body.payload.id as string;
      // The victim's own subscriptions saw them: the events were published.
      await eventually(async () => {
        const postIds = control.posts.events.map((event: any) => event.postUpdated.id);
        const jobEvents = control.jobs.events.filter((event: any) => event.locationUpdateJobUpdated.id === jobId);
        const ended = jobEvents.some((event: any) => ['SUCCEEDED', 'FAILED'].includes(event.locationUpdateJobUpdated.status));
        return postIds.includes(newPost) && postIds.includes(victim.postId) && ended ? true : undefined;
      }, 30000, 'the victim’s own subscriptions to see its events');
      // Every event of the victim was published before these probes: had one been delivered, it would be here.
      await Promise.all(recorders.map(({ recorder }) => recorder.sync()));
      const delivered = recorders.filter(({ recorder }) => recorder.events.length > 0 || recorder.errors.length > 0).map(({ label, recorder }) => ({ label, events: recorder.events, errors: recorder.errors }));
      expect(delivered).toEqual([]);
    } finally {
      await Promise.all([...recorders.map(({ recorder }) => recorder.close()), control.posts.close(), control.jobs.close()]);
    }
  }, 120000);
});

/** An `eventStream` of `token`, recording the ids of the events it carries (its first message, without one, marks it live). */
function eventStreamOf(token: string): { live: Promise<void>; eventIds: string[]; errors: unknown[]; close(): Promise<void> } {
  const eventIds: string[] = [];
  const errors: unknown[] = [];
  const client = createClient({ url: `${t.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0 });
  let markLive!: () => void;
  let refuse!: (error: unknown) => void;
  const live = new Promise<void>((resolve, reject) => ((markLive = resolve), (refuse = reject)));
  const dispose = client.subscribe<{ eventStream: { event: { id: string } | null } }>(
    { query: 'subscription { eventStream { event { id } } }' },
    {
      next: (result) => {
        if (result.errors) {
          errors.push(...result.errors);
          refuse(result.errors);
        }
        const event = result.data?.eventStream.event;
        if (event) eventIds.push(event.id);
        else if (result.data) markLive();
      },
      error: (error) => {
        errors.push(error);
        refuse(error);
      },
      complete: () => undefined,
    },
  );
  live.catch(() => undefined); // the caller awaits it, or reads `errors`
  return {
    live,
    eventIds,
    errors,
    async close() {
      dispose();
      await client.dispose();
    },
  };
}

const triggerTestEvent = async (token: string): Promise<string> => {
  const answer = await graphql(t.url, 'mutation { triggerTestEvent(type: ACCOUNT_CONNECTED) { id } }', { token });
  expect(answer.body.errors).toBeUndefined();
  return answer.body.data.triggerTestEvent.id as string;
};

describe('the organization’s event stream', () => {
  it('refuses account tokens, and carries none of the victim’s events to another organization', async () => {
    const victimStream = eventStreamOf(victimTokens.organization);
    const otherStream = eventStreamOf(intruders[1]!.token);
    const accountStreams = [eventStreamOf(intruders[0]!.token), eventStreamOf(intruders[2]!.token)];
    try {
      await Promise.all([victimStream.live, otherStream.live]);
      for (const stream of accountStreams) {
        await expect(stream.live).rejects.toBeDefined();
        expect(JSON.stringify(stream.errors)).toMatch(/organization token/i);
      }
      // The victim's event goes out on the bus (its own stream listens), before the other organization's own.
      const victimEvent = await triggerTestEvent(victimTokens.organization);
      await eventually(async () => (victimStream.eventIds.includes(victimEvent) ? true : undefined), 20000, 'the victim’s stream to carry its event');
      const ownEvent = await triggerTestEvent(intruders[1]!.token);
      await eventually(async () => (otherStream.eventIds.includes(ownEvent) ? true : undefined), 20000, 'the other organization’s stream to carry its own event');
      expect(otherStream.eventIds).toEqual([ownEvent]);
    } finally {
      await Promise.all([victimStream, otherStream, ...accountStreams].map((stream) => stream.close()));
    }
  });
});

function ownOfVictim(): Own {
  return { accountId: victim.accountId, locationId: victim.locationId, organizationId: victim.organizationId, personId: victim.personId, betaCompanyId: victim.betaCompanyId };
}
