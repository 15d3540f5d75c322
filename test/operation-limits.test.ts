import { Lexer, parse, Source, TokenKind, validate, type GraphQLFormattedError } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { gatewaySchema } from '../src/schema';
import { costLimitRule, operationLimits } from '../src/graphql/limits';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http, type JsonResponse } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

type GraphQLBody = { data?: any; errors?: GraphQLFormattedError[] };

/** What one operation over graphql-ws ended with: a result, an error message, or the socket closing. */
type WsOutcome =
  | { kind: 'result'; result: GraphQLBody }
  | { kind: 'errors'; errors: GraphQLFormattedError[] }
  | { kind: 'closed'; code: number; reason: string };

let t: TestStack;
let org: OrganizationFixture;
let accountId: string;
let wsUrl: string;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestStack();
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 3 });
  accountId = org.accounts[0]!.account.id;
  wsUrl = `${t.url.replace(/^http/, 'ws')}/graphql`;
});

afterAll(async () => {
  for (const client of clients) await client.dispose();
  await t.close();
});

/** A graphql-ws client that never retries, so a refused connection is reported instead of tried again. */
function wsClient(token: string | undefined, options: { lazy?: boolean; onConnected?: () => void } = {}): Client {
  const client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: token === undefined ? undefined : { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: options.lazy ?? true,
    // The non-lazy client reports connection errors here; the tests read them from the operation instead.
    onNonLazyError: () => undefined,
    on: { connected: () => options.onConnected?.() },
  });
  clients.push(client);
  return client;
}

function wsRun(client: Client, query: string, variables?: Record<string, unknown>): Promise<WsOutcome> {
  return new Promise((resolve, reject) => {
    let result: GraphQLBody = {};
    client.subscribe(
      { query, variables },
      {
        next: (value) => {
          result = value as GraphQLBody;
        },
        error: (error: unknown) => {
          if (Array.isArray(error)) resolve({ kind: 'errors', errors: error as GraphQLFormattedError[] });
          else if (error && typeof error === 'object' && 'code' in error && 'reason' in error) {
            const close = error as { code: number; reason: unknown };
            resolve({ kind: 'closed', code: close.code, reason: String(close.reason) });
          } else reject(error instanceof Error ? error : new Error(String(error)));
        },
        complete: () => resolve({ kind: 'result', result }),
      },
    );
  });
}

