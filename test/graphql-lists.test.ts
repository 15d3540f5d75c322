import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  type GraphQLField,
  type GraphQLInterfaceType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type IntrospectionQuery,
} from 'graphql';
import { MAX_PAGE_SIZE, pageSizeMaxOf } from '../src/graphql/relay-connection';
import { gatewaySchema } from '../src/schema';
import { newId } from '../src/shared/ids';
import { formOf, submit, visit } from './support/browser';
import { connectAlice } from './support/consent';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The list convention of GraphQL and its global ids (docs/graphql-lists.md): every list of records is a connection
 * of one shape, paged by first/after and counted; the fields of other shapes are deprecated or documented; every
 * record a client refetches is a Node with a nodeId that node(nodeId:) reads exactly as the record's own query does.
 */

// What docs/graphql-lists.md lists as not a connection. A new list joins a connection, or this page and the doc.
/** Lists on Query that are aggregates bounded by an enumeration, not records. */
const VALUE_LISTS_OF_QUERY = ['asyncWorkCounts', 'providerHealth', 'providerBudgets'];
/** The page-numbered twins of the REST lists, and the field of their records. */
const PAGE_TWINS: Record<string, { type: string; records: string }> = {
  postsPage: { type: 'PostPage', records: 'posts' },
  locationsPage: { type: 'LocationPage', records: 'locations' },
  locationUpdateJobsPage: { type: 'LocationUpdateJobPage', records: 'updates' },
  eventsPage: { type: 'EventPage', records: 'events' },
  webhookDeliveriesPage: { type: 'WebhookDeliveryPage', records: 'deliveries' },
  webhookEndpointsPage: { type: 'WebhookEndpointPage', records: 'endpoints' },
};
/** A mutation's result: what it made, in full. */
const MUTATION_RESULTS = ['PostCampaign.posts'];
/** The records that are nodes (the AsyncWork interface's types are nodes through it). */
const NODE_TYPES = [
  'Account',
  'AccountWork',
  'ApiToken',
  'BetaBrand',
  'BetaBrandWork',
  'CompetitorScan',
  'CompetitorScanWork',
  'Location',
  'LocationUpdateJob',
  'LocationUpdateWork',
  'LocationWork',
  'Post',
  'PostWork',
  'Review',
  'ReviewWork',
  'WebhookEndpoint',
];
/** Query fields that read one record but take no id: the caller's own organization. */
const SINGLETONS = ['organization'];

let t: TestStack;
let schema: GraphQLSchema;

beforeAll(async () => {
  t = await startTestStack({ BUSINESS_PROFILE_READ_RATE_LIMIT_PER_MINUTE: '100000', LOCATION_READ_RATE_LIMIT_PER_MINUTE: '100000' });
  schema = buildClientSchema((await graphql<IntrospectionQuery>(t.url, getIntrospectionQuery())).body.data!);
}, 60000);
afterAll(() => t?.close());

async function gql<T = any>(token: string | undefined, document: string, variables: Record<string, unknown> = {}): Promise<T> {
  const answer = await graphql(t.url, document, { token, variables });
  if (answer.body.errors) throw new Error(`${document}: ${JSON.stringify(answer.body.errors)}`);
  return answer.body.data as T;
}

/** The fields of every object and interface type of the schema (introspection's own types aside). */
function everyField(): { type: GraphQLObjectType | GraphQLInterfaceType; field: GraphQLField<unknown, unknown> }[] {
  return Object.values(schema.getTypeMap())
    .filter((type): type is GraphQLObjectType | GraphQLInterfaceType => (isObjectType(type) || isInterfaceType(type)) && !type.name.startsWith('__'))
    .flatMap((type) => Object.values(type.getFields()).map((field) => ({ type, field })));
}

const isList = (field: GraphQLField<unknown, unknown>) => isListType(getNullableType(field.type));
const isConnectionType = (type: GraphQLNamedType) => type.name.endsWith('Connection');
const isObjectOrInterface = (type: GraphQLNamedType): type is GraphQLObjectType | GraphQLInterfaceType => isObjectType(type) || isInterfaceType(type);
const node = () => schema.getType('Node') as GraphQLInterfaceType;
/** Whether a type is a record: the Node interface, or a type implementing it. */
const isRecord = (type: GraphQLNamedType) => type === node() || (isObjectOrInterface(type) && schema.isSubType(node(), type));

