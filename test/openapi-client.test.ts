import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { http } from './support/http';
import { ROOT } from './support/process';
import { startTestStack, type TestStack } from './support/stack';

/**
 * A client generated from the running server's /openapi.json, as a front-end team would make one: openapi-typescript
 * writes the types, openapi-fetch calls the routes. The client below passes numbers and booleans where the document
 * has them; it must compile under strict TypeScript with no diagnostic (and the types must refuse text in their place),
 * then its calls must succeed against the server. It lives in a directory of its own, seeing this project's packages
 * through a node_modules link, like a separate project would.
 */

const CLIENT = `import createClient from 'openapi-fetch';
import type { components, paths } from './api';

type Post = components['schemas']['Post'];
type Location = components['schemas']['Location'];
type Client = ReturnType<typeof createClient<paths>>;

export interface Ids {
  accountId: string;
  locationId: string;
  otherLocationId: string;
}

export function clientOf(baseUrl: string, token: string): Client {
  return createClient<paths>({
    baseUrl,
    headers: { authorization: \`Bearer \${token}\` },
    // The document's lists in a query are comma-separated, each parameter sent once (style form, explode false).
    querySerializer: { array: { style: 'form', explode: false } },
  });
}

/** Each call's status, and values read through the generated types. */
export async function callRoutes(client: Client, ids: Ids) {
  const account_id = ids.accountId;

  // A boolean in the body, a header parameter.
  const created = await client.POST('/post', {
    params: { query: { account_id }, header: { 'Idempotency-Key': 'generated-client-1' } },
    body: {
      location_id: ids.locationId,
      use_location_website_url: false,
      params: { summary: 'From the generated client', topicType: 'STANDARD', languageCode: 'en' },
    },
  });
  if (!created.data) throw new Error('POST /post: ' + JSON.stringify(created.error));
  const post: Post = created.data.payload;
  const createTime: number = post.create_time;

  // Numbers and an enum in the query.
  const listed = await client.GET('/post', { params: { query: { account_id, page: 1, per_page: 20, source: 'external_api', state: 'SENDING' } } });
  if (!listed.data) throw new Error('GET /post: ' + JSON.stringify(listed.error));
  const perPage: number = listed.data.payload.per_page;
  const listedIds: string[] = listed.data.payload.posts.map((item: Post) => item.id);

  const one = await client.GET('/post/{id}', { params: { path: { id: post.id }, query: { account_id } } });
  if (!one.data) throw new Error('GET /post/{id}: ' + JSON.stringify(one.error));

  // Numbers in the body.
  const placed = await client.POST('/location', {
    params: { query: { account_id } },
    body: { name: 'Generated Client Cafe', category_id: 'gcid:cafe', country_code: 'US', address: '2 Main Street', city: 'Springfield', postal: '12345', latitude: 40.7128, longitude: -74.006 },
  });
  if (!placed.data) throw new Error('POST /location: ' + JSON.stringify(placed.error));
  const newLocationId: string = placed.data.payload.location_id;

  // Numbers and a list in the query.
  const locations = await client.GET('/location', {
    params: { query: { account_id, page: 1, per_page: 250, skip: 0, include_fields: ['name', 'connected'] } },
  });
  if (!locations.data) throw new Error('GET /location: ' + JSON.stringify(locations.error));
  const found: number = locations.data.found;
  const listedLocations: Location[] = locations.data.data;
  const connected: (boolean | undefined)[] = listedLocations.map((location) => location.connected);

  // A boolean in the query.
  const updated = await client.PATCH('/location/update', {
    params: { query: { account_id, location_id: ids.otherLocationId, service_items_combination: true } },
    body: { description: 'Updated by the generated client' },
  });
  if (!updated.data) throw new Error('PATCH /location/update: ' + JSON.stringify(updated.error));
  const updateId: string = updated.data.payload.id;

  // Numbers and an enum in the query, again.
  const updates = await client.GET('/location/updates', { params: { query: { account_id, id: updateId, page: 1, per_page: 5 } } });
  if (!updates.data) throw new Error('GET /location/updates: ' + JSON.stringify(updates.error));

  return {
    statuses: {
      createPost: created.response.status,
      listPosts: listed.response.status,
      getPost: one.response.status,
      createLocation: placed.response.status,
      listLocations: locations.response.status,
      updateLocation: updated.response.status,
      listLocationUpdates: updates.response.status,
    },
    postId: post.id,
    createTime,
    perPage,
    listedIds,
    newLocationId,
    found,
    locationKeys: listedLocations.map((location) => Object.keys(location).sort()),
    connected,
    updateId,
    updateStatuses: updates.data.payload.updates.map((update) => update.status),
  };
}

/** Never called: what the generated types must refuse (each line is a compile error, or the directive itself is one). */
export function refusedByTheTypes(client: Client, account_id: string): void {
  // @ts-expect-error per_page is a number, not its text
  void client.GET('/post', { params: { query: { account_id, per_page: '20' } } });
  // @ts-expect-error source is app or external_api
  void client.GET('/post', { params: { query: { account_id, source: 'APP' } } });
  // @ts-expect-error service_items_combination is a boolean
  void client.PATCH('/location/update', { params: { query: { account_id, location_id: 'l', service_items_combination: 'true' } }, body: {} });
  // @ts-expect-error location_id is required in the body
  void client.POST('/post', { params: { query: { account_id } }, body: { params: {} } });
  // @ts-expect-error latitude is a number
  void client.POST('/location', { params: { query: { account_id } }, body: { name: 'n', category_id: 'c', country_code: 'US', latitude: '40.7' } });
  // @ts-expect-error include_fields names fields of the location record
  void client.GET('/location', { params: { query: { account_id, include_fields: ['no_such_field'] } } });
}
`;