/** The same operation as HTTP GET /graphql?query=…&variables=… */
function graphqlGet(query: string, options: { token?: string; variables?: Record<string, unknown> } = {}) {
  const search = new URLSearchParams({ query });
  if (options.variables) search.set('variables', JSON.stringify(options.variables));
  return http<GraphQLBody>(t.url, 'GET', `/graphql?${search.toString()}`, { token: options.token });
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** `ofType { … name … }` nested `levels` deep: introspection's one field that nests as far as a client writes. */
const ofTypes = (levels: number) => `${'ofType { '.repeat(levels)}name${' }'.repeat(levels)}`;

const HOURS = 'openDay openTime { hours minutes } closeDay closeTime { hours minutes }';
/** Every field of a location, nested ones included: what a client showing a location in full asks for. */
const LOCATION_FIELDS = `
  id referenceId name categoryId address postal city countryCode administrativeArea additionalAddressLines
  description phoneNumber additionalPhoneNumbers websiteUri latitude longitude profileLogoUrl coverUrl
  additionalCategoryIds serviceAreaPlaceIds serviceAreaPlaceNames placeId serviceItems serviceArea
  citationsStatus connected alphaLocationName createdAt updatedAt
  categories { primaryCategory { name displayName } additionalCategories { name displayName } }
  regularHours { ${HOURS} }
  specialHours { openDate closeDate isClosed openTime { hours minutes } closeTime { hours minutes } }
  moreHours { hoursTypeId periods { ${HOURS} } }`;

/**
 * A document at every limit at once: 15 aliases, depth exactly 10 (the `__type` branch), and a cost just under
 * 20000 when `more` asks for 36 locations (the largest page, 250 locations, plus 36 more). `first: 37` costs 20042.
 * The deepest location path (locations > … > periods > openTime > hours, depth 7) is in it too.
 */
function atLimits(moreFirst: number): string {
  return `query AtLimits($accountId: ID!) {
    page: locationsPage(accountId: $accountId, perPage: 250) { found page perPage locations { ${LOCATION_FIELDS} } }
    more: locations(accountId: $accountId, first: ${moreFirst}) { edges { node { ${LOCATION_FIELDS} } } }
    type: __type(name: "Location") { fields { type { ${ofTypes(6)} } } }
    ${range(12).map((i) => `org${i}: organization { id }`).join('\n    ')}
  }`;
}

function countTokens(document: string): number {
  const lexer = new Lexer(new Source(document));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count += 1;
  return count;
}

/**
 * A real document of exactly `tokens` lexical tokens: the first location of the account, with every field,
 * under 15 aliases, then `__typename` at the root up to the count. (Padding with one field repeated 2000
 * times would not do: graphql-js's OverlappingFieldsCanBeMergedRule gives up on that, "Validation aborted.")
 */
function documentOfTokens(tokens: number): string {
  const pages = range(15).map((i) => `p${i}: locations(accountId: $accountId, first: 1) { edges { node { ${LOCATION_FIELDS} } } }`);
  const base = `query Big($accountId: ID!) { ${pages.join(' ')} }`;
  const padding = tokens - countTokens(base);
  if (padding < 0) throw new Error(`documentOfTokens: the base document alone has more than ${tokens} tokens`);
  const document = `query Big($accountId: ID!) { ${pages.join(' ')} ${'__typename '.repeat(padding)}}`;
  expect(countTokens(document)).toBe(tokens);
  return document;
}

interface OverLimitCase {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  message: string;
}

/**
 * Each is over exactly one limit. Depth: the schema's own types nest 8 deep at most (it has no cycles), so
 * the only real fields that go deeper are introspection's: `__type` counts (only `__schema` is exempt), and
 * `ofType` nests as far as a client writes it.
 */
const overLimitCases = (): OverLimitCase[] => [
  {
    name: 'over-deep (depth 12)',
    query: `{ __type(name: "Location") { fields { type { ${ofTypes(8)} } } } }`,
    message: 'Query depth limit of 10 exceeded, found 12.',
  },
  {
    name: 'over-aliased (16 aliases)',
    query: `{ ${range(16).map((i) => `org${i}: organization { id }`).join(' ')} }`,
    message: 'Aliases limit of 15 exceeded, found 16.',
  },
  {
    name: 'over-costly (one location past the cost limit)',
    query: atLimits(37),
    variables: { accountId },
    message: 'Query cost limit of 20000 exceeded, found 20042.',
  },
  {
    // Short tokens, so that it also fits in a GET URL (Node refuses request heads over 16 KiB with 431).
    name: 'over the token limit (2001 tokens)',
    query: `{ organization { ${'id '.repeat(2001 - 5)}} }`,
    message: 'Token limit of 2000 exceeded.',
  },
];

describe('operation limits answer the same coded error over HTTP POST, HTTP GET and graphql-ws', () => {
  it.each(overLimitCases().map((c) => [c.name, c] as const))('%s', async (_name, limitCase) => {
    const { query, variables } = limitCase;
    const post = await graphql(t.url, query, { token: org.token, variables });
    const get = await graphqlGet(query, { token: org.token, variables });
    const ws = await wsRun(wsClient(org.token), query, variables);

    // Exactly one error, so the document tripped this limit and nothing else; rejected before execution.
    const expected = [expect.objectContaining({ message: limitCase.message, extensions: { code: 'OPERATION_LIMIT_EXCEEDED' } })];
    for (const response of [post, get] as JsonResponse<GraphQLBody>[]) {
      expect(response.status).toBe(400);
      expect(response.body.data).toBeUndefined();
      expect(response.body.errors).toEqual(expected);
    }
    expect(ws).toEqual({ kind: 'errors', errors: expected });
    // Not just the same code: the same error, field for field.
    expect(get.body.errors).toEqual(post.body.errors);
    expect((ws as { errors: unknown }).errors).toEqual(post.body.errors);
  });

  it("counts a page size given in a variable as that list's largest page, so a variable cannot hide the cost", async () => {
    // Cursor pages are at most 100: three of them (3 × 6801) are over; numbered location pages are at most 250.
    const query = `query ThreePages($accountId: ID!, $first: Int!) {
      a: locations(accountId: $accountId, first: $first) { edges { node { ${LOCATION_FIELDS} } } }
      b: locations(accountId: $accountId, first: $first) { edges { node { ${LOCATION_FIELDS} } } }
      c: locations(accountId: $accountId, first: $first) { edges { node { ${LOCATION_FIELDS} } } }
    }`;
    const variables = { accountId, first: 1 };
    const post = await graphql(t.url, query, { token: org.token, variables });
    const ws = await wsRun(wsClient(org.token), query, variables);
    const expected = [
      expect.objectContaining({
        message: 'Query cost limit of 20000 exceeded, found 20403.',
        extensions: { code: 'OPERATION_LIMIT_EXCEEDED' },
      }),
    ];
    expect(post.status).toBe(400);
    expect(post.body.errors).toEqual(expected);
    expect(ws).toEqual({ kind: 'errors', errors: expected });
  });

  it('counts perPage (numbered pages) like first, each list at its own largest page', async () => {
    const POST_FIELDS = `id accountId locationId campaignId createTime postId publishedTime scheduledTime searchUrl source
      state updateTime version lastError { at message reason status details }
      params { summary languageCode topicType alertType scheduledTime callToAction { actionType url }
        offer { couponCode redeemOnlineUrl termsConditions } media { mediaFormat sourceUrl } }`;
    // A page of 250 locations given in a variable (17501) and a page of posts of $perPage: within the limit only if
    // either counted less than its largest page (250 locations, 100 posts).
    const query = `query Both($accountId: ID!, $perPage: Int!) {
      locationsPage(accountId: $accountId, perPage: $perPage) { found page perPage locations { ${LOCATION_FIELDS} } }
      postsPage(accountId: $accountId, perPage: $perPage) { found page perPage posts { ${POST_FIELDS} } }
    }`;
    const post = await graphql(t.url, query, { token: org.token, variables: { accountId, perPage: 1 } });
    expect(post.status).toBe(400);
    expect(post.body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^Query cost limit of 20000 exceeded, found \d+\.$/),
        extensions: { code: 'OPERATION_LIMIT_EXCEEDED' },
      }),
    ]);
  });

  it('counts a location page at its real size: four aliased pages of 250 locations with 19 fields each are over', async () => {
    const FIELDS = `id referenceId name categoryId address postal city countryCode administrativeArea description phoneNumber
      websiteUri latitude longitude profileLogoUrl coverUrl placeId citationsStatus connected`;
    const pages = (n: number) =>
      `query Pages($accountId: ID!) { ${range(n).map((i) => `p${i}: locationsPage(accountId: $accountId, perPage: 250) { found page perPage locations { ${FIELDS} } }`).join(' ')} }`;
    const four = await graphql(t.url, pages(4), { token: org.token, variables: { accountId } });
    expect(four.status).toBe(400);
    expect(four.body.errors).toEqual([
      expect.objectContaining({ message: 'Query cost limit of 20000 exceeded, found 23004.', extensions: { code: 'OPERATION_LIMIT_EXCEEDED' } }),
    ]);
    const three = await graphql(t.url, pages(3), { token: org.token, variables: { accountId } });
    expect(three.status).toBe(200);
    expect(three.body.errors).toBeUndefined();
    expect(three.body.data.p2.locations).toHaveLength(3);
  });
});