describe('the list convention, on the served schema', () => {
  it('has no list on Query but connections, apart from deprecated fields and the documented aggregates', () => {
    const plainLists = Object.values(schema.getQueryType()!.getFields())
      .filter((field) => isList(field) && !field.deprecationReason && !VALUE_LISTS_OF_QUERY.includes(field.name))
      .map((field) => field.name);
    expect(plainLists).toEqual([]);
    // Pages only where documented: page twins of REST lists (the deprecated old name of one aside).
    const pages = Object.values(schema.getQueryType()!.getFields())
      .filter((field) => getNamedType(field.type).name.endsWith('Page') && !field.deprecationReason)
      .map((field) => [field.name, getNamedType(field.type).name]);
    expect(Object.fromEntries(pages)).toEqual(Object.fromEntries(Object.entries(PAGE_TWINS).map(([name, twin]) => [name, twin.type])));
    // Each twin is named <plural>Page, and its records have a connection: <plural> or <plural>Connection.
    for (const name of Object.keys(PAGE_TWINS)) {
      const plural = name.replace(/Page$/, '');
      const connections = [plural, `${plural}Connection`]
        .map((candidate) => schema.getQueryType()!.getFields()[candidate])
        .filter((field) => field && !field.deprecationReason && isConnectionType(getNamedType(field.type)));
      expect({ name, connections: connections.length }).toEqual({ name, connections: 1 });
    }
  });

  it('has no plain list of records on any type: connections, the page twins’ records and a mutation’s result only', () => {
    const pageRecords = Object.values(PAGE_TWINS).map((twin) => `${twin.type}.${twin.records}`);
    const plainLists = everyField()
      .filter(({ field }) => isList(field) && isRecord(getNamedType(field.type)))
      .map(({ type, field }) => ({ name: `${type.name}.${field.name}`, type, field }))
      .filter(({ name, type, field }) => {
        if (field.deprecationReason) return false;
        if (isConnectionType(type) && field.name === 'nodes') return false;
        return !pageRecords.includes(name) && !MUTATION_RESULTS.includes(name);
      })
      .map(({ name }) => name);
    expect(plainLists).toEqual([]);
    // The check sees records: the deprecated plain lists are lists of records.
    expect(isRecord(getNamedType(schema.getQueryType()!.getFields().accounts!.type))).toBe(true);
  });

  it('gives every connection totalCount, pageInfo, edges { cursor node } and nodes, paged by first and after', async () => {
    const connections = Object.values(schema.getTypeMap()).filter((type) => isObjectType(type) && isConnectionType(type)) as GraphQLObjectType[];
    expect(connections.length).toBeGreaterThanOrEqual(10);
    for (const connection of connections) {
      const fields = connection.getFields();
      const nodeType = getNamedType(fields.nodes?.type ?? fields.edges!.type);
      const edge = getNamedType(fields.edges!.type) as GraphQLObjectType;
      const shape = {
        fields: Object.keys(fields).sort(),
        edges: String(fields.edges?.type),
        nodes: String(fields.nodes?.type),
        pageInfo: String(fields.pageInfo?.type),
        totalCount: String(fields.totalCount?.type),
        edge: Object.fromEntries(Object.values(edge.getFields()).map((field) => [field.name, String(field.type)])),
      };
      expect({ connection: connection.name, ...shape }).toEqual({
        connection: connection.name,
        fields: ['edges', 'nodes', 'pageInfo', 'totalCount'],
        edges: `[${edge.name}!]!`,
        nodes: `[${nodeType.name}!]!`,
        pageInfo: 'PageInfo!',
        totalCount: 'Int!',
        edge: { cursor: 'String!', node: `${nodeType.name}!` },
      });
    }
    expect(Object.fromEntries(Object.values((schema.getType('PageInfo') as GraphQLObjectType).getFields()).map((f) => [f.name, String(f.type)]))).toEqual({
      hasNextPage: 'Boolean!',
      hasPreviousPage: 'Boolean!',
      startCursor: 'String',
      endCursor: 'String',
    });
    // Every field answering a connection takes first and after; the served code marks first as the size the cost rule
    // multiplies by (docs/graphql-limits.md), at most 100.
    const built = await gatewaySchema();
    const connectionFields = everyField().filter(({ field }) => isConnectionType(getNamedType(field.type)));
    expect(connectionFields.length).toBeGreaterThanOrEqual(11);
    for (const { type, field } of connectionFields) {
      const args = Object.fromEntries(field.args.map((arg) => [arg.name, String(arg.type)]));
      const first = (built.getType(type.name) as GraphQLObjectType).getFields()[field.name]!.args.find((arg) => arg.name === 'first');
      expect({ field: `${type.name}.${field.name}`, first: args.first, after: args.after, pageSizeMax: first && pageSizeMaxOf(first) }).toEqual({
        field: `${type.name}.${field.name}`,
        first: 'Int!',
        after: 'String',
        pageSizeMax: MAX_PAGE_SIZE,
      });
    }
  });

  it('names the replacement of every deprecated field, and the replacement answers', () => {
    const deprecated = everyField().filter(({ field }) => field.deprecationReason);
    expect(deprecated.map(({ type, field }) => `${type.name}.${field.name}`).sort()).toEqual([
      'Organization.accounts',
      'Query.accounts',
      'Query.apiTokens',
      'Query.betaBrands',
      'Query.locationUpdateJobs',
    ]);
    for (const { type, field } of deprecated) {
      const named = [...field.deprecationReason!.matchAll(/\b(Use|or) (\w+)/g)].map((match) => match[2]!);
      expect(named.length).toBeGreaterThan(0);
      for (const replacement of named) {
        const found = type.getFields()[replacement];
        expect({ field: field.name, replacement, exists: Boolean(found && !found.deprecationReason) }).toEqual({ field: field.name, replacement, exists: true });
      }
    }
  });

  it('makes every record with a query of its own a Node with a nodeId, and node(nodeId:) answers a Node', () => {
    expect(String(node().getFields().nodeId?.type)).toBe('ID!');
    const nodeField = schema.getQueryType()!.getFields().node!;
    expect({ type: String(nodeField.type), args: nodeField.args.map((arg) => `${arg.name}: ${String(arg.type)}`) }).toEqual({ type: 'Node', args: ['nodeId: ID!'] });
    expect(schema.getPossibleTypes(node()).map((type) => type.name).sort()).toEqual(NODE_TYPES);
    expect((schema.getType('AsyncWork') as GraphQLInterfaceType).getInterfaces().map((type) => type.name)).toEqual(['Node']);
    // A query that reads one record (not a list, not a payload) reads a Node.
    const singleReads = Object.values(schema.getQueryType()!.getFields()).filter(
      (field) => !isList(field) && isObjectOrInterface(getNamedType(field.type)) && !isConnectionType(getNamedType(field.type)) && !getNamedType(field.type).name.endsWith('Page'),
    );
    const notNodes = singleReads.filter((field) => field.name !== 'node' && !SINGLETONS.includes(field.name) && !isRecord(getNamedType(field.type))).map((field) => field.name);
    expect(notNodes).toEqual([]);
    expect(singleReads.length).toBeGreaterThanOrEqual(9);
  });

  it('documents every exception in docs/graphql-lists.md', () => {
    const doc = readFileSync(path.resolve(__dirname, '../docs/graphql-lists.md'), 'utf8');
    const named = [
      ...VALUE_LISTS_OF_QUERY,
      ...Object.keys(PAGE_TWINS),
      ...Object.values(PAGE_TWINS).map((twin) => `${twin.type}.${twin.records}`),
      ...MUTATION_RESULTS,
      ...NODE_TYPES,
      ...everyField().filter(({ field }) => field.deprecationReason).map(({ field }) => field.name),
    ];
    expect(named.filter((name) => !doc.includes(`\`${name}\``))).toEqual([]);
  });
});

