import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Page } from 'playwright-core';
import { renderSchema } from '../src/emit-schema';
import { routeTable } from '../src/rest/routes';
import { launchChromium } from './support/chromium';
import { createOrganizationFixture, createOrganizationToken, type OrganizationFixture } from './support/fixtures';
import { http, type JsonResponse } from './support/http';
import { checkAgainstOpenApi } from './support/openapi-check';
import { startTestStack, type TestStack } from './support/stack';

describe('schema.graphql', () => {
  it('is the schema the code builds (run `npm run schema` when this fails)', async () => {
    const committed = readFileSync(path.resolve(__dirname, '../schema.graphql'), 'utf8');
    expect(committed.startsWith('# Generated')).toBe(true);
    expect(await renderSchema()).toBe(committed);
  });
});

/** What a browser sends when the address bar opens a page. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
/** The business-profile read limit of this file's server: small, so a 429 is two requests away. */
const PROFILE_READS_PER_MINUTE = 2;

let t: TestStack;
let org: OrganizationFixture;
let document: any;

beforeAll(async () => {
  t = await startTestStack({ BUSINESS_PROFILE_READ_RATE_LIMIT_PER_MINUTE: String(PROFILE_READS_PER_MINUTE) });
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 2, connected: true });
  const res = await http(t.url, 'GET', '/openapi.json');
  expect(res.status).toBe(200);
  document = res.body;
});
afterAll(() => t?.close());

const accountId = () => org.accounts[0]!.account.id;
const operation = (method: string, template: string) => document.paths[template][method.toLowerCase()];
const parameter = (method: string, template: string, name: string) =>
  operation(method, template).parameters.find((candidate: { name?: string }) => candidate.name === name);
const bodySchema = (method: string, template: string) => operation(method, template).requestBody.content['application/json'].schema;
const successSchema = (method: string, template: string, status = '200') => operation(method, template).responses[status].content['application/json'].schema;
/** Follows a `$ref` of the document (`#/components/schemas/Post`). */
const resolve = (schema: any): any => (schema?.$ref ? schema.$ref.slice(2).split('/').reduce((node: any, key: string) => node[key], document) : schema);
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** Every operation of the document. */
const operations = (): any[] => Object.values<Record<string, any>>(document.paths).flatMap((methods) => Object.values(methods));