describe('legitimate operations just under the limits pass on both transports', () => {
  it('runs a document at 15 aliases, depth 10 and a cost just under 20000', async () => {
    const query = atLimits(36);
    // Guards the fixture: whatever the cost model becomes, this document must sit just under the limit.
    const [costReport] = validate(await gatewaySchema(), parse(query), [costLimitRule(0)]);
    const cost = Number(/found (\d+)/.exec(costReport?.message ?? '')?.[1]);
    expect(cost).toBeLessThanOrEqual(operationLimits.maxCost);
    expect(cost).toBeGreaterThan(operationLimits.maxCost - 100);

    const post = await graphql(t.url, query, { token: org.token, variables: { accountId } });
    const ws = await wsRun(wsClient(org.token), query, { accountId });

    expect(post.status).toBe(200);
    expect(post.body.errors).toBeUndefined();
    expect(ws).toEqual({ kind: 'result', result: post.body });
    const data = post.body.data;
    expect(data.page.found).toBe(3);
    // The fixture creates them in one millisecond, so their time-ordered ids do not follow creation order.
    const names = data.page.locations.map((location: { name: string }) => location.name);
    expect(names.sort()).toEqual(['Location 1.1', 'Location 1.2', 'Location 1.3']);
    expect(data.more.edges).toHaveLength(3);
    expect(data.type.fields.length).toBeGreaterThan(20);
    expect(data.org11).toEqual({ id: org.organization.id });
  });

  it('runs a document of exactly 2000 tokens', async () => {
    const query = documentOfTokens(2000);
    const post = await graphql(t.url, query, { token: org.token, variables: { accountId } });
    const ws = await wsRun(wsClient(org.token), query, { accountId });
    expect(post.status).toBe(200);
    expect(post.body.errors).toBeUndefined();
    expect(post.body.data.__typename).toBe('Query');
    expect(post.body.data.p14.edges).toHaveLength(1);
    expect(post.body.data.p14.edges[0].node.name).toMatch(/^Location 1\.\d$/);
    expect(ws).toEqual({ kind: 'result', result: post.body });
  });

  it("lets the IDE's full introspection query through (__schema is exempt from depth and cost)", async () => {
    const { getIntrospectionQuery } = await import('graphql');
    const query = getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true, specifiedByUrl: true });
    const post = await graphql(t.url, query, { token: org.token });
    const ws = await wsRun(wsClient(org.token), query);
    expect(post.status).toBe(200);
    expect(post.body.errors).toBeUndefined();
    expect(post.body.data.__schema.types.some((type: { name: string }) => type.name === 'Location')).toBe(true);
    expect(ws).toEqual({ kind: 'result', result: post.body });
  });
});

