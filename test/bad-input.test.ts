import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { deepJson, EXPANDING_MASK } from './support/fuzz-values';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The bad input that once crashed the process, answered 500 or stored garbage, each answered now with a 400 naming
 * the field, over REST and its GraphQL twin alike.
 */
let t: TestStack;
let org: OrganizationFixture;
let accountId: string;
let locationId: string;

beforeAll(async () => {
  t = await startTestStack({ POST_RATE_LIMIT_PER_MINUTE: '1000' });
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
  accountId = org.accounts[0]!.account.id;
  locationId = org.accounts[0]!.locations[0]!.id;
});
afterAll(() => t.close());

const CREATE_POST = `mutation ($a: ID, $input: CreatePostInput!, $key: String) {
  createPost(accountId: $a, idempotencyKey: $key, input: $input) { post { id params { summary } } }
}`;

function restPost(body: unknown, headers: Record<string, string> = {}) {
  return http(t.url, 'POST', `/post?account_id=${accountId}`, { token: org.token, body, headers });
}

function rawPost(raw: string, headers: Record<string, string> = {}) {
  return http(t.url, 'POST', `/post?account_id=${accountId}`, {
    token: org.token,
    rawBody: raw,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

describe('placeholder expansion is bounded before it is done', () => {
  it('refuses a name repeated in parameterMask (the request that used to double the text 28 times)', async () => {
    const body = { location_id: locationId, params: { summary: '{a}' }, ...EXPANDING_MASK };
    const rest = await restPost(body);
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual({ error: 400, message: 'parameterMask names a more than once' });
    const viaGraphql = await graphql(t.url, CREATE_POST, {
      token: org.token,
      variables: { a: accountId, input: { locationId, params: { summary: '{a}' }, ...EXPANDING_MASK } },
    });
    expect(viaGraphql.body.errors?.[0]).toMatchObject({ message: 'parameterMask names a more than once', extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('never expands a value again: placeholders inside values stay as written', async () => {
    const rest = await restPost({ location_id: locationId, params: { summary: 'Hi {a}, {b}' }, parameterMask: 'a,b', parameters: { a: '{b}{b}', b: 'x' } });
    expect(rest.status).toBe(202);
    expect(rest.body.payload.params.summary).toBe('Hi {b}{b}, x');
  });

  it('computes the length first: a result over 1500 characters is refused without being built', async () => {
    const summary = '{a}'.repeat(500);
    const rest = await restPost({ location_id: locationId, params: { summary }, parameterMask: 'a', parameters: { a: 'x'.repeat(90_000) } });
    expect(rest.body).toEqual({ error: 400, message: 'params.summary must be at most 1500 characters after placeholders are replaced' });
  });

  it('allows at most 50 names', async () => {
    const names = Array.from({ length: 51 }, (_, i) => `n${i}`);
    const rest = await restPost({
      location_id: locationId,
      params: { summary: 'x' },
      parameterMask: names.join(','),
      parameters: Object.fromEntries(names.map((name) => [name, 'v'])),
    });
    expect(rest.body).toEqual({ error: 400, message: 'parameterMask may name at most 50 placeholders' });
  });
});

describe('text PostgreSQL cannot store is refused at the edge, naming the field', () => {
  it.each([
    ['GET /post?q=NUL', 'GET', `/post?account_id=<a>&q=%00`, undefined, 'q must not contain a NUL character (U+0000)'],
    ['GET /business-profile?reference_id=NUL', 'GET', '/business-profile?reference_id=a%00', undefined, 'reference_id must not contain a NUL character (U+0000)'],
    ['PATCH /business-profile?reference_id=NUL', 'PATCH', '/business-profile?reference_id=%00', { name: 'x' }, 'reference_id must not contain a NUL character (U+0000)'],
    ['PATCH /business-profile name with NUL', 'PATCH', '/business-profile?account_id=<a>', { name: 'a\u0000b' }, 'name must not contain a NUL character (U+0000)'],
    ['PATCH /business-profile reference_id with a lone surrogate', 'PATCH', '/business-profile?account_id=<a>', { reference_id: 'x\ud800' }, 'reference_id must be valid Unicode text (it contains an unpaired surrogate, U+D800)'],
    ['POST /post params.summary with a lone surrogate', 'POST', '/post?account_id=<a>', { location_id: '<l>', params: { summary: '\udc00 hi' } }, 'params.summary must be valid Unicode text (it contains an unpaired surrogate, U+DC00)'],
    ['POST /post params.languageCode with NUL', 'POST', '/post?account_id=<a>', { location_id: '<l>', params: { summary: 'x', languageCode: 'e\u0000n' } }, 'params.languageCode must not contain a NUL character (U+0000)'],
    ['POST /post params.alertType with NUL', 'POST', '/post?account_id=<a>', { location_id: '<l>', params: { topicType: 'ALERT', summary: 'x', alertType: '\u0000' } }, 'params.alertType must not contain a NUL character (U+0000)'],
    ['POST /post a key with NUL in parameters', 'POST', '/post?account_id=<a>', { location_id: '<l>', params: { summary: 'x' }, parameters: { 'k\u0000': 'v' } }, 'parameters.k\ufffd must not contain a NUL character (U+0000)'],
  ])('%s: 400 with the documented body', async (_case, method, path, body, message) => {
    const resolve = (text: string) => text.replace('<a>', accountId).replace('<l>', locationId);
    const answer = await http(t.url, method, resolve(path), {
      token: org.token,
      ...(body ? { rawBody: resolve(JSON.stringify(body)), headers: { 'content-type': 'application/json' } } : {}),
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 400, message });
  });

  it('still checks the token first: bad text without a token answers 401', async () => {
    const answer = await http(t.url, 'GET', `/post?account_id=${accountId}&q=%00`);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ error: 401, message: 'Missing, unknown or revoked bearer token' });
  });

  it('the GraphQL twins refuse the same, as BAD_USER_INPUT naming the variable path, or the literal', async () => {
    const summary = await graphql(t.url, CREATE_POST, {
      token: org.token,
      variables: { a: accountId, input: { locationId, params: { summary: 'a\u0000b' } } },
    });
    expect(summary.status).toBe(400);
    expect(summary.body.errors).toEqual([
      { message: '$input.params.summary must not contain a NUL character (U+0000)', extensions: { code: 'BAD_USER_INPUT' } },
    ]);
    const reference = await graphql(t.url, 'query ($r: String) { account(referenceId: $r) { id } }', { token: org.token, variables: { r: '\ud800' } });
    expect(reference.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/^\$r must be valid Unicode text/), extensions: { code: 'BAD_USER_INPUT' } });
    const literal = await graphql(t.url, '{ account(referenceId: "a\\u0000") { id } }', { token: org.token });
    expect(literal.body.errors?.[0]).toMatchObject({ message: 'A string literal must not contain a NUL character (U+0000)', extensions: { code: 'BAD_USER_INPUT' } });
    const get = await http(t.url, 'GET', `/graphql?query=${encodeURIComponent('query ($q: String) { postsPage(accountId: "x", q: $q) { found } }')}&variables=${encodeURIComponent(JSON.stringify({ q: '\u0000' }))}`, {
      token: org.token,
      headers: { accept: 'application/json' },
    });
    expect(get.status).toBe(400);
    expect(get.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('JSON depth is bounded', () => {
  it('answers 400 to parameters nested 10,000 levels deep, with an Idempotency-Key or without', async () => {
    const raw = `{"location_id":"${locationId}","params":{"summary":"x"},"parameters":${deepJson(10_000, 'object')}}`;
    for (const headers of [{ 'Idempotency-Key': 'deep-1' }, {}] as Record<string, string>[]) {
      const answer = await rawPost(raw, headers);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: 400, message: 'parameters.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a is nested deeper than 32 levels' });
    }
    const viaGraphql = await http(t.url, 'POST', '/graphql', {
      token: org.token,
      rawBody: `{"query":${JSON.stringify(CREATE_POST)},"variables":{"a":"${accountId}","key":"deep-2","input":{"locationId":"${locationId}","params":{"summary":"x"},"parameters":${deepJson(10_000, 'array')}}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(viaGraphql.status).toBe(400);
    expect(viaGraphql.body.errors?.[0]?.message).toMatch(/^\$input\.parameters(\[0\])+ is nested deeper than 32 levels$/);
  });
});

describe('JSON lists are bounded', () => {
  it('answers 400 to a list of 100,000 items before anything walks it, on REST and GraphQL', async () => {
    const long = `[${Array.from({ length: 100_000 }, () => '"x"').join(',')}]`;
    const rest = await rawPost(`{"location_id":"${locationId}","params":{"summary":"x"},"parameters":${long}}`, {});
    expect([rest.status, rest.body]).toEqual([400, { error: 400, message: 'parameters has more than 1000 items' }]);
    const viaGraphql = await http(t.url, 'POST', '/graphql', {
      token: org.token,
      rawBody: `{"query":${JSON.stringify(CREATE_POST)},"variables":{"a":"${accountId}","key":"long-1","input":{"locationId":"${locationId}","params":{"summary":"x","media":${long}}}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(viaGraphql.status).toBe(400);
    expect(viaGraphql.body.errors?.[0]?.message).toBe('$input.params.media has more than 1000 items');
  });
});

describe('names are trimmed before their length rules', () => {
  it('refuses a blank name with 400 and keeps the stored one', async () => {
    const rest = await http(t.url, 'PATCH', `/business-profile?account_id=${accountId}`, { token: org.token, body: { name: '   ' } });
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual({ error: 400, message: 'name must not be empty' });
    const viaGraphql = await graphql(t.url, `mutation ($id: ID) { updateAccount(where: { id: $id }, input: { name: "  " }) { name } }`, {
      token: org.token,
      variables: { id: accountId },
    });
    expect(viaGraphql.body.errors?.[0]).toMatchObject({ message: 'name must not be empty', extensions: { code: 'BAD_USER_INPUT' } });
    const stored = await http(t.url, 'GET', `/business-profile?account_id=${accountId}`, { token: org.token });
    expect(stored.body.payload.name).toBe('Account 1');
  });

  it('counts the length after trimming: 200 characters inside spaces are accepted and stored trimmed', async () => {
    const name = 'n'.repeat(200);
    const answer = await http(t.url, 'PATCH', `/business-profile?account_id=${accountId}`, { token: org.token, body: { name: `   ${name}   ` } });
    expect(answer.status).toBe(200);
    expect(answer.body.payload.name).toBe(name);
    const tooLong = await http(t.url, 'PATCH', `/business-profile?account_id=${accountId}`, { token: org.token, body: { name: `${name}n` } });
    expect(tooLong.body).toEqual({ error: 400, message: 'name must be at most 200 characters' });
  });
});