describe('GET /openapi.json', () => {
  it('is valid OpenAPI 3.1 by Redocly’s recommended rules, and every schema in it compiles as JSON Schema 2020-12', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: `${t.url}/openapi.json`, config });
    const found = problems.map((problem) => `${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer ?? ''}: ${problem.message}`);
    // What the rules ask that this document cannot give: a licence (the product has none to state), a 2xx of the
    // callbacks (the providers' redirects answer 302), a 4xx of the caller's redirect_url (the caller's page).
    const accepted = [
      /^warn info-license #\/info:/,
      /^warn operation-2xx-response #\/paths\/~1oauth~1(alpha|beta)~1callback\/get\/responses:/,
      /^warn operation-4xx-response #\/paths\/~1oauth~1(alpha|beta)~1generate-url\/post\/callbacks\/consentOutcome\//,
    ];
    expect(found.filter((problem) => !accepted.some((pattern) => pattern.test(problem)))).toEqual([]);
    // The struct rule runs: a broken document is refused (the check above is not vacuous).
    const broken = structuredClone(document);
    broken.paths['/post'].get.parameters[0].in = 'body';
    const refusals = await lintFromString({ source: JSON.stringify(broken), absoluteRef: `${t.url}/openapi.json`, config });
    expect(refusals.some((problem) => problem.ruleId === 'struct' && problem.severity === 'error')).toBe(true);

    const ajv = new Ajv2020({ strict: true, strictTypes: false });
    ajv.addKeyword('example');
    addFormats(ajv);
    for (const [name, schema] of Object.entries(document.components.schemas)) ajv.addSchema(schema as object, `#/components/schemas/${name}`);
    const schemas: unknown[] = [
      ...Object.values(document.components.headers).map((header: any) => header.schema),
      document.components.parameters.RequestId.schema,
    ];
    for (const op of operations()) {
      for (const p of op.parameters) if (p.schema) schemas.push(p.schema);
      if (op.requestBody) schemas.push(op.requestBody.content['application/json'].schema);
      for (const response of Object.values<any>(op.responses)) if (response.content?.['application/json']) schemas.push(response.content['application/json'].schema);
    }
    expect(schemas.length).toBeGreaterThan(300);
    for (const schema of schemas) expect(() => ajv.compile(schema as object)).not.toThrow();
  });

  it('describes every route of the table and the two OAuth callbacks, each under a unique operationId, without a token', async () => {
    const operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([p, methods]) =>
      Object.entries(methods).map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, operationId: op.operationId as string })),
    );
    expect(operations.map((op) => op.key).sort()).toEqual(
      [...routeTable.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`), 'GET /oauth/alpha/callback', 'GET /oauth/beta/callback'].sort(),
    );
    expect(new Set(operations.map((op) => op.operationId)).size).toBe(operations.length);
    expect(operations.map((op) => op.operationId)).toEqual(expect.arrayContaining(['listPosts', 'createPost', 'getPost', 'listLocations', 'updateLocation']));
    // Without PUBLIC_URL, the origin the document was read from.
    expect(document.servers).toEqual([{ url: '/', description: 'the origin this document was read from' }]);
    expect(document.security).toEqual([{ bearer: [] }]);
  });

  it('types parameters by the variables of the route’s operation: integers with their defaults, booleans, enums in their REST values', () => {
    expect(parameter('GET', '/post', 'page').schema).toEqual({ type: 'integer', default: 1 });
    expect(parameter('GET', '/post', 'per_page').schema).toEqual({ type: 'integer', default: 20 });
    expect(parameter('GET', '/post', 'state').schema).toEqual(ref('PostState'));
    expect(parameter('GET', '/post', 'source').schema).toEqual(ref('PostSource'));
    expect(document.components.schemas.PostState.enum).toEqual(['SENDING', 'SCHEDULED', 'LIVE', 'PROCESSING', 'REJECTED', 'ERROR', 'DELETED']);
    // The records' spelling: PostSource.APP is `app`.
    expect(document.components.schemas.PostSource.enum).toEqual(['app', 'external_api']);
    expect(parameter('GET', '/post', 'account_id')).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
    expect(parameter('GET', '/post/{id}', 'id')).toMatchObject({ in: 'path', required: true, schema: { type: 'string' } });

    expect(parameter('GET', '/location', 'per_page').schema).toEqual({ type: 'integer', default: 10 });
    expect(parameter('GET', '/location', 'skip').schema).toMatchObject({ type: 'integer' });
    expect(parameter('GET', '/location', 'include_fields')).toMatchObject({
      style: 'form',
      explode: false,
      schema: { type: 'array', items: { type: 'string', enum: expect.arrayContaining(['id', 'name', 'connected', 'created_at']) } },
    });
    expect(parameter('PATCH', '/location/update', 'service_items_combination').schema).toEqual({ type: 'boolean' });
    expect(parameter('PATCH', '/location/update', 'location_id')).toMatchObject({ required: true, schema: { type: 'string' } });
    expect(parameter('GET', '/location/updates', 'status').schema).toEqual(ref('LocationUpdateStatus'));
    expect(parameter('GET', '/location/updates', 'per_page').schema).toEqual({ type: 'integer', default: 20 });
    for (const [method, template] of [['POST', '/connect/account'], ['DELETE', '/disconnect/account'], ['POST', '/reconnect/account']]) {
      // The argument's default (the document: "must be true").
      expect(parameter(method!, template!, 'external_api').schema).toEqual({ type: 'boolean', default: true });
      expect(parameter(method!, template!, 'alphaId').required).toBe(true);
    }
    expect(parameter('GET', '/oauth/alpha/accounts', 'first').schema).toMatchObject({ type: 'integer' });
    expect(parameter('POST', '/post', 'Idempotency-Key')).toMatchObject({ in: 'header', required: false, schema: { type: 'string' } });

    // No parameter of the table is left untyped: each has a type or names a component.
    const untyped = routeTable.flatMap((route) => {
      const template = route.path.replace(/:(\w+)/g, '{$1}');
      return operation(route.method, template)
        .parameters.filter((p: any) => p.name && !p.schema?.type && !p.schema?.$ref)
        .map((p: any) => `${route.method} ${template} ${p.name}`);
    });
    expect(untyped).toEqual([]);
  });

  it('reads parameters as the document types them: text that is no integer refused, an enum refused naming the values the document lists', async () => {
    const list = (query: string) => http(t.url, 'GET', `/post?account_id=${accountId()}${query}`, { token: org.token });
    expect((await list('&page=1&per_page=5&source=external_api&state=LIVE')).status).toBe(200);
    expect(await list('&per_page=twenty')).toMatchObject({ status: 400, body: { error: 400, message: 'per_page must be an integer' } });
    // A value the document does not list is refused, naming the values it does.
    expect(await list('&source=dashboard')).toMatchObject({ status: 400, body: { message: 'source must be one of app, external_api' } });
    const update = await http(t.url, 'PATCH', `/location/update?account_id=${accountId()}&location_id=${org.accounts[0]!.locations[0]!.id}&service_items_combination=maybe`, {
      token: org.token,
      body: { description: 'x' },
    });
    expect(update).toMatchObject({ status: 400, body: { success: false, msg: 'service_items_combination must be true or false' } });
  });

  it('types request bodies: each field by its input type, the required ones listed, nested inputs as shared components', () => {
    const create = bodySchema('POST', '/post');
    expect(create.required).toEqual(['location_id', 'params']);
    expect(create.properties.location_id).toEqual({ type: 'string' });
    expect(create.properties.use_location_website_url).toMatchObject({ type: ['boolean', 'null'] });
    // params is the provider's body: its own names, its enums by name.
    expect(create.properties.params).toEqual(ref('PostParamsInput'));
    const params = document.components.schemas.PostParamsInput;
    expect(params).toMatchObject({ type: 'object', additionalProperties: false });
    expect(params.properties.topicType).toMatchObject({ anyOf: [ref('TopicType'), { type: 'null' }], default: 'STANDARD' });
    expect(Object.keys(params.properties)).toEqual(expect.arrayContaining(['languageCode', 'summary', 'callToAction', 'scheduledTime']));

    const location = bodySchema('POST', '/location');
    expect(location.required).toEqual(['name', 'category_id', 'country_code']);
    expect(location.properties.latitude).toEqual({ type: ['number', 'null'] });
    expect(location.properties.placeId).toBeDefined();
    expect(location.properties.regular_hours).toMatchObject({ type: ['array', 'null'], items: ref('HoursPeriodInput') });
    expect(document.components.schemas.HoursPeriodInput).toMatchObject({
      additionalProperties: false,
      properties: { open_day: expect.anything(), open_time: expect.anything(), close_day: expect.anything(), close_time: expect.anything() },
    });
    // The same input, written the same way, for the update: one component.
    expect(bodySchema('PATCH', '/location/update').properties.regular_hours.items).toEqual(ref('HoursPeriodInput'));
    // A description naming another field names it as REST does.
    expect(bodySchema('PATCH', '/location/update').properties.phone_number.description).toContain('additional_phone_numbers');

    const brand = bodySchema('PATCH', '/beta/brands/{segment_id}');
    expect(brand.properties.use_location_name).toEqual({ type: ['boolean', 'null'] });
    expect(brand.properties.send_action_links).toEqual({ type: ['boolean', 'null'] });
    expect(brand.properties.additional_categories).toMatchObject({ type: ['array', 'null'], items: { type: 'string' } });
    expect(brand.properties.ownership_type).toEqual({ anyOf: [ref('OwnershipType'), { type: 'null' }] });

    const answer = bodySchema('POST', '/review/answer');
    expect(answer.required).toEqual(['review_id', 'answer']);
    expect(bodySchema('POST', '/oauth/alpha/generate-url').required).toEqual(['redirect_url']);
    expect(bodySchema('POST', '/citations/disable')).toMatchObject({ required: ['location_id'], properties: { location_id: { type: 'string' } } });
    expect(bodySchema('PATCH', '/business-profile').properties).toEqual({
      name: { type: ['string', 'null'], description: expect.any(String) },
      reference_id: { type: ['string', 'null'], description: expect.any(String) },
    });
  });

  it('names the records and enums routes share in components.schemas, each route referring to them', () => {
    const schemas = document.components.schemas;
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining(['Post', 'Location', 'HoursPeriod', 'BetaBrand', 'BusinessProfile', 'Organization', 'OrganizationAccount', 'LocationUpdateJob']),
    );
    expect(successSchema('POST', '/post', '202').properties.payload).toEqual(ref('Post'));
    expect(successSchema('GET', '/post/{id}').properties.payload).toEqual(ref('Post'));
    expect(successSchema('GET', '/post').properties.payload.properties.posts).toEqual({ type: 'array', items: ref('Post') });
    expect(successSchema('GET', '/location').properties.data).toMatchObject({ type: 'array', items: ref('Location') });
    expect(successSchema('GET', '/beta/brands/{segment_id}').properties.payload).toEqual(ref('BetaBrand'));
    expect(successSchema('PATCH', '/beta/brands/{segment_id}').properties.payload).toEqual(ref('BetaBrand'));
    expect(successSchema('GET', '/business-profile').properties.payload).toEqual({ oneOf: [ref('BusinessProfile'), { type: 'array', items: ref('BusinessProfile') }] });
    expect(successSchema('PATCH', '/business-profile').properties.payload).toEqual(ref('BusinessProfile'));
    expect(successSchema('GET', '/location/updates').properties.payload.properties.updates.items).toEqual(ref('LocationUpdateJob'));
    // A record inside another is one too: the location's hours periods, in both lists that hold them.
    expect(schemas.Location.properties.regular_hours.items).toEqual(ref('HoursPeriod'));
    expect(schemas.Location.properties.more_hours.items.properties.periods.items).toEqual(ref('HoursPeriod'));
    // A field selection keeps only what it names: the listed location needs only its id.
    expect(schemas.Location.required).toEqual(['id']);
    expect(schemas.Post.properties.state).toMatchObject(ref('PostState'));
    expect(schemas.LocationUpdateJob.properties.status).toMatchObject(ref('LocationUpdateStatus'));
  });

  it('lists the documented errors of POST /post, and writes the post record as the document does', () => {
    const create = operation('POST', '/post');
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['202', '400', '401', '403', '404', '422', '429']));
    expect(create.responses['429'].description).toBe('RATE_LIMIT_EXCEEDED, QUOTA_REACHED');
    expect(create.responses['429'].content['application/json'].schema.properties.msg).toEqual({ enum: ['RATE_LIMIT_EXCEEDED', 'QUOTA_REACHED'] });
    const post = resolve(create.responses['202'].content['application/json'].schema.properties.payload);
    expect(post.additionalProperties).toBe(false);
    expect(post.properties).toMatchObject({
      post_id: { type: ['string', 'null'] },
      account: { type: 'string' },
      source: ref('PostSource'),
      create_time: { type: 'integer' },
      update_time: { type: ['integer', 'null'] },
      last_error: { type: ['object', 'null'], properties: { at: { type: 'integer' } } },
    });
    // The provider's body: its own names, unset fields absent rather than null.
    expect(post.properties.params.properties.callToAction.properties).toEqual({ actionType: ref('ActionType'), url: { type: 'string' } });
    expect(document.components.schemas.ActionType.enum).toEqual(['BOOK', 'ORDER', 'SHOP', 'LEARN_MORE', 'SIGN_UP', 'CALL']);
    expect(post.properties.params.required).toEqual([]);

    const patch = operation('PATCH', '/business-profile');
    expect(patch.parameters.map((p: { name?: string; in?: string; $ref?: string }) => p.$ref ?? `${p.in}:${p.name}`)).toEqual([
      'query:account_id',
      'query:reference_id',
      '#/components/parameters/RequestId',
    ]);
    expect(patch.responses['401'].content['application/json'].schema.example).toEqual({ error: 401, message: 'message' });
    expect(patch.responses['403']).toBeDefined();
    expect(operation('GET', '/organization').responses['404'].content['application/json'].schema.example).toEqual({
      statusCode: 404,
      message: 'message',
      error: 'Not Found',
    });
  });

  it('describes the headers of every answer, and the answers carry only headers their status describes', async () => {
    const headerNames = (response: any) => Object.keys(response.headers ?? {}).map((name) => name.toLowerCase());
    for (const op of operations()) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        expect({ op: op.operationId, status, xRequestId: headerNames(response).includes('x-request-id') }).toEqual({ op: op.operationId, status, xRequestId: true });
        if (status === '429' || status === '503') expect(headerNames(response)).toContain('retry-after');
      }
    }
    expect(headerNames(operation('POST', '/post').responses['202'])).toEqual(['x-request-id', 'ratelimit-policy', 'ratelimit', 'idempotent-replayed']);
    expect(headerNames(operation('GET', '/post').responses['200'])).toEqual(['x-request-id']);
    expect(document.components.headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 0 });
    expect(document.components.parameters.RequestId).toMatchObject({ name: 'X-Request-Id', in: 'header', required: false });

    const watched = ['x-request-id', 'ratelimit-policy', 'ratelimit', 'retry-after', 'idempotent-replayed'];
    /** The watched headers of a real answer, against what the document says of its status (names lower-cased). */
    const check = (method: string, template: string, res: JsonResponse) => {
      const documented = operation(method, template).responses[String(res.status)];
      const names = Object.keys(documented.headers ?? {}).map((name) => name.toLowerCase());
      const sent = watched.filter((name) => res.headers.has(name));
      expect({ at: `${method} ${template} ${res.status}`, undescribed: sent.filter((name) => !names.includes(name)) }).toEqual({
        at: `${method} ${template} ${res.status}`,
        undescribed: [],
      });
      return sent;
    };
    const body = { location_id: org.accounts[0]!.locations[0]!.id, params: { summary: 'Headers', topicType: 'STANDARD', languageCode: 'en' } };
    const postUrl = `/post?account_id=${accountId()}`;
    const first = await http(t.url, 'POST', postUrl, { token: org.token, body, headers: { 'Idempotency-Key': 'headers-1' } });
    expect(first.status).toBe(202);
    expect(check('POST', '/post', first)).toEqual(['x-request-id', 'ratelimit-policy', 'ratelimit']);
    const replay = await http(t.url, 'POST', postUrl, { token: org.token, body, headers: { 'Idempotency-Key': 'headers-1' } });
    expect(check('POST', '/post', replay)).toContain('idempotent-replayed');
    expect(check('GET', '/location', await http(t.url, 'GET', `/location?account_id=${accountId()}`, { token: org.token }))).toContain('ratelimit');
    check('GET', '/post', await http(t.url, 'GET', `/post?account_id=${accountId()}&per_page=0`, { token: org.token }));
    check('GET', '/post/{id}', await http(t.url, 'GET', `/post/nope?account_id=${accountId()}`, { token: org.token }));
    check('GET', '/organization', await http(t.url, 'GET', '/organization'));

    // A limit's refusal: 429 with Retry-After and the limit's state.
    const reader = await createOrganizationToken(t.em(), org.organization);
    let refused: JsonResponse | undefined;
    for (let attempt = 0; attempt <= PROFILE_READS_PER_MINUTE && !refused; attempt += 1) {
      const res = await http(t.url, 'GET', '/business-profile', { token: reader });
      if (res.status === 429) refused = res;
      else expect(check('GET', '/business-profile', res)).toEqual(['x-request-id', 'ratelimit-policy', 'ratelimit']);
    }
    expect(refused?.status).toBe(429);
    expect(check('GET', '/business-profile', refused!)).toEqual(['x-request-id', 'ratelimit-policy', 'ratelimit', 'retry-after']);
  });

  it('describes the OAuth callbacks: the providers’ redirects to us without a token, and the outcome on the caller’s redirect_url', async () => {
    for (const provider of ['alpha', 'beta']) {
      const callback = operation('GET', `/oauth/${provider}/callback`);
      expect(callback.security).toEqual([]);
      expect(callback.responses['302'].headers.Location).toMatchObject({ required: true });
      expect(Object.keys(callback.responses)).toEqual(['302', '400', '414', '431', '500', '503']);
      expect(callback.responses['400'].content['text/html']).toBeDefined();
      expect(callback.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['state', 'code', 'error']));
      const outcome = operation('POST', `/oauth/${provider}/generate-url`).callbacks.consentOutcome['{$request.body#/redirect_url}'].get;
      expect(outcome.parameters.find((p: any) => p.name === 'state')).toBeDefined();
    }
    const alphaOutcome = operation('POST', '/oauth/alpha/generate-url').callbacks.consentOutcome['{$request.body#/redirect_url}'].get;
    expect(alphaOutcome.parameters.map((p: any) => p.name)).toEqual(['uid', 'alphaId', 'billing_id', 'token_refreshed', 'external_api', 'state', 'error']);
    expect(alphaOutcome.parameters.find((p: any) => p.name === 'error').schema.enum).toEqual(['access_denied', 'invalid_state', 'invalid_grant', 'oauth_error']);
    const betaOutcome = operation('POST', '/oauth/beta/generate-url').callbacks.consentOutcome['{$request.body#/redirect_url}'].get;
    expect(betaOutcome.parameters.find((p: any) => p.name === 'error').schema.enum).toEqual([
      'access_denied',
      'missing_code',
      'invalid_state',
      'token_exchange_failed',
      'provisioning_failed',
    ]);

    // A real refusal of the callback (a state that names no consent) is the body the document gives its 400.
    const refused = await fetch(`${t.url}/oauth/alpha/callback?state=never-issued&code=x`, { redirect: 'manual' });
    expect(refused.status).toBe(400);
    const ajv = new Ajv2020({ strict: true, strictTypes: false });
    ajv.addKeyword('example');
    const validate = ajv.compile(operation('GET', '/oauth/alpha/callback').responses['400'].content['application/json'].schema);
    const refusal = await refused.json();
    expect(validate(refusal)).toBe(true);
    expect(refused.headers.get('x-request-id')).toBeTruthy();
  });

  it('is what every REST test checks answers against, the shared records resolved through their references', async () => {
    const post = (await http(t.url, 'POST', `/post?account_id=${accountId()}`, {
      token: org.token,
      body: { location_id: org.accounts[0]!.locations[0]!.id, params: { summary: 'Checked', topicType: 'STANDARD', languageCode: 'en' } },
    })).body.payload;
    await expect(checkAgainstOpenApi(t.url, 'GET', `/post/${post.id}`, 200, { success: true, payload: post })).resolves.toBeUndefined();
    // A record off the component (Post) or an enum value it does not list (PostState) is refused: the check is on.
    await expect(checkAgainstOpenApi(t.url, 'GET', `/post/${post.id}`, 200, { success: true, payload: { ...post, extra: 1 } })).rejects.toThrow(
      /GET \/post\/\{id\} answered 200 with a body its OpenAPI schema refuses/,
    );
    await expect(checkAgainstOpenApi(t.url, 'GET', `/post/${post.id}`, 200, { success: true, payload: { ...post, state: 'GONE' } })).rejects.toThrow(/allowed values/);
    await expect(checkAgainstOpenApi(t.url, 'GET', '/location', 200, { success: true, data: [{ id: 'x', connected: 'yes' }], found: 1, page: 1, per_page: 10 })).rejects.toThrow(
      /\/data\/0\/connected must be boolean/,
    );
  });

  it('answers unknown paths with the generic 404 body', async () => {
    const res = await http(t.url, 'GET', '/no-such-path');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 404, message: 'No route GET /no-such-path' });
  });
});

describe('GET /openapi.json with PUBLIC_URL', () => {
  it('names PUBLIC_URL as the server, without its trailing slash', async () => {
    const other = await startTestStack({ PUBLIC_URL: 'https://api.example.test/' }, { sharedDatabaseUrl: t.databaseUrl });
    try {
      const res = await http(other.url, 'GET', '/openapi.json');
      expect(res.body.servers).toEqual([{ url: 'https://api.example.test' }]);
    } finally {
      await other.close();
    }
  });
});

describe('the reference page at /docs', () => {
  /** The page's content-security-policy, directive -> sources. */
  const policyOf = (header: string | null) =>
    Object.fromEntries((header ?? '').split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...sources]) => [name, sources]));

  it('answers a page that loads only this server’s copy of Swagger UI, its icon and the document, under a strict policy, without a token', async () => {
    for (const pathname of ['/docs', '/docs/']) {
      const res = await fetch(`${t.url}${pathname}`, { headers: { accept: BROWSER_ACCEPT } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await res.text();
      const loaded = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
      expect(loaded.sort()).toEqual(['/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css', '/favicon.ico']);
      // The document in its 3.0 form, which Swagger UI draws fast (test/front-door.test.ts compares the two).
      expect(html).toContain("url: '/docs/openapi.json'");
      // Nothing absolute to another host anywhere in the page (a CDN link in any form).
      expect(html.match(/(?:https?:)?\/\/[a-z0-9.-]+/gi) ?? []).toEqual([]);
      const policy = policyOf(res.headers.get('content-security-policy'));
      expect(policy).toMatchObject({
        'default-src': ["'none'"],
        'connect-src': ["'self'"],
        'img-src': ["'self'", 'data:'],
        'frame-ancestors': ["'none'"],
      });
      // Scripts: this origin's files and the one inline script, by its hash; nothing evaluated.
      expect(policy['script-src']).toEqual(["'self'", expect.stringMatching(/^'sha256-[A-Za-z0-9+/]+=*'$/)]);
    }
  });

  it('serves the package’s bundle and stylesheet with their types, an ETag and brotli, and nothing else of the package', async () => {
    const packageDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
    for (const [file, type] of [
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['swagger-ui.css', 'text/css; charset=utf-8'],
    ] as const) {
      const res = await fetch(`${t.url}/docs/assets/${file}`, { headers: { 'accept-encoding': 'identity' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(path.join(packageDir, file)))).toBe(true);
      const etag = res.headers.get('etag')!;
      const again = await fetch(`${t.url}/docs/assets/${file}`, { headers: { 'accept-encoding': 'identity', 'if-none-match': etag } });
      expect(again.status).toBe(304);
      const compressed = await fetch(`${t.url}/docs/assets/${file}`, { headers: { 'accept-encoding': 'br' } });
      expect(compressed.headers.get('content-encoding')).toBe('br');
      await compressed.arrayBuffer();
    }
    for (const file of ['index.html', 'swagger-initializer.js', 'swagger-ui-bundle.js.map', 'package.json', '..%2Fpackage.json']) {
      const res = await http(t.url, 'GET', `/docs/assets/${file}`);
      expect({ file, status: res.status }).toEqual({ file, status: 404 });
    }
  });

  it('renders every operation of the document in a browser, with no request elsewhere and no error or policy violation', async () => {
    const browser = await launchChromium();
    let page: Page | undefined;
    try {
      page = await browser.context.newPage();
      const problems: string[] = [];
      const elsewhere: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.protocol !== 'data:' && url.origin !== new URL(t.url).origin) elsewhere.push(request.url());
      });
      const loaded = page.waitForResponse((response) => response.url().endsWith('/openapi.json'));
      await page.goto(`${t.url}/docs`);
      expect((await loaded).status()).toBe(200);
      const operationIds = operations().map((op) => op.operationId as string);
      // One block per operation, under its tag, named by its operationId (displayOperationId).
      await page.locator('.opblock').nth(operationIds.length - 1).waitFor();
      expect(await page.locator('.opblock').count()).toBe(operationIds.length);
      await page.getByText('listPosts', { exact: true }).first().waitFor();
      expect(await page.locator('.opblock-summary-operation-id').allTextContents()).toEqual(expect.arrayContaining(operationIds));
      expect(elsewhere).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page?.close();
      await browser.close();
    }
  });
});