describe('list sizes', () => {
  it('answers first: 101 with BAD_USER_INPUT on both transports', async () => {
    const query = 'query Page($accountId: ID!) { locations(accountId: $accountId, first: 101) { totalCount } }';
    const post = await graphql(t.url, query, { token: org.token, variables: { accountId } });
    const ws = await wsRun(wsClient(org.token), query, { accountId });
    expect(post.body.data).toBeNull();
    expect(post.body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/first must be between 1 and 100/),
        path: ['locations'],
        extensions: { code: 'BAD_USER_INPUT' },
      }),
    ]);
    expect(ws).toEqual({ kind: 'result', result: post.body });
  });

  it('serves first: 100', async () => {
    const query = 'query Page($accountId: ID!) { locations(accountId: $accountId, first: 100) { totalCount edges { node { id } } } }';
    const post = await graphql(t.url, query, { token: org.token, variables: { accountId } });
    expect(post.body.errors).toBeUndefined();
    expect(post.body.data.locations.edges).toHaveLength(3);
  });
});

describe('documents that do not parse or validate', () => {
  it('get the same code on both transports', async () => {
    for (const [query, code] of [
      ['{ organization { id ', 'GRAPHQL_PARSE_FAILED'],
      ['{ organization { noSuchField } }', 'GRAPHQL_VALIDATION_FAILED'],
    ] as const) {
      const post = await graphql(t.url, query, { token: org.token });
      const ws = await wsRun(wsClient(org.token), query);
      expect(post.status).toBe(400);
      expect(post.body.errors).toEqual([expect.objectContaining({ extensions: { code } })]);
      expect(ws).toEqual({ kind: 'errors', errors: post.body.errors });
    }
  });

  it('refuses a message over 1 MiB on both transports', async () => {
    // A comment is free for the token limit, so only the size limit stops it.
    const query = `# ${'x'.repeat(1024 * 1024)}\n{ organization { id } }`;
    const post = await graphql(t.url, query, { token: org.token });
    expect(post.status).toBe(413);
    // graphql-ws reports every socket error on console.error; here it is the expected refusal.
    const consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const ws = await wsRun(wsClient(org.token), query);
      // 1009 "message too big": the ws server closes the socket before graphql-ws reads the message.
      expect(ws).toEqual({ kind: 'closed', code: 1009, reason: expect.any(String) });
      expect(consoleError).toHaveBeenCalledWith(expect.any(String), expect.objectContaining({ code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' }));
    } finally {
      consoleError.mockRestore();
    }
  });
});

describe('batched HTTP requests', () => {
  it('refuses a JSON array body and runs none of its operations', async () => {
    const tokensBefore = await graphql(t.url, '{ apiTokens { id } }', { token: org.token });
    const batch = [
      { query: `mutation { createAccountToken(accountId: "${accountId}", label: "batched") { token } }` },
      { query: '{ organization { id } }' },
    ];
    const response = await http<GraphQLBody>(t.url, 'POST', '/graphql', { token: org.token, body: batch });
    expect(response.status).toBe(400);
    expect(Array.isArray(response.body)).toBe(false);
    expect(response.body.data).toBeUndefined();
    expect(response.body.errors).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/batching/i), extensions: { code: 'BAD_USER_INPUT' } }),
    ]);
    const tokensAfter = await graphql(t.url, '{ apiTokens { id } }', { token: org.token });
    expect(tokensAfter.body.data.apiTokens).toEqual(tokensBefore.body.data.apiTokens);
  });
});