describe('Organization.accountsConnection', () => {
  it('reads with the same SQL statements for 2 and for 50 accounts, the page, count and numberOfLocations batched', async () => {
    const small = await createOrganizationFixture(t.em(), { name: 'Small', accounts: 2, locationsEach: 2 });
    const large = await createOrganizationFixture(t.em(), { name: 'Large', accounts: 50, locationsEach: 2 });
    const query = '{ organization { id accountsConnection(first: 100) { totalCount edges { node { id numberOfLocations } } nodes { nodeId } } } }';
    const counted = async (token: string) => {
      const before = t.statementCount();
      const data = await gql(token, query);
      return { statements: t.statementCount() - before, connection: data.organization.accountsConnection };
    };
    const few = await counted(small.token);
    const many = await counted(large.token);
    expect(few.connection.totalCount).toBe(2);
    expect(many.connection.totalCount).toBe(50);
    expect(many.connection.edges).toHaveLength(50);
    expect(many.connection.edges.every((edge: { node: { numberOfLocations: number } }) => edge.node.numberOfLocations === 2)).toBe(true);
    expect(many.statements).toBe(few.statements);
    // Token, organization, its accounts, one grouped count of locations (as Organization.accounts).
    expect(many.statements).toBeLessThanOrEqual(4);
  });
});

