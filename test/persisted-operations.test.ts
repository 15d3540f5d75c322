import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { ROOT } from './support/process';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Persisted operations (docs/frontend.md): automatic persisted queries as Apollo clients use them (a miss answers
 * PERSISTED_QUERY_NOT_FOUND, which makes them send the full text), and the trusted-documents mode a production sets
 * with TRUSTED_DOCUMENTS: only the operations of a manifest written by GraphQL Code Generator's client preset run.
 */

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const ORGANIZATION = 'query Organization { organization { id name } }';

/** POST /graphql with any body (the helper sends a query; persisted requests may send none). */
const postGraphql = (t: TestStack, token: string, body: Record<string, unknown>) => http(t.url, 'POST', '/graphql', { token, body });

describe('automatic persisted queries', () => {
  let t: TestStack;
  let org: OrganizationFixture;
  beforeAll(async () => {
    t = await startTestStack();
    org = await createOrganizationFixture(t.em(), { accounts: 1 });
  });
  afterAll(() => t?.close());

  it('a hash the server has not seen answers PERSISTED_QUERY_NOT_FOUND; sent with its text once, the hash alone runs it, over POST and GET', async () => {
    const query = `query Persisted${Date.now()} { organization { id } }`;
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    const miss = await postGraphql(t, org.token, { extensions: { persistedQuery } });
    // Apollo's status for it (200): APQ clients read the code.
    expect(miss.status).toBe(200);
    expect(miss.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } })]);
    expect(miss.body.data).toBeUndefined();

    const registered = await postGraphql(t, org.token, { query, extensions: { persistedQuery } });
    expect(registered.body).toEqual({ data: { organization: { id: org.organization.id } } });
    const byHash = await postGraphql(t, org.token, { extensions: { persistedQuery } });
    expect(byHash.body).toEqual({ data: { organization: { id: org.organization.id } } });
    const overGet = await http(t.url, 'GET', `/graphql?extensions=${encodeURIComponent(JSON.stringify({ persistedQuery }))}`, { token: org.token });
    expect(overGet.status).toBe(200);
    expect(overGet.body).toEqual({ data: { organization: { id: org.organization.id } } });
  });

  it('a text whose hash is not the one sent is refused, and nothing is kept under that hash', async () => {
    const persistedQuery = { version: 1, sha256Hash: sha256('query Other { organization { id } }') };
    const mismatch = await postGraphql(t, org.token, { query: ORGANIZATION, extensions: { persistedQuery } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const after = await postGraphql(t, org.token, { extensions: { persistedQuery } });
    expect(after.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});

describe('trusted documents (TRUSTED_DOCUMENTS: a manifest of GraphQL Code Generator’s client preset)', () => {
  let t: TestStack;
  let org: OrganizationFixture;
  let dir: string;
  let manifest: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'lg-trusted-'));
    // A front-end's operations, as its team writes them, generated with the codegen.ts docs/frontend.md gives.
    writeFileSync(
      path.join(dir, 'operations.graphql'),
      `query Organization { organization { id name } }

query Accounts { organization { id } accounts { id name createdAt } }
`,
    );
    copyFileSync(path.join(ROOT, 'docs/examples/codegen.ts'), path.join(dir, 'codegen.ts'));
    await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/@graphql-codegen/cli/esm/bin.js'), '--config', path.join(dir, 'codegen.ts'), '--silent'], {
      cwd: ROOT,
      env: { ...process.env, LISTINGS_SCHEMA: path.join(ROOT, 'schema.graphql'), LISTINGS_DOCUMENTS: path.join(dir, 'operations.graphql'), LISTINGS_OUTPUT: `${path.join(dir, 'gql')}/` },
    });
    // The scalars are typed as they travel: a front-end reads createTime as a string, not unknown.
    expect(readFileSync(path.join(dir, 'gql', 'graphql.ts'), 'utf8')).toContain('accounts: Array<{ id: string, name: string, createdAt: string }>');
    const manifestFile = path.join(dir, 'gql', 'persisted-documents.json');
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, string>;
    expect(Object.keys(manifest)).toHaveLength(2);
    t = await startTestStack({ TRUSTED_DOCUMENTS: manifestFile });
    org = await createOrganizationFixture(t.em(), { accounts: 1 });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The manifest's key of an operation: `sha256:<hex>`, as the client preset's documentId. */
  const idOf = (name: string) => Object.entries(manifest).find(([, document]) => document.includes(`query ${name}`))![0];
  const hexOf = (name: string) => idOf(name).replace(/^sha256:/, '');

  it('runs a listed operation by its documentId, by its hash as an automatic persisted query, and as its text however it is spaced', async () => {
    const expected = { data: { organization: { id: org.organization.id, name: org.organization.name } } };
    expect((await postGraphql(t, org.token, { documentId: idOf('Organization') })).body).toEqual(expected);
    expect(idOf('Organization')).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await postGraphql(t, org.token, { documentId: hexOf('Organization') })).body).toEqual(expected);
    // An APQ client's hash is the document's sha256, which the manifest's key is.
    expect(hexOf('Organization')).toBe(sha256(manifest[idOf('Organization')]!));
    expect((await postGraphql(t, org.token, { extensions: { persistedQuery: { version: 1, sha256Hash: hexOf('Organization') } } })).body).toEqual(expected);
    expect((await graphql(t.url, 'query Organization {\n  organization {\n    id\n    name\n  }\n}\n# a comment', { token: org.token })).body).toEqual(expected);
    const overGet = await http(t.url, 'GET', `/graphql?documentId=${idOf('Accounts')}`, { token: org.token });
    expect(overGet.status).toBe(200);
    expect(overGet.body.data.accounts).toHaveLength(1);
  });

  it('refuses any other text (PERSISTED_QUERY_NOT_IN_LIST) and an unknown id (PERSISTED_QUERY_NOT_FOUND), before anything runs', async () => {
    const other = await graphql(t.url, '{ organization { id accounts { id } } }', { token: org.token });
    expect(other.status).toBe(400);
    expect(other.body).toEqual({ errors: [{ message: expect.stringContaining('trusted documents only'), extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' } }] });
    // Registering a new automatic persisted query is a text not in the list too.
    const register = await postGraphql(t, org.token, { query: '{ __typename }', extensions: { persistedQuery: { version: 1, sha256Hash: sha256('{ __typename }') } } });
    expect(register.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    const unknown = await postGraphql(t, org.token, { documentId: sha256('unknown') });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    // A mutation refused by the list changes nothing: no token is made.
    const revoke = await graphql(t.url, 'mutation { createAccountToken(accountId: "${ACCOUNT}", label: "not listed") { token } }'.replace('${ACCOUNT}', org.accounts[0]!.account.id), { token: org.token });
    expect(revoke.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    const { rows } = await t.stack.runtime.database.orm.em.getConnection().execute<{ n: number }[]>(`select count(*)::int as n from api_token where label = 'not listed'`).then((r) => ({ rows: r }));
    expect(rows[0]!.n).toBe(0);
  });

  it('holds over graphql-ws and SSE too: a listed text runs, any other is refused with the same code', async () => {
    const client = createClient({ url: `${t.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${org.token}` }, retryAttempts: 0 });
    const run = (query: string) =>
      new Promise<unknown>((resolve) => {
        let result: unknown;
        client.subscribe({ query }, { next: (value) => (result = value), error: (error) => resolve({ error }), complete: () => resolve(result) });
      });
    try {
      expect(await run(manifest[idOf('Organization')]!)).toEqual({ data: { organization: { id: org.organization.id, name: org.organization.name } } });
      const refused = (await run('{ organization { id accounts { id } } }')) as { error: { extensions?: { code?: string } }[] };
      expect(refused.error).toEqual([expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' } })]);
    } finally {
      await client.dispose();
    }
    const stream = await http(t.url, 'POST', '/graphql/stream', {
      token: org.token,
      headers: { accept: 'text/event-stream' },
      body: { query: 'subscription { postUpdated { id } }' },
    });
    expect(stream.status).toBe(400);
    expect(stream.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
  });

  it('leaves the REST routes as they are: they run the service’s own operations', async () => {
    const answer = await http(t.url, 'GET', '/organization', { token: org.token });
    expect(answer.status).toBe(200);
  });
});