describe('unexpected errors are masked outside development', () => {
  it('answers a database failure with INTERNAL_SERVER_ERROR and no stack or SQL, on both transports', async () => {
    // A real failure of the database under the running server (a table gone missing), not a mock. Every
    // test file has its own database, and the table is back before this test ends.
    const sql = t.em().getConnection();
    await sql.execute('alter table location rename to location_hidden');
    try {
      const query = 'query Page($accountId: ID!) { locations(accountId: $accountId) { totalCount edges { node { id } } } }';
      const post = await graphql(t.url, query, { token: org.token, variables: { accountId } });
      const ws = await wsRun(wsClient(org.token), query, { accountId });

      expect(post.status).toBe(200);
      expect(post.body).toEqual({
        data: null,
        errors: [
          {
            message: 'Internal server error',
            locations: [{ line: 1, column: 31 }],
            path: ['locations'],
            extensions: { code: 'INTERNAL_SERVER_ERROR' },
          },
        ],
      });
      expect(ws).toEqual({ kind: 'result', result: post.body });
      const text = JSON.stringify([post.body, ws]);
      for (const leak of ['select', 'location_hidden', '"location"', 'relation', 'does not exist', 'stack', '.ts:', '.js:']) {
        expect(text).not.toContain(leak);
      }
    } finally {
      await sql.execute('alter table location_hidden rename to location');
    }
    // And the service is whole again.
    const after = await graphql(t.url, 'query Page($accountId: ID!) { locations(accountId: $accountId) { totalCount } }', {
      token: org.token,
      variables: { accountId },
    });
    expect(after.body.data.locations.totalCount).toBe(3);
  });

  it('masks a database failure while authenticating: HTTP 500, graphql-ws closes 4500 (not 4403, not the SQL)', async () => {
    // A token never used yet, so its lookup reaches the database (used tokens are served from the token cache).
    const unseen = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 0 });
    const sql = t.em().getConnection();
    await sql.execute('alter table api_token rename to api_token_hidden');
    try {
      const post = await graphql(t.url, '{ organization { id } }', { token: unseen.token });
      const ws = await wsRun(wsClient(unseen.token), '{ organization { id } }');
      expect(post.status).toBe(500);
      expect(post.body).toEqual({ errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      expect(ws).toEqual({ kind: 'closed', code: 4500, reason: 'Internal server error' });
    } finally {
      await sql.execute('alter table api_token_hidden rename to api_token');
    }
  });
});