interface PageOf<R> {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  edges: { cursor: string; node: R }[];
  nodes: R[];
}

const PAGE = (selection: string) => `totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { ${selection} } } nodes { ${selection} }`;

/** Every record of a connection, read `first` at a time by following endCursor; each page checked on the way. */
async function pageThrough<R>(read: (first: number, after: string | null) => Promise<PageOf<R>>, first: number): Promise<{ records: R[]; totalCount: number; pages: number }> {
  const records: R[] = [];
  let after: string | null = null;
  let totalCount: number | undefined;
  let pages = 0;
  for (;;) {
    const page: PageOf<R> = await read(first, after);
    pages += 1;
    expect(page.edges.length).toBeLessThanOrEqual(first);
    expect(page.nodes).toEqual(page.edges.map((edge) => edge.node));
    expect(page.pageInfo).toEqual({
      hasNextPage: page.pageInfo.hasNextPage,
      hasPreviousPage: after !== null,
      startCursor: page.edges[0]?.cursor ?? null,
      endCursor: page.edges.at(-1)?.cursor ?? null,
    });
    totalCount ??= page.totalCount;
    expect(page.totalCount).toBe(totalCount);
    records.push(...page.nodes);
    if (!page.pageInfo.hasNextPage) break;
    expect(page.edges).toHaveLength(first);
    after = page.pageInfo.endCursor;
    if (pages > 100) throw new Error('the connection does not end');
  }
  expect(records).toHaveLength(totalCount);
  return { records, totalCount, pages };
}

