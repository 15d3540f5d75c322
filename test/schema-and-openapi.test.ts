import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderSchema } from '../src/emit-schema';
import { routeTable } from '../src/rest/routes';
import { http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

describe('schema.graphql', () => {
  it('is the schema the code builds (run `npm run schema` when this fails)', async () => {
    const committed = readFileSync(path.resolve(__dirname, '../schema.graphql'), 'utf8');
    expect(committed.startsWith('# Generated')).toBe(true);
    expect(await renderSchema()).toBe(committed);
  });
});

describe('GET /openapi.json', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack();
  });
  afterAll(() => t.close());

  it('describes every route of the table, with its parameters and documented error bodies, without a token', async () => {
    const res = await http(t.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const operations = Object.entries(res.body.paths as Record<string, Record<string, unknown>>).flatMap(([p, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(operations.sort()).toEqual(routeTable.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`).sort());

    const patch = res.body.paths['/business-profile'].patch;
    expect(patch.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['query:account_id', 'query:reference_id']);
    expect(Object.keys(patch.requestBody.content['application/json'].schema.properties)).toEqual(['name', 'reference_id']);
    expect(patch.responses['401'].content['application/json'].schema.example).toEqual({ error: 401, message: 'message' });
    expect(patch.responses['403']).toBeDefined();
    const organization = res.body.paths['/organization'].get;
    expect(organization.responses['404'].content['application/json'].schema.example).toEqual({
      statusCode: 404,
      message: 'message',
      error: 'Not Found',
    });
  });

  it('lists the documented errors of POST /post, and writes the post record as the document does', async () => {
    const res = await http(t.url, 'GET', '/openapi.json');
    const create = res.body.paths['/post'].post;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['202', '400', '401', '403', '404', '422', '429']));
    expect(create.responses['429'].description).toBe('RATE_LIMIT_EXCEEDED, QUOTA_REACHED');
    expect(create.responses['429'].content['application/json'].schema.properties.msg).toEqual({ enum: ['RATE_LIMIT_EXCEEDED', 'QUOTA_REACHED'] });
    const post = create.responses['202'].content['application/json'].schema.properties.payload;
    expect(post.additionalProperties).toBe(false);
    expect(post.properties).toMatchObject({
      post_id: { type: ['string', 'null'] },
      account: { type: 'string' },
      source: { enum: ['app', 'external_api'] },
      create_time: { type: 'integer' },
      update_time: { type: ['integer', 'null'] },
      last_error: { type: ['object', 'null'], properties: { at: { type: 'integer' } } },
    });
    // The provider's body: its own names, unset fields absent rather than null.
    expect(post.properties.params.properties.callToAction.properties).toEqual({
      actionType: { enum: ['BOOK', 'ORDER', 'SHOP', 'LEARN_MORE', 'SIGN_UP', 'CALL'] },
      url: { type: 'string' },
    });
    expect(post.properties.params.required).toEqual([]);
  });

  it('answers unknown paths with the generic 404 body', async () => {
    const res = await http(t.url, 'GET', '/no-such-path');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 404, message: 'No route GET /no-such-path' });
  });
});
