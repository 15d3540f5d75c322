import { Writable } from 'node:stream';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

/**
 * What an answer may reveal, per mode: never SQL text or a stack (the log has them, in bounded lines); in
 * production, no schema for callers without a token and no field suggestions.
 */

/** A log destination whose lines the test reads. */
function captureLines(): { destination: Writable; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { destination, lines };
}

function wsResult(url: string, token: string, query: string): Promise<any> {
  const client = createClient({ url: `${url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0 });
  return new Promise((resolve, reject) => {
    let result: unknown;
    client.subscribe({ query }, { next: (value) => (result = value), error: reject, complete: () => resolve(result) });
  }).finally(() => client.dispose());
}

describe('in development', () => {
  let t: TestStack;
  let org: OrganizationFixture;
  const log = captureLines();

  beforeAll(async () => {
    t = await startTestStack({ NODE_ENV: 'development' }, { log: { destination: log.destination } });
    org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1 });
  });
  afterAll(() => t.close());

  it('a database failure answers the masked error without SQL or details on every transport; the log has the cause, bounded', async () => {
    const accountId = org.accounts[0]!.account.id;
    const sql = t.em().getConnection();
    await sql.execute('alter table location rename to location_hidden');
    try {
      const query = `{ locations(accountId: "${accountId}") { totalCount } }`;
      const overHttp = await graphql(t.url, query, { token: org.token });
      const overWs = await wsResult(t.url, org.token, query);
      const rest = await http(t.url, 'GET', '/organization', { token: org.token });
      expect(overHttp.body.errors).toEqual([
        { message: 'Internal server error', locations: expect.any(Array), path: ['locations'], extensions: { code: 'INTERNAL_SERVER_ERROR' } },
      ]);
      expect(overWs.errors).toEqual(overHttp.body.errors);
      expect(rest.status).toBe(500);
      expect(rest.body).toEqual({ error: 500, message: 'Internal server error' });
      const answers = JSON.stringify([overHttp.body, overWs, rest.body]);
      for (const leak of ['select', 'location_hidden', 'does not exist', 'detail', 'stack', '.ts:', '.js:']) expect(answers).not.toContain(leak);
    } finally {
      await sql.execute('alter table location_hidden rename to location');
    }
    const logged = log.lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: Record<string, unknown> });
    const failures = logged.filter((line) => line.level === 50 && line.err);
    expect(failures.length).toBeGreaterThanOrEqual(3);
    for (const failure of failures) {
      // Type, message, code and stack: the cause is in the log...
      expect(Object.keys(failure.err!).sort()).toEqual(expect.arrayContaining(['message', 'stack', 'type']));
      expect(String(failure.err!.message)).toMatch(/location/);
      // ...and nothing else of the driver's error (its client, socket, connection settings).
      for (const key of Object.keys(failure.err!)) expect(['type', 'message', 'code', 'stack', 'cause']).toContain(key);
    }
    for (const line of log.lines) expect(Buffer.byteLength(line)).toBeLessThan(16 * 1024);
  });

  it('keeps field suggestions, which help a developer', async () => {
    const answer = await graphql(t.url, '{ organizaton { id } }', { token: org.token });
    expect(answer.body.errors?.[0]?.message).toMatch(/Did you mean "organization"\?/);
  });
});

describe('in production', () => {
  let t: TestStack;
  let org: OrganizationFixture;

  beforeAll(async () => {
    t = await startTestStack({ NODE_ENV: 'production', TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') });
    org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1 });
  });
  afterAll(() => t.close());

  const INTROSPECTION = '{ __schema { types { name } } }';

  it('answers introspection without a token with 401, and with a token as usual', async () => {
    for (const query of [INTROSPECTION, '{ __type(name: "Post") { fields { name } } }', 'query { ...F } fragment F on Query { __schema { queryType { name } } }']) {
      const anonymous = await graphql(t.url, query);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ errors: [{ message: 'Introspection needs a bearer token', extensions: { code: 'UNAUTHENTICATED' } }] });
      const get = await http(t.url, 'GET', `/graphql?query=${encodeURIComponent(query)}`, { headers: { accept: 'application/json' } });
      expect(get.status).toBe(401);
    }
    const withToken = await graphql(t.url, INTROSPECTION, { token: org.token });
    expect(withToken.status).toBe(200);
    expect(withToken.body.data.__schema.types.length).toBeGreaterThan(20);
    // __typename is not the schema.
    expect((await graphql(t.url, '{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('names no schema details in errors: no "Did you mean" over HTTP, graphql-ws or REST', async () => {
    const typo = await graphql(t.url, '{ organizaton { id } }', { token: org.token });
    expect(typo.body.errors?.[0]?.message).toBe('Cannot query field "organizaton" on type "Query".');
    const enumTypo = await graphql(t.url, 'query ($s: PostState) { postsPage(accountId: "x", state: $s) { found } }', {
      token: org.token,
      variables: { s: 'LIVF' },
    });
    expect(enumTypo.body.errors?.[0]?.message).not.toMatch(/Did you mean/);
    const overWs = await wsResult(t.url, org.token, '{ organizaton { id } }').catch((errors: unknown) => ({ errors }));
    expect(JSON.stringify(overWs)).not.toMatch(/Did you mean/);
    const rest = await http(t.url, 'GET', `/post?account_id=${org.accounts[0]!.account.id}&state=LIVF`, { token: org.token });
    expect(rest.status).toBe(400);
    expect(rest.body.message).not.toMatch(/Did you mean/);
  });
});