describe('the connections and node(nodeId:)', () => {
  let org: OrganizationFixture;
  let other: OrganizationFixture;
  let aliceId: string;
  let aliceToken: string;
  /** The insider: the account token of the organization's other account. */
  let insiderToken: string;
  let aliceLocations: { id: string; nodeId: string; placeId: string | null; latitude: number | null }[];
  /** One record of each kind, of Alice's account (or of the organization), with its nodeId and id. */
  const records: Record<string, { typename: string; nodeId: string; id: string }> = {};
  let revokedTokenId: string;
  let updateJobIds: string[];

  /** A beta consent for a company, as the person's browser goes through it. */
  async function linkBetaCompany(token: string, company: string): Promise<void> {
    const generated = await http(t.url, 'POST', '/oauth/beta/generate-url', { token, body: { redirect_url: 'https://app.example/beta' } });
    expect(generated.status).toBe(200);
    const page = await visit(generated.body.url);
    const toCallback = await submit(formOf(page.body, generated.body.url), { button: ['decision', 'approve'], select: company });
    const landed = new URL((await visit(toCallback.location!)).location!).searchParams;
    expect(landed.get('company_id')).toBe(company);
  }

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { name: 'Lists Org', accounts: 1, betaApi: true });
    other = await createOrganizationFixture(t.em(), { name: 'Other Org', accounts: 1, locationsEach: 1, connected: true, betaApi: true });
    insiderToken = org.accounts[0]!.token;
    aliceId = await connectAlice(t.url, org.token);
    const created = await gql(org.token, 'mutation ($a: ID!) { createAccountToken(accountId: $a, label: "alice") { token apiToken { id nodeId } } }', { a: aliceId });
    aliceToken = created.createAccountToken.token;
    records.ApiToken = { typename: 'ApiToken', ...created.createAccountToken.apiToken };
    const revoked = await gql(org.token, 'mutation ($a: ID!) { createAccountToken(accountId: $a, label: "revoked") { apiToken { id } } }', { a: aliceId });
    revokedTokenId = revoked.createAccountToken.apiToken.id;
    await gql(org.token, 'mutation ($id: ID!) { revokeApiToken(id: $id) { id } }', { id: revokedTokenId });

    const accounts = await gql(org.token, 'query { accountsConnection { nodes { id nodeId } } }');
    records.Account = { typename: 'Account', ...accounts.accountsConnection.nodes.find((account: { id: string }) => account.id === aliceId) };

    aliceLocations = (await gql(aliceToken, 'query { locations(first: 100) { nodes { id nodeId placeId latitude } } }')).locations.nodes;
    expect(aliceLocations.length).toBeGreaterThanOrEqual(2);
    const scanned = aliceLocations.find((location) => location.placeId && location.latitude !== null)!;
    records.Location = { typename: 'Location', id: scanned.id, nodeId: scanned.nodeId };

    const post = await gql(aliceToken, 'mutation ($l: ID!) { createPost(input: { locationId: $l, params: { summary: "Lists news" } }) { post { id nodeId } } }', { l: scanned.id });
    records.Post = { typename: 'Post', ...post.createPost.post };

    updateJobIds = [];
    for (const [index, location] of aliceLocations.slice(0, 2).entries()) {
      const updated = await gql(aliceToken, 'mutation ($l: ID!, $w: String) { updateLocation(locationId: $l, input: { websiteUri: $w }) { id job { nodeId } } }', {
        l: location.id,
        w: `https://lists.example/${index}`,
      });
      updateJobIds.push(updated.updateLocation.id);
      records.LocationUpdateJob = { typename: 'LocationUpdateJob', id: updated.updateLocation.id, nodeId: updated.updateLocation.job.nodeId };
    }

    const scan = await gql(aliceToken, 'mutation ($l: ID!) { runCompetitorScan(locationId: $l, text: "bakery", radiusKm: 1, rings: 0) { id nodeId } }', { l: scanned.id });
    records.CompetitorScan = { typename: 'CompetitorScan', ...scan.runCompetitorScan };

    for (const location of aliceLocations) {
      const reviews = await gql(aliceToken, 'query ($l: ID!) { reviews(locationId: $l, first: 1) { nodes { id nodeId } } }', { l: location.id });
      if (reviews.reviews.nodes.length > 0) {
        records.Review = { typename: 'Review', ...reviews.reviews.nodes[0] };
        break;
      }
    }

    await linkBetaCompany(org.token, 'company-1001');
    for (const name of ['Lists brand 1', 'Lists brand 2']) {
      const brand = await gql(org.token, 'mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId nodeId } }', {
        input: { betaCompanyId: 'company-1001', brandName: name, countryCode: 'DE', primaryCategory: 'bakery', ownershipType: 'BRAND_OWNER' },
      });
      records.BetaBrand = { typename: 'BetaBrand', id: brand.createBetaBrand.segmentId, nodeId: brand.createBetaBrand.nodeId };
    }

    const work = await gql(aliceToken, 'query { asyncWork(first: 1, kinds: [ACCOUNT_IMPORT]) { nodes { __typename id nodeId } } }');
    const { __typename, ...item } = work.asyncWork.nodes[0];
    records.AsyncWork = { typename: __typename, ...item };
    expect(Object.keys(records).sort()).toEqual(['Account', 'ApiToken', 'AsyncWork', 'BetaBrand', 'CompetitorScan', 'Location', 'LocationUpdateJob', 'Post', 'Review']);
  }, 120000);

  const NODE = `query ($n: ID!) { node(nodeId: $n) { __typename nodeId
    ... on Account { id } ... on Post { id } ... on Location { id } ... on LocationUpdateJob { id } ... on Review { id }
    ... on CompetitorScan { id } ... on BetaBrand { segmentId } ... on ApiToken { id } ... on AsyncWork { id } } }`;

  const nodeAnswer = async (token: string | undefined, nodeId: string) => {
    const answer = await graphql(t.url, NODE, { token, variables: { n: nodeId } });
    return { status: answer.status, body: answer.body };
  };

  /** A global id as this API writes them (docs/graphql-lists.md): base64url of `<Name>:<key>`. */
  const globalId = (...parts: string[]) => Buffer.from(parts.join(':'), 'utf8').toString('base64url');

  /** Well-formed global ids of nobody's records, one per kind (an account's records: of Alice's account too). */
  const unknownIds = () => [
    globalId('Account', newId()),
    globalId('Post', newId(), newId()),
    globalId('Post', aliceId, newId()),
    globalId('Location', aliceId, newId()),
    globalId('LocationUpdateJob', aliceId, newId()),
    globalId('Review', aliceId, newId()),
    globalId('CompetitorScan', aliceId, newId()),
    globalId('BetaBrand', `brand-${newId()}`),
    globalId('ApiToken', newId()),
    globalId('AsyncWork', newId()),
  ];

  it('pages accountsConnection and Organization.accountsConnection, oldest first, as the deprecated lists list them', async () => {
    const deprecated = await gql(org.token, 'query { accounts { id } organization { accounts { id } } }');
    const ids = deprecated.accounts.map((account: { id: string }) => account.id);
    expect(ids).toHaveLength(2);
    expect(deprecated.organization.accounts).toEqual(deprecated.accounts);
    const root = await pageThrough<{ id: string }>(async (first, after) => (await gql(org.token, `query ($f: Int!, $a: String) { accountsConnection(first: $f, after: $a) { ${PAGE('id')} } }`, { f: first, a: after })).accountsConnection, 1);
    expect({ ids: root.records.map((record) => record.id), totalCount: root.totalCount, pages: root.pages }).toEqual({ ids, totalCount: 2, pages: 2 });
    const nested = await pageThrough<{ id: string }>(
      async (first, after) => (await gql(org.token, `query ($f: Int!, $a: String) { organization { accountsConnection(first: $f, after: $a) { ${PAGE('id')} } } }`, { f: first, a: after })).organization.accountsConnection,
      1,
    );
    expect(nested.records.map((record) => record.id)).toEqual(ids);
    // Organization tokens only, like accounts.
    const refused = await graphql(t.url, 'query { accountsConnection { totalCount } }', { token: aliceToken });
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('ORGANIZATION_TOKEN_REQUIRED');
  });

  it('pages betaBrandsConnection, oldest first, as betaBrands lists them', async () => {
    const { betaBrands } = await gql(org.token, 'query { betaBrands { segmentId } }');
    expect(betaBrands).toHaveLength(2);
    const read = await pageThrough<{ segmentId: string }>(async (first, after) => (await gql(org.token, `query ($f: Int!, $a: String) { betaBrandsConnection(first: $f, after: $a) { ${PAGE('segmentId')} } }`, { f: first, a: after })).betaBrandsConnection, 1);
    expect({ brands: read.records, totalCount: read.totalCount }).toEqual({ brands: betaBrands, totalCount: 2 });
    const otherBrands = await gql(other.token, 'query { betaBrandsConnection { totalCount nodes { segmentId } } }');
    expect(otherBrands.betaBrandsConnection).toEqual({ totalCount: 0, nodes: [] });
  });

  it('pages apiTokensConnection, newest first, with the filters of apiTokens', async () => {
    for (const variables of [{}, { r: true }, { r: true, acc: aliceId }, { acc: aliceId }, { acc: org.accounts[0]!.account.id }]) {
      const { apiTokens } = await gql(org.token, 'query ($acc: ID, $r: Boolean! = false) { apiTokens(accountId: $acc, includeRevoked: $r) { id } }', variables);
      const read = await pageThrough<{ id: string }>(
        async (first, after) =>
          (await gql(org.token, `query ($acc: ID, $r: Boolean! = false, $f: Int!, $a: String) { apiTokensConnection(accountId: $acc, includeRevoked: $r, first: $f, after: $a) { ${PAGE('id')} } }`, { ...variables, f: first, a: after }))
            .apiTokensConnection,
        2,
      );
      expect({ variables, ids: read.records, totalCount: read.totalCount }).toEqual({ variables, ids: apiTokens, totalCount: apiTokens.length });
    }
    // The insider's token, Alice's, and (with includeRevoked) the revoked one.
    const all = await gql(org.token, 'query { apiTokensConnection(includeRevoked: true) { totalCount nodes { id revokedAt } } }');
    expect(all.apiTokensConnection.totalCount).toBe(3);
    expect(all.apiTokensConnection.nodes[0]).toEqual({ id: revokedTokenId, revokedAt: expect.any(String) });
    expect((await gql(org.token, 'query { apiTokensConnection { totalCount } }')).apiTokensConnection.totalCount).toBe(2);
  });

  it('pages locationUpdateJobsConnection, newest first; locationUpdateJobsPage answers as the deprecated locationUpdateJobs', async () => {
    const pageArgs = { acc: aliceId, pp: 20 };
    const pages = await gql(
      org.token,
      `query ($acc: ID, $pp: Int!) {
        old: locationUpdateJobs(accountId: $acc, perPage: $pp) { found page perPage updates { id nodeId status } }
        twin: locationUpdateJobsPage(accountId: $acc, perPage: $pp) { found page perPage updates { id nodeId status } }
      }`,
      pageArgs,
    );
    expect(pages.twin).toEqual(pages.old);
    expect(pages.twin.found).toBe(2);
    expect(pages.twin.updates.map((update: { id: string }) => update.id)).toEqual([...updateJobIds].reverse());
    const read = await pageThrough<{ id: string }>(
      async (first, after) => (await gql(org.token, `query ($acc: ID, $f: Int!, $a: String) { locationUpdateJobsConnection(accountId: $acc, first: $f, after: $a) { ${PAGE('id')} } }`, { acc: aliceId, f: first, a: after })).locationUpdateJobsConnection,
      1,
    );
    expect({ ids: read.records.map((record) => record.id), totalCount: read.totalCount }).toEqual({ ids: [...updateJobIds].reverse(), totalCount: 2 });
    // Its filters, and an account token's own account.
    const ofLocation = await gql(aliceToken, 'query ($l: ID) { locationUpdateJobsConnection(locationId: $l) { totalCount nodes { id } } }', { l: aliceLocations[0]!.id });
    expect(ofLocation.locationUpdateJobsConnection).toEqual({ totalCount: 1, nodes: [{ id: updateJobIds[0] }] });
    const none = await gql(aliceToken, 'query { locationUpdateJobsConnection(status: FAILED, locationId: "not-an-id") { totalCount nodes { id } } }');
    expect(none.locationUpdateJobsConnection).toEqual({ totalCount: 0, nodes: [] });
    const insider = await gql(insiderToken, 'query ($acc: ID) { locationUpdateJobsConnection(accountId: $acc) { totalCount } }', { acc: aliceId });
    expect(insider.locationUpdateJobsConnection.totalCount).toBe(0);
  });

  it('gives the existing connections nodes: their edges’ nodes', async () => {
    const data = await gql(
      aliceToken,
      `query ($l: ID!) {
        posts(first: 5) { edges { node { id } } nodes { id } }
        locations(first: 5) { edges { node { id } } nodes { id } }
        reviews(locationId: $l, first: 5) { edges { node { id } } nodes { id } }
        competitorScans(first: 5) { edges { node { id } } nodes { id } }
        asyncWork(first: 5) { edges { node { id } } nodes { id } }
      }`,
      { l: records.Location!.id },
    );
    for (const [field, connection] of Object.entries<{ edges: { node: unknown }[]; nodes: unknown[] }>(data)) {
      expect({ field, nodes: connection.nodes }).toEqual({ field, nodes: connection.edges.map((edge) => edge.node) });
      expect({ field, some: connection.nodes.length > 0 }).toEqual({ field, some: true });
    }
  });

  it('refuses a page over 100 and a cursor it did not write, on the new connections too', async () => {
    const documents = {
      accountsConnection: 'query ($f: Int! = 20, $a: String) { accountsConnection(first: $f, after: $a) { totalCount } }',
      'Organization.accountsConnection': 'query ($f: Int! = 20, $a: String) { organization { accountsConnection(first: $f, after: $a) { totalCount } } }',
      betaBrandsConnection: 'query ($f: Int! = 20, $a: String) { betaBrandsConnection(first: $f, after: $a) { totalCount } }',
      apiTokensConnection: 'query ($f: Int! = 20, $a: String) { apiTokensConnection(first: $f, after: $a) { totalCount } }',
      locationUpdateJobsConnection: `query ($f: Int! = 20, $a: String) { locationUpdateJobsConnection(accountId: "${aliceId}", first: $f, after: $a) { totalCount } }`,
    };
    for (const [field, document] of Object.entries(documents)) {
      for (const [variables, message] of [
        [{ f: 101 }, /first must be between 1 and 100/],
        [{ f: 0 }, /first must be between 1 and 100/],
        [{ a: 'bm90IGEgY3Vyc29y' }, /not a cursor/],
      ] as const) {
        const answer = await graphql(t.url, document, { token: org.token, variables });
        expect({ field, error: answer.body.errors?.[0]?.extensions?.code, message: answer.body.errors?.[0]?.message }).toEqual({
          field,
          error: 'BAD_USER_INPUT',
          message: expect.stringMatching(message),
        });
      }
    }
  });

  it('refetches every kind of record by its nodeId, as its own query reads it', async () => {
    for (const [kind, record] of Object.entries(records)) {
      const token = ['Account', 'ApiToken', 'BetaBrand'].includes(kind) ? org.token : aliceToken;
      const answer = await nodeAnswer(token, record.nodeId);
      const key = kind === 'BetaBrand' ? { segmentId: record.id } : { id: record.id };
      expect({ kind, answer: answer.body }).toEqual({ kind, answer: { data: { node: { __typename: record.typename, nodeId: record.nodeId, ...key } } } });
      // The organization token reaches the account's records too, by the same global id.
      expect({ kind, node: (await nodeAnswer(org.token, record.nodeId)).body.data?.node }).toEqual({ kind, node: answer.body.data!.node });
    }
    // One record, one global id: as a list shows it, as node answers it.
    const listed = await gql(aliceToken, 'query { posts(first: 100) { nodes { id nodeId } } asyncWork(first: 100) { nodes { id nodeId } } }');
    expect(listed.posts.nodes).toContainEqual({ id: records.Post!.id, nodeId: records.Post!.nodeId });
    expect(listed.asyncWork.nodes).toContainEqual({ id: records.AsyncWork!.id, nodeId: records.AsyncWork!.nodeId });
    // The global id is of the kind of record, not of the GraphQL type of a unit of work.
    expect(Buffer.from(records.AsyncWork!.nodeId, 'base64url').toString()).toBe(`AsyncWork:${records.AsyncWork!.id}`);
    expect(Buffer.from(records.Post!.nodeId, 'base64url').toString()).toBe(`Post:${aliceId}:${records.Post!.id}`);
    // A whole record through node, beyond its id: what its own query answers.
    const viaNode = await gql(aliceToken, 'query ($n: ID!) { node(nodeId: $n) { ... on Post { state accountId locationId params { summary } } } }', { n: records.Post!.nodeId });
    const viaPost = await gql(aliceToken, 'query ($id: ID!) { post(id: $id) { state accountId locationId params { summary } } }', { id: records.Post!.id });
    expect(viaNode.node).toEqual(viaPost.post);
  });

  it('answers null for another organization’s records and for unknown ids alike', async () => {
    const garbage = [
      '',
      'x',
      'not a global id!',
      globalId('Post', aliceId),
      globalId('Post', aliceId, records.Post!.id, ''),
      globalId('Nothing', newId()),
      Buffer.from(`Account:${aliceId}`).toString('base64'),
      `${records.Account!.nodeId}=`,
    ];
    for (const nodeId of [...Object.values(records).map((record) => record.nodeId), ...unknownIds(), ...garbage]) {
      expect({ nodeId, answer: await nodeAnswer(other.token, nodeId) }).toEqual({ nodeId, answer: { status: 200, body: { data: { node: null } } } });
    }
    // The other organization's own account, with this organization's record ids: still not theirs.
    const otherAccount = other.accounts[0]!.account.id;
    for (const forged of [globalId('Post', otherAccount, records.Post!.id), globalId('Location', otherAccount, records.Location!.id)]) {
      expect(await nodeAnswer(other.token, forged)).toEqual({ status: 200, body: { data: { node: null } } });
    }
    // Its own record, it reaches.
    const own = await gql(other.token, 'query ($a: ID) { locations(accountId: $a, first: 1) { nodes { id nodeId } } }', { a: otherAccount });
    expect((await nodeAnswer(other.token, own.locations.nodes[0].nodeId)).body.data?.node).toEqual({ __typename: 'Location', ...own.locations.nodes[0] });
    // Without a token: what every operation answers.
    expect((await nodeAnswer(undefined, records.Post!.nodeId)).body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('lets an account token reach its own account’s records only: another account’s answer as unknown ones do', async () => {
    const unknown = Object.fromEntries(unknownIds().map((nodeId) => [Buffer.from(nodeId, 'base64url').toString().split(':')[0], nodeId]));
    for (const intruder of [insiderToken, other.accounts[0]!.token]) {
      for (const [kind, record] of Object.entries(records)) {
        const foreign = await nodeAnswer(intruder, record.nodeId);
        const nobody = await nodeAnswer(intruder, unknown[kind]);
        expect({ kind, foreign }).toEqual({ kind, foreign: nobody });
        if (['Account', 'ApiToken', 'BetaBrand'].includes(kind)) {
          // Their own queries are organization tokens' only, whatever the id: so is node.
          expect({ kind, code: foreign.body.errors?.[0]?.extensions?.code, data: foreign.body.data }).toEqual({ kind, code: 'ORGANIZATION_TOKEN_REQUIRED', data: { node: null } });
        } else {
          expect({ kind, foreign: foreign.body }).toEqual({ kind, foreign: { data: { node: null } } });
        }
      }
    }
    // As the type's own query answers the insider.
    const ownQuery = await graphql(t.url, 'query ($id: ID) { account(id: $id) { id } }', { token: insiderToken, variables: { id: aliceId } });
    expect(ownQuery.body.errors?.[0]?.extensions?.code).toBe('ORGANIZATION_TOKEN_REQUIRED');
    const ownPost = await graphql(t.url, 'query ($id: ID!) { post(id: $id) { id } }', { token: insiderToken, variables: { id: records.Post!.id } });
    expect(ownPost.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