/**
 * openapi-typescript's Node API (`openapiTS`, `astToString`) on the saved document. It runs in a Node process of its
 * own: the package loads ES modules (parse-json), which Jest's CommonJS runtime on Node 20 cannot require.
 */
const GENERATE = `import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';

const document = JSON.parse(readFileSync(new URL('./openapi.json', import.meta.url), 'utf8'));
writeFileSync(new URL('./api.d.ts', import.meta.url), astToString(await openapiTS(document, { silent: true })));
`;

let t: TestStack;
let org: OrganizationFixture;
let dir: string;

beforeAll(async () => {
  t = await startTestStack();
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 2, connected: true });
  dir = mkdtempSync(path.join(tmpdir(), 'lg-openapi-client-'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const document = await http(t.url, 'GET', '/openapi.json');
  expect(document.status).toBe(200);
  writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(document.body));
  writeFileSync(path.join(dir, 'generate.mjs'), GENERATE);
  await promisify(execFile)(process.execPath, [path.join(dir, 'generate.mjs')], { cwd: dir, timeout: 60_000 });
  writeFileSync(path.join(dir, 'client.ts'), CLIENT);
});
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await t?.close();
});

/** The client's diagnostics under strict TypeScript, as `file:line message` lines. */
function diagnostics(): string[] {
  const program = ts.createProgram([path.join(dir, 'client.ts')], {
    strict: true,
    noEmit: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: [],
    esModuleInterop: true,
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start) : undefined;
    const file = diagnostic.file ? path.relative(dir, diagnostic.file.fileName) : '';
    return `${file}${where ? `:${where.line + 1}` : ''} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  });
}

describe('a client generated from /openapi.json with openapi-typescript and openapi-fetch', () => {
  it('compiles with no diagnostic: numbers, booleans, enums and lists where the document has them, their text refused', () => {
    expect(diagnostics()).toEqual([]);
    // The check sees the refusals: without the directives, each is an error.
    const withoutDirectives = CLIENT.replaceAll('// @ts-expect-error', '// was expected:');
    writeFileSync(path.join(dir, 'client.ts'), withoutDirectives);
    try {
      const errors = diagnostics();
      expect(errors.every((line) => line.startsWith('client.ts:'))).toBe(true);
      // One line of refusedByTheTypes each (a line may have more than one error).
      expect(new Set(errors.map((line) => line.split(' ')[0])).size).toBe(6);
    } finally {
      writeFileSync(path.join(dir, 'client.ts'), CLIENT);
    }
  });

  it('calls seven routes with them, each answering its 2xx with the records the types describe', async () => {
    const compiled = ts.transpileModule(CLIENT, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    });
    writeFileSync(path.join(dir, 'client.js'), compiled.outputText);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module is written by this test, at run time
    const client = require(path.join(dir, 'client.js')) as {
      clientOf(baseUrl: string, token: string): unknown;
      callRoutes(client: unknown, ids: { accountId: string; locationId: string; otherLocationId: string }): Promise<any>;
    };
    const account = org.accounts[0]!;
    const result = await client.callRoutes(client.clientOf(t.url, org.token), {
      accountId: account.account.id,
      locationId: account.locations[0]!.id,
      otherLocationId: account.locations[1]!.id,
    });
    expect(result.statuses).toEqual({
      createPost: 202,
      listPosts: 200,
      getPost: 200,
      createLocation: 200,
      listLocations: 200,
      updateLocation: 200,
      listLocationUpdates: 200,
    });
    expect(result.perPage).toBe(20);
    expect(result.listedIds).toContain(result.postId);
    expect(typeof result.createTime).toBe('number');
    // include_fields=name,connected reached the server as one comma-separated parameter.
    expect(result.found).toBe(3);
    expect(result.locationKeys).toEqual([['connected', 'id', 'name'], ['connected', 'id', 'name'], ['connected', 'id', 'name']]);
    expect(result.connected.every((value: unknown) => typeof value === 'boolean')).toBe(true);
    expect(result.updateStatuses).toHaveLength(1);
    expect(['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED']).toContain(result.updateStatuses[0]);

    // What the client sent is what the server keeps: the post, the location with its coordinates.
    const stored = await http(t.url, 'GET', `/location?account_id=${account.account.id}&include_fields=latitude,longitude`, { token: org.token });
    expect(stored.body.data).toContainEqual({ id: result.newLocationId, latitude: 40.7128, longitude: -74.006 });
  });
});