describe('graphql-ws authentication', () => {
  async function createAccountToken(label: string): Promise<{ id: string; token: string }> {
    const created = await graphql(
      t.url,
      'mutation Create($accountId: ID!, $label: String) { createAccountToken(accountId: $accountId, label: $label) { token apiToken { id } } }',
      { token: org.token, variables: { accountId, label } },
    );
    expect(created.body.errors).toBeUndefined();
    return { id: created.body.data.createAccountToken.apiToken.id, token: created.body.data.createAccountToken.token };
  }

  async function revoke(id: string): Promise<void> {
    const revoked = await graphql(t.url, 'mutation Revoke($id: ID!) { revokeApiToken(id: $id) { revokedAt } }', {
      token: org.token,
      variables: { id },
    });
    expect(revoked.body.data.revokeApiToken.revokedAt).toEqual(expect.any(String));
  }

  it('closes with 4403 when connection_init has no token', async () => {
    expect(await wsRun(wsClient(undefined), '{ organization { id } }')).toEqual({ kind: 'closed', code: 4403, reason: 'Forbidden' });
  });

  it('closes with 4403 for an unknown token', async () => {
    const outcome = await wsRun(wsClient(`${org.token.slice(0, -4)}xxxx`), '{ organization { id } }');
    expect(outcome).toEqual({ kind: 'closed', code: 4403, reason: 'Forbidden' });
  });

  it('closes with 4403 for a revoked token', async () => {
    const { id, token } = await createAccountToken('revoked before connecting');
    await revoke(id);
    expect(await wsRun(wsClient(token), '{ locations { totalCount } }')).toEqual({ kind: 'closed', code: 4403, reason: 'Forbidden' });
  });

  it('runs { organization { id } } with a valid organization token', async () => {
    expect(await wsRun(wsClient(org.token), '{ organization { id } }')).toEqual({
      kind: 'result',
      result: { data: { organization: { id: org.organization.id } } },
    });
  });

  it('applies the same token rules as HTTP: an account token asking for organization gets ORGANIZATION_TOKEN_REQUIRED', async () => {
    const accountToken = org.accounts[0]!.token;
    const post = await graphql(t.url, '{ organization { id } }', { token: accountToken });
    const ws = await wsRun(wsClient(accountToken), '{ organization { id } }');
    expect(post.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'ORGANIZATION_TOKEN_REQUIRED' } })]);
    expect(ws).toEqual({ kind: 'result', result: post.body });
    // And what the account token may see, it sees.
    const own = await wsRun(wsClient(accountToken), '{ locations { totalCount } }');
    expect(own).toEqual({ kind: 'result', result: { data: { locations: { totalCount: 3 } } } });
  });

  it('closes an open socket with 4403 at its next operation once its token is revoked', async () => {
    const { id, token } = await createAccountToken('revoked while connected');
    let connections = 0;
    const client = wsClient(token, { lazy: false, onConnected: () => (connections += 1) });
    expect(await wsRun(client, '{ locations { totalCount } }')).toEqual({
      kind: 'result',
      result: { data: { locations: { totalCount: 3 } } },
    });
    await revoke(id);
    expect(await wsRun(client, '{ locations { totalCount } }')).toEqual({ kind: 'closed', code: 4403, reason: 'Forbidden' });
    // The same socket was refused, not a new connection.
    expect(connections).toBe(1);
  });
});
