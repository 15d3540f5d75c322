import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

let t: TestStack;
let org: OrganizationFixture;
let other: OrganizationFixture;

beforeAll(async () => {
  t = await startTestStack();
  org = await createOrganizationFixture(t.em(), { name: 'Acme', accounts: 2, locationsEach: 3 });
  other = await createOrganizationFixture(t.em(), { name: 'Other', accounts: 1, locationsEach: 1 });
});
afterAll(() => t.close());

describe('GET /organization', () => {
  it('answers the documented organization shape', async () => {
    const res = await http(t.url, 'GET', '/organization', { token: org.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      success: true,
      payload: {
        id: org.organization.id,
        name: 'Acme',
        accounts: org.accounts.map(({ account }) => ({ id: account.id, number_of_locations: 3 })),
        owners: [],
        created_at: org.organization.createdAt.getTime(),
        state: 'ACTIVE',
      },
    });
    expect(Number.isInteger(res.body.payload.created_at)).toBe(true);
  });

  it('is the same organization as the GraphQL twin', async () => {
    const res = await graphql(t.url, '{ organization { id name state createdAt accounts { id numberOfLocations } } }', {
      token: org.token,
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.organization).toEqual({
      id: org.organization.id,
      name: 'Acme',
      state: 'ACTIVE',
      createdAt: org.organization.createdAt.toISOString(),
      accounts: org.accounts.map(({ account }) => ({ id: account.id, numberOfLocations: 3 })),
    });
  });
});

describe('GET /organization/accounts', () => {
  it('answers the organization-list shape, reference_id absent when not set', async () => {
    const em = t.em();
    const unreferenced = await createOrganizationFixture(em, { name: 'NoRef', accounts: 1 });
    unreferenced.accounts[0]!.account.referenceId = null;
    await em.flush();

    const res = await http(t.url, 'GET', '/organization/accounts', { token: org.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      payload: org.accounts.map(({ account }) => ({
        id: account.id,
        name: account.name,
        organization_id: org.organization.id,
        alpha_state: 'VERIFIED',
        created_at: account.createdAt.getTime(),
        country_codes: ['US'],
        number_of_locations: 3,
        reference_id: account.referenceId,
      })),
    });

    const bare = await http(t.url, 'GET', '/organization/accounts', { token: unreferenced.token });
    expect(bare.body.payload[0]).not.toHaveProperty('reference_id');
  });

  it('answers 404 in the organization error shape when the organization has no accounts', async () => {
    const empty = await createOrganizationFixture(t.em(), { name: 'Empty', accounts: 0 });
    const res = await http(t.url, 'GET', '/organization/accounts', { token: empty.token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, message: 'Organization accounts not found', error: 'Not Found' });
  });
});

describe('GET /business-profile', () => {
  const shape = (fixture: OrganizationFixture['accounts'][number]) => ({
    id: fixture.account.id,
    reference_id: fixture.account.referenceId,
    name: fixture.account.name,
    number_of_locations: 3,
    created_at: fixture.account.createdAt.toISOString(),
  });

  it('finds one account by account_id, by reference_id, or by both', async () => {
    const [first, second] = org.accounts;
    const byId = await http(t.url, 'GET', `/business-profile?account_id=${first!.account.id}`, { token: org.token });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({ success: true, payload: shape(first!) });

    const byRef = await http(t.url, 'GET', '/business-profile?reference_id=ref-2', { token: org.token });
    expect(byRef.body).toEqual({ success: true, payload: shape(second!) });

    const both = await http(t.url, 'GET', `/business-profile?account_id=${first!.account.id}&reference_id=ref-1`, {
      token: org.token,
    });
    expect(both.body.payload.id).toBe(first!.account.id);
  });

  it('lists every account of the organization when neither is given', async () => {
    const res = await http(t.url, 'GET', '/business-profile', { token: org.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, payload: org.accounts.map(shape) });
  });

  it('answers 404 for an unknown account, and for an account_id and reference_id that disagree', async () => {
    const unknown = await http(t.url, 'GET', '/business-profile?account_id=01a20148-0000-7000-8000-000000000000', {
      token: org.token,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 404, message: 'Account not found' });

    const garbage = await http(t.url, 'GET', '/business-profile?account_id=not-an-id', { token: org.token });
    expect(garbage.status).toBe(404);

    const mismatch = await http(t.url, 'GET', `/business-profile?account_id=${org.accounts[0]!.account.id}&reference_id=ref-2`, {
      token: org.token,
    });
    expect(mismatch.status).toBe(404);
  });
});

describe('PATCH /business-profile', () => {
  it('renames an account looked up by reference_id and answers the business-profile shape', async () => {
    const target = org.accounts[1]!;
    const res = await http(t.url, 'PATCH', '/business-profile?reference_id=ref-2', {
      token: org.token,
      body: { name: '  Lakeside  ' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      payload: {
        id: target.account.id,
        reference_id: 'ref-2',
        name: 'Lakeside',
        number_of_locations: 3,
        created_at: target.account.createdAt.toISOString(),
      },
    });
    const reread = await http(t.url, 'GET', '/business-profile?reference_id=ref-2', { token: org.token });
    expect(reread.body.payload.name).toBe('Lakeside');
  });

  it('changes reference_id only when the account is looked up by account_id', async () => {
    const target = org.accounts[0]!;
    const refused = await http(t.url, 'PATCH', '/business-profile?reference_id=ref-1', {
      token: org.token,
      body: { reference_id: 'ref-1-new' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: 400,
      message: 'reference_id can only be changed when the account is looked up by account_id',
    });

    const changed = await http(t.url, 'PATCH', `/business-profile?account_id=${target.account.id}`, {
      token: org.token,
      body: { reference_id: 'ref-1-new' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.payload.reference_id).toBe('ref-1-new');
    const byNewRef = await http(t.url, 'GET', '/business-profile?reference_id=ref-1-new', { token: org.token });
    expect(byNewRef.body.payload.id).toBe(target.account.id);

    const back = await http(t.url, 'PATCH', `/business-profile?account_id=${target.account.id}`, {
      token: org.token,
      body: { reference_id: 'ref-1' },
    });
    expect(back.status).toBe(200);
  });

  it('refuses a reference_id another account of the organization uses', async () => {
    const res = await http(t.url, 'PATCH', `/business-profile?account_id=${org.accounts[0]!.account.id}`, {
      token: org.token,
      body: { reference_id: 'ref-2' },
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 409, message: 'reference_id is already used by another account of the organization' });
  });

  it.each([
    ['no lookup', '/business-profile', { name: 'x' }, 'account_id or reference_id is required to find an account'],
    ['nothing to change', '/business-profile?reference_id=ref-2', {}, 'Nothing to update: send name and/or reference_id'],
    ['a wrong-typed name', '/business-profile?reference_id=ref-2', { name: 5 }, 'name must be a string'],
    ['an empty name', '/business-profile?reference_id=ref-2', { name: '' }, 'name must not be empty'],
    ['a body that is not an object', '/business-profile?reference_id=ref-2', [1, 2], 'The request body must be a JSON object'],
  ])('answers 400 with the generic body for %s', async (_case, path, body, message) => {
    const res = await http(t.url, 'PATCH', path, { token: org.token, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 400, message });
  });

  it('answers 400 with the generic body for malformed JSON', async () => {
    const res = await http(t.url, 'PATCH', '/business-profile?reference_id=ref-2', {
      token: org.token,
      rawBody: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(400);
    expect(res.body.message).toMatch(/JSON/);
  });

  it('is the same rule in the GraphQL twin', async () => {
    const res = await graphql(
      t.url,
      'mutation { updateAccount(where: { referenceId: "ref-2" }, input: { referenceId: "other" }) { id } }',
      { token: org.token },
    );
    expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.body.errors?.[0]?.message).toBe('reference_id can only be changed when the account is looked up by account_id');
  });
});

describe('authentication and scope', () => {
  // Every row has three cells: jest passes `done` to a test function with more parameters than the row.
  const routes: [string, string, unknown][] = [
    ['GET', '/organization', undefined],
    ['GET', '/organization/accounts', undefined],
    ['GET', '/business-profile', undefined],
    ['PATCH', '/business-profile?reference_id=ref-1', { name: 'x' }],
  ];

  it.each(routes)('%s %s answers 401 without a token, with an unknown one, and with a malformed header', async (method, path, body) => {
    for (const headers of [{}, { authorization: 'Bearer lgo_unknown' }, { authorization: 'Basic abc' }] as Record<string, string>[]) {
      const res = await http(t.url, method, path, { body, headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 401, message: 'Missing, unknown or revoked bearer token' });
    }
  });

  it.each(routes)('%s %s answers 403 to an account token', async (method, path, body) => {
    const res = await http(t.url, method, path, { token: org.accounts[0]!.token, body });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 403, message: 'This operation requires an organization token' });
  });

  it('never shows another organization its accounts: 404, not 403', async () => {
    const foreign = other.accounts[0]!.account;
    const get = await http(t.url, 'GET', `/business-profile?account_id=${foreign.id}`, { token: org.token });
    expect(get.status).toBe(404);
    expect(get.body).toEqual({ error: 404, message: 'Account not found' });
    const byRef = await http(t.url, 'GET', `/business-profile?reference_id=${foreign.referenceId}`, { token: other.token });
    expect(byRef.body.payload.id).toBe(foreign.id);
    const patch = await http(t.url, 'PATCH', `/business-profile?account_id=${foreign.id}`, { token: org.token, body: { name: 'stolen' } });
    expect(patch.status).toBe(404);
    const listed = await http(t.url, 'GET', '/organization/accounts', { token: org.token });
    expect(listed.body.payload.map((a: { id: string }) => a.id)).not.toContain(foreign.id);
  });

  it('answers 400 to an organization token without the account_id an operation needs, and 404 for a foreign one', async () => {
    const missing = await graphql(t.url, '{ locations { totalCount } }', { token: org.token });
    expect(missing.body.errors?.[0]).toMatchObject({
      message: 'account_id is required with an organization token',
      extensions: { code: 'ACCOUNT_ID_REQUIRED' },
    });
    const foreign = await graphql(t.url, `{ locations(accountId: "${other.accounts[0]!.account.id}") { totalCount } }`, {
      token: org.token,
    });
    expect(foreign.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('confines an account token to its own account, ignoring any accountId', async () => {
    const mine = org.accounts[0]!;
    const res = await graphql(
      t.url,
      `{ locations(accountId: "${other.accounts[0]!.account.id}", first: 2) { totalCount edges { node { id } } pageInfo { hasNextPage endCursor } } }`,
      { token: mine.token },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.locations.totalCount).toBe(3);
    expect(res.body.data.locations.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(
      mine.locations.slice(0, 2).map((l) => l.id),
    );
    expect(res.body.data.locations.pageInfo.hasNextPage).toBe(true);

    const next = await graphql(t.url, `{ locations(first: 2, after: "${res.body.data.locations.pageInfo.endCursor}") { edges { node { id } } pageInfo { hasNextPage } } }`, {
      token: mine.token,
    });
    expect(next.body.data.locations.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([mine.locations[2]!.id]);
    expect(next.body.data.locations.pageInfo.hasNextPage).toBe(false);
  });

  it('refuses list pages over 100', async () => {
    const res = await graphql(t.url, '{ locations(first: 101) { totalCount } }', { token: org.accounts[0]!.token });
    expect(res.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(res.body.errors?.[0]?.message).toMatch(/first must be between 1 and 100/);
  });
});
