import { ERROR_LEVEL, serverLog } from './support/server-log';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { routeTable } from '../src/rest/routes';
import type { ValueSource } from '../src/rest/route';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http, type JsonResponse } from './support/http';
import { startTestStack, type TestStack } from './support/stack';
import { postProbe, subscribe, updateJobProbe } from './support/ws';

/**
 * Where the transports meet: a subscription sent over HTTP, wrong-typed variables over graphql-ws, REST values whose
 * JSON type differs from the document's, and the 400s of a route the document writes in its own shape. Each is
 * answered in a documented shape before anything runs, and none of it is logged as an error.
 */

let t: TestStack;
let org: OrganizationFixture;
let accountId: string;
let locationId: string;
/** The server's log, one parsed JSON object per line. */
const { destination: logDestination, lines: logLines } = serverLog();

beforeAll(async () => {
  t = await startTestStack({}, { log: { destination: logDestination } });
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, betaApi: true, citationsApi: true });
  accountId = org.accounts[0]!.account.id;
  locationId = org.accounts[0]!.locations[0]!.id;
});
afterAll(() => t?.close());

let logMark = 0;
beforeEach(() => {
  logMark = logLines.length;
});
/** Error-level lines the server logged since this test started. */
const errorsLogged = () => logLines.slice(logMark).filter((line) => line.level >= ERROR_LEVEL);

const wsUrl = () => `${t.url.replace(/^http/, 'ws')}/graphql`;
const sseUrl = () => `${t.url}/graphql/stream`;

// ---------------------------------------------------------------------------------------------------------------
// Subscriptions over HTTP

describe('a subscription sent over HTTP', () => {
  const subscriptions = [
    ['postUpdated', 'subscription { postUpdated { id } }'],
    ['locationUpdateJobUpdated', 'subscription { locationUpdateJobUpdated { id status } }'],
    ['asyncWorkUpdated', 'subscription { asyncWorkUpdated { id status } }'],
  ] as const;
  const accepts = [
    ['no Accept', undefined],
    ['Accept: application/json', 'application/json'],
    ['Accept: application/graphql-response+json', 'application/graphql-response+json'],
    ['Accept: text/event-stream', 'text/event-stream'],
  ] as const;
  const cases = subscriptions.flatMap(([name, query]) =>
    (['POST', 'GET'] as const).flatMap((method) => accepts.map(([label, accept]) => [name, method, label, query, accept] as const)),
  );

  it.each(cases)('%s over %s with %s answers 400 BAD_REQUEST naming the WebSocket and SSE URLs, before anything runs', async (_name, method, _label, query, accept) => {
    const headers = accept ? { accept } : undefined;
    const answer =
      method === 'POST'
        ? await http(t.url, 'POST', '/graphql', { token: org.token, body: { query }, headers })
        : await http(t.url, 'GET', `/graphql?query=${encodeURIComponent(query)}`, { token: org.token, headers });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toMatch(accept === 'application/graphql-response+json' ? /^application\/graphql-response\+json/ : /^application\/json/);
    expect(answer.headers.get('allow')).toBeNull();
    expect(answer.body).toEqual({
      errors: [
        {
          message:
            `Subscriptions are not served here: subscribe over WebSocket at ${wsUrl()} (protocol graphql-transport-ws), ` +
            `or over Server-Sent Events at ${sseUrl()} (protocol graphql-sse, Accept: text/event-stream)`,
          extensions: { code: 'BAD_REQUEST' },
        },
      ],
    });
    expect(errorsLogged()).toEqual([]);
  });

  it('refuses only the operation that would run: a query beside a subscription in one document still runs', async () => {
    const document = 'subscription Live { postUpdated { id } } query Name { organization { id } }';
    const answer = await http(t.url, 'POST', '/graphql', { token: org.token, body: { query: document, operationName: 'Name' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { organization: { id: org.organization.id } } });
    const refused = await http(t.url, 'POST', '/graphql', { token: org.token, body: { query: document, operationName: 'Live' } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(errorsLogged()).toEqual([]);
  });

  it('names the URLs where the same subscription is served: it delivers at both', async () => {
    const answer = await http(t.url, 'POST', '/graphql', { token: org.token, body: { query: 'subscription { postUpdated { id } }' } });
    const [namedWs, namedSse] = [...(answer.body.errors[0].message as string).matchAll(/at (\S+) /g)].map((match) => match[1]!);
    expect([namedWs, namedSse]).toEqual([wsUrl(), sseUrl()]);
    const scope = { organizationId: org.organization.id, accountId, locationId };
    const probe = postProbe(t.stack.runtime.events, scope);
    // subscribe() resolves once a probe event published through the real event bus arrived through the socket.
    const recorder = await subscribe(namedWs!.replace(/^ws/, 'http').replace(/\/graphql$/, ''), org.token, 'subscription { postUpdated { id version } }', undefined, probe);
    await recorder.close();
    // Over SSE, as the message says: a probe published once the stream is open arrives through it.
    const controller = new AbortController();
    const stream = await fetch(namedSse!, {
      method: 'POST',
      headers: { accept: 'text/event-stream', authorization: `Bearer ${org.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'subscription { postUpdated { id version } }' }),
      signal: controller.signal,
    });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = stream.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      const probeId = await probe.send();
      while (!text.includes(probeId)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before the probe: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
      expect(text).toContain(`event: next\ndata: ${JSON.stringify({ data: { postUpdated: { id: probeId, version: 0 } } })}`);
    } finally {
      controller.abort();
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Variables over graphql-ws

/** What graphql-ws answered to one operation: a refusal (`error` message) or results (`next`, then `complete`). */
type WsAnswer = { kind: 'error'; errors: unknown } | { kind: 'results'; results: unknown[] };

function overWebSocket(query: string, variables: Readonly<Record<string, unknown>>): Promise<WsAnswer> {
  const client = createClient({ url: wsUrl(), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${org.token}` }, retryAttempts: 0 });
  const results: unknown[] = [];
  return new Promise<WsAnswer>((resolve, reject) => {
    client.subscribe(
      { query, variables: { ...variables } },
      {
        next: (result) => {
          results.push(result);
        },
        // graphql-ws's client hands an `error` message's errors to the sink as an array; a socket failure is an Event.
        error: (error) => (Array.isArray(error) ? resolve({ kind: 'error', errors: error }) : reject(new Error(`the socket failed: ${String(error)}`))),
        complete: () => resolve({ kind: 'results', results }),
      },
    );
  }).finally(() => client.dispose());
}

describe('wrong-typed variables over graphql-ws', () => {
  /** graphql-js's refusal of a variable, as HTTP answers it for the operations it serves. */
  const refusal = (message: string) => [{ message, locations: [expect.any(Object)], extensions: { code: 'BAD_USER_INPUT' } }];

  // HTTP serves no subscription (its refusal comes first, whatever the variables): the answer is spelled out here.
  it.each([
    ['postUpdated(postId: 1.5)', 'subscription ($v: ID) { postUpdated(postId: $v) { id } }', { v: 1.5 }, 'Variable "$v" got invalid value 1.5; ID cannot represent value: 1.5'],
    ['postUpdated(locationId: {})', 'subscription ($v: ID) { postUpdated(locationId: $v) { id } }', { v: { a: 1 } }, 'Variable "$v" got invalid value { a: 1 }; ID cannot represent value: { a: 1 }'],
    ['postUpdated(postId: true)', 'subscription ($v: ID) { postUpdated(postId: $v) { id } }', { v: true }, 'Variable "$v" got invalid value true; ID cannot represent value: true'],
    [
      'locationUpdateJobUpdated(jobId: 1.5)',
      'subscription ($j: ID, $l: ID) { locationUpdateJobUpdated(jobId: $j, locationId: $l) { id } }',
      { j: 1.5 },
      'Variable "$j" got invalid value 1.5; ID cannot represent value: 1.5',
    ],
    [
      'locationUpdateJobUpdated(locationId: ["a", "b"])',
      'subscription ($j: ID, $l: ID) { locationUpdateJobUpdated(jobId: $j, locationId: $l) { id } }',
      { l: ['a', 'b'] },
      'Variable "$l" got invalid value ["a", "b"]; ID cannot represent value: ["a", "b"]',
    ],
  ] as const)('the subscription %s: refused with BAD_USER_INPUT before it starts, nothing logged as an error', async (_case, query, variables, message) => {
    const overWs = await overWebSocket(query, variables);
    // Refused before it started, as a validation failure is: an `error` message, no result.
    expect(overWs).toEqual({ kind: 'error', errors: refusal(message) });
    expect(errorsLogged()).toEqual([]);
  });

  it.each([
    ['location(id: 1.5), a query', 'query ($v: ID!) { location(id: $v) { id } }', { v: 1.5 }],
    ['location(id: null), a query', 'query ($v: ID!) { location(id: $v) { id } }', { v: null }],
    ['locationUpdateJobs(perPage: "5"), a query', 'query ($a: ID, $n: Int) { locationUpdateJobs(accountId: $a, perPage: $n) { found } }', { a: 'x', n: '5' }],
    ['disableCitations(locationId: 1.5), a mutation', 'mutation ($v: ID!) { disableCitations(locationId: $v) { removed } }', { v: 1.5 }],
    [
      'updateLocation(input.regularHours[0].openTime: "9"), a mutation',
      'mutation ($l: ID!, $i: UpdateLocationInput!) { updateLocation(locationId: $l, input: $i) { id } }',
      { l: 'x', i: { regularHours: [{ openTime: '9' }] } },
    ],
  ] as const)('%s: answered exactly as over HTTP (BAD_USER_INPUT, the same message), nothing logged as an error', async (_case, query, variables) => {
    const overHttp = await graphql(t.url, query, { token: org.token, variables });
    expect(overHttp.status).toBe(400);
    expect(overHttp.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT' } })]);

    const overWs = await overWebSocket(query, variables);
    expect(overWs).toEqual({ kind: 'error', errors: overHttp.body.errors });
    expect(errorsLogged()).toEqual([]);
  });

  it('keeps accepting well-typed variables on the same subscription (it delivers)', async () => {
    const scope = { organizationId: org.organization.id, accountId, locationId };
    const recorder = await subscribe(
      t.url,
      org.token,
      'subscription ($l: ID) { locationUpdateJobUpdated(locationId: $l) { id version } }',
      { l: locationId },
      updateJobProbe(t.stack.runtime.events, scope),
    );
    await recorder.close();
    expect(errorsLogged()).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// REST values keep their JSON types

describe('REST values keep the JSON type the document gives them', () => {
  const UNKNOWN_BRAND = '/beta/brands/brand-0190a000-0000-7000-8000-000000000000';

  it('PATCH /beta/brands: additional_categories as a string is a 400 naming it, not a list of one', async () => {
    const asString = await http(t.url, 'PATCH', UNKNOWN_BRAND, { token: org.token, body: { primary_category: 'gcid:cafe', additional_categories: 'gcid:cafe' } });
    expect(asString.status).toBe(400);
    expect(asString.body).toEqual({ error: 400, message: 'additional_categories must be a list' });
    // The same body with a list is read, and goes on to the brand (unknown here): the reading was the refusal.
    const asList = await http(t.url, 'PATCH', UNKNOWN_BRAND, { token: org.token, body: { primary_category: 'gcid:cafe', additional_categories: ['gcid:cafe'] } });
    expect(asList.status).toBe(404);
  });

  const post = `/post?account_id=<a>`;
  const create = `/location?account_id=<a>`;
  const update = `/location/update?account_id=<a>&location_id=<l>`;
  const brand = UNKNOWN_BRAND;
  const cases: [string, string, string, Record<string, unknown>, string][] = [
    // A single value for a list, at the top and nested.
    ['POST', create, 'a string for a list', { additional_address_lines: 'Floor 2' }, 'additional_address_lines must be a list'],
    ['PATCH', update, 'a string for a list of strings', { phone_number: '+1 555 0100', additional_phone_numbers: '+1 555 0101' }, 'additional_phone_numbers must be a list'],
    ['PATCH', update, 'an object for a list of objects', { regular_hours: { open_day: 'MONDAY' } }, 'regular_hours must be a list'],
    ['PATCH', update, 'an object for a list of JSON items', { service_items: { freeFormServiceItem: { category: 'c', label: { displayName: 'x' } } } }, 'service_items must be a list'],
    ['POST', post, 'an object for a nested list', { location_id: '<l>', params: { summary: 's', media: { mediaFormat: 'PHOTO', sourceUrl: 'https://example.com/a.jpg' } } }, 'params.media must be a list'],
    ['PATCH', update, 'a string for a list inside a list item', { more_hours: [{ hoursTypeId: 'ACCESS', periods: 'all day' }] }, 'more_hours[0].periods must be a list'],
    // Text for numbers and booleans.
    ['POST', create, 'text for a number', { latitude: '5', longitude: 5 }, 'latitude must be a number'],
    ['POST', post, 'text for an integer, nested', { location_id: '<l>', params: { summary: 's', event: { title: 't', schedule: { startDate: { year: '2030', month: 1, day: 1 } } } } }, 'params.event.schedule.startDate.year must be an integer'],
    ['POST', post, 'text for a boolean', { location_id: '<l>', params: { summary: 's' }, use_location_website_url: 'true' }, 'use_location_website_url must be true or false'],
    ['PATCH', update, 'text for a boolean in a list item', { special_hours: [{ open_date: '2030-01-01', is_closed: 'true' }] }, 'special_hours[0].is_closed must be true or false'],
    // Numbers, lists and objects for text.
    ['POST', post, 'a number for an id', { location_id: 5, params: { summary: 's' } }, 'location_id must be a string'],
    ['PATCH', update, 'a number for a string', { name: 5 }, 'name must be a string'],
    ['PATCH', update, 'a list for a string', { name: ['a'] }, 'name must be a string'],
    ['PATCH', update, 'a number for a text inside an hours period', { regular_hours: [{ open_day: 'MONDAY', open_time: { hours: 9, minutes: '00' }, close_time: { hours: '17', minutes: null } }] }, 'regular_hours[0].open_time.hours must be a string'],
    ['PATCH', update, 'a number for a day', { regular_hours: [{ open_day: 1 }] }, 'regular_hours[0].open_day must be a string'],
    ['PATCH', brand, 'a number for an enum', { ownership_type: 1 }, 'ownership_type must be one of BRAND_OWNER, FRANCHISEE'],
    ['PATCH', brand, 'a string for a boolean', { use_location_name: 'false' }, 'use_location_name must be true or false'],
    ['PATCH', brand, 'a list of numbers for a list of strings', { primary_category: 'gcid:cafe', additional_categories: [1, 2] }, 'additional_categories[0] must be a string'],
    // A list for an object.
    ['POST', post, 'a list for an object', { location_id: '<l>', params: [{ summary: 's' }] }, 'params must be an object'],
  ];

  it.each(cases)('%s %s: %s is a 400 naming the REST field, in the route’s shape', async (method, template, _case, body, message) => {
    const fill = (text: string) => text.replace('<a>', accountId).replace('<l>', locationId);
    const answer = await http(t.url, method, fill(template), { token: org.token, body: JSON.parse(fill(JSON.stringify(body))) });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(template === update ? { success: false, msg: message } : { error: 400, message });
    expect(errorsLogged()).toEqual([]);
  });

  it('keeps the documented reading of query text: page=2 is a number, a,b a list, true a boolean', async () => {
    const posts = await http(t.url, 'GET', `/post?account_id=${accountId}&page=2&per_page=5`, { token: org.token });
    expect(posts.status).toBe(200);
    expect(posts.body.payload).toMatchObject({ page: 2, per_page: 5 });
    const fields = await http(t.url, 'GET', `/location?account_id=${accountId}&include_fields=name,city`, { token: org.token });
    expect(fields.status).toBe(200);
    expect(Object.keys(fields.body.data[0]).sort()).toEqual(['city', 'id', 'name']);
    const combined = await http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${locationId}&service_items_combination=true`, {
      token: org.token,
      body: { description: 'Read strictly' },
    });
    expect(combined.status).toBe(200);
  });

  it.each([
    ['page sent twice', 'GET', `/post?account_id=<a>&page=2&page=3`, 'page must be sent once (it was sent 2 times)'],
    ['account_id sent twice', 'GET', `/post?account_id=<a>&account_id=<a>`, 'account_id must be sent once (it was sent 2 times)'],
    ['include_fields sent twice', 'GET', `/location?account_id=<a>&include_fields=name&include_fields=city`, 'include_fields must be sent once (it was sent 2 times)'],
    ['account_id[]', 'GET', `/location?account_id[]=<a>`, 'account_id[] is not a parameter: send account_id once, as account_id=<value>'],
    ['account_id[0]', 'GET', `/post?account_id[0]=<a>`, 'account_id[0] is not a parameter: send account_id once, as account_id=<value>'],
    ['page=two', 'GET', `/post?account_id=<a>&page=two`, 'page must be an integer'],
  ])('a query parameter: %s is a 400 naming it', async (_case, method, template, message) => {
    const answer = await http(t.url, method, template.replaceAll('<a>', accountId), { token: org.token });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 400, message });
  });

  it('refuses a repeated or bracketed account_id with an account token too: it is malformed, whether read or not', async () => {
    const accountToken = org.accounts[0]!.token;
    for (const query of [`account_id=${accountId}&account_id=${accountId}`, `account_id[]=${accountId}`]) {
      const answer = await http(t.url, 'GET', `/location?${query}`, { token: accountToken });
      expect(answer.status).toBe(400);
    }
    expect((await http(t.url, 'GET', `/location?account_id=${accountId}`, { token: accountToken })).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// A route's own 400 shape

/** Routes whose document writes every 400 in a shape of its own (the route table's `errorShapes`). */
const routesWithOwn400 = routeTable.filter((route) => route.errorShapes?.[400]);
const readsAccountId = (route: (typeof routeTable)[number]) =>
  (Object.values(route.variables) as ValueSource[]).some((source) => source.from === 'query' && source.name === 'account_id');

describe('every 400 of a route with a shape of its own comes in that shape', () => {
  it('the route table has such routes (PATCH /location/update)', () => {
    expect(routesWithOwn400.map((route) => `${route.method} ${route.path}`)).toContain('PATCH /location/update');
  });

  const shapeCheck: Record<string, (answer: JsonResponse) => void> = {
    msg: (answer) => expect(answer.body).toEqual({ success: false, msg: expect.any(String) }),
    coded: (answer) => expect(answer.body).toEqual({ success: false, code: expect.any(String), msg: expect.any(String), missing_fields: expect.any(Array) }),
  };

  it.each(routesWithOwn400.map((route) => [`${route.method} ${route.path}`, route] as const))('%s', async (_label, route) => {
    const path = route.path.replace(/:(\w+)/g, 'x');
    const withBody = route.method !== 'GET' && route.method !== 'DELETE';
    type Sent = [what: string, url: string, options: { rawBody?: string; body?: unknown; headers?: Record<string, string> }];
    const query = `location_id=${locationId}`;
    const requests: Sent[] = [
      ['a body that is not JSON', `${path}?account_id=${accountId}&${query}`, { rawBody: '{"name": ', headers: { 'content-type': 'application/json' } }],
      ['a JSON body that is not an object', `${path}?account_id=${accountId}&${query}`, { body: ['name'] }],
    ];
    if (readsAccountId(route)) {
      requests.push(
        ['a repeated account_id', `${path}?account_id=${accountId}&account_id=${accountId}&${query}`, { body: { name: 'x' } }],
        ['an organization token without account_id', `${path}?${query}`, { body: { name: 'x' } }],
        ['an empty account_id', `${path}?account_id=&${query}`, { body: { name: 'x' } }],
        ['account_id[]', `${path}?account_id[]=${accountId}&${query}`, { body: { name: 'x' } }],
      );
    }
    const shape = route.errorShapes![400]!;
    expect(Object.keys(shapeCheck)).toContain(shape);
    for (const [what, url, options] of requests) {
      if (!withBody && (options.rawBody || Array.isArray(options.body))) continue;
      const answer = await http(t.url, route.method, url, { token: org.token, ...(withBody ? options : {}) });
      expect({ what, status: answer.status }).toEqual({ what, status: 400 });
      shapeCheck[shape]!(answer);
    }
    expect(errorsLogged()).toEqual([]);
  });

  it('PATCH /location/update names the problem in msg, for every kind of refusal', async () => {
    const path = `/location/update?location_id=${locationId}`;
    const patch = (query: string, options: { rawBody?: string; body?: unknown; headers?: Record<string, string> }) =>
      http(t.url, 'PATCH', `${path}${query}`, { token: org.token, ...options });
    expect((await patch('', { body: { name: 'x' } })).body).toEqual({ success: false, msg: 'account_id is required with an organization token' });
    expect((await patch('&account_id=', { body: { name: 'x' } })).body).toEqual({ success: false, msg: 'account_id is required with an organization token' });
    expect((await patch(`&account_id[]=${accountId}`, { body: { name: 'x' } })).body).toEqual({
      success: false,
      msg: 'account_id[] is not a parameter: send account_id once, as account_id=<value>',
    });
    expect((await patch(`&account_id=${accountId}`, { rawBody: '{"name": ', headers: { 'content-type': 'application/json' } })).body).toEqual({
      success: false,
      msg: expect.stringMatching(/JSON/),
    });
    expect((await patch(`&account_id=${accountId}`, { body: { regular_hours: [{ openDay: 'MONDAY' }] } })).body).toEqual({
      success: false,
      msg: 'regular_hours[0].openDay is not a known field',
    });
    expect((await patch(`&account_id=${accountId}`, { body: { name: 'x', additional_phone_numbers: ['1', '2', '3'], phone_number: '+1 555 0100' } })).body).toEqual({
      success: false,
      msg: expect.stringContaining('additional_phone_numbers'),
    });
  });

  it('routes without a shape of their own keep the generic body for the same refusals', async () => {
    const notJson = await http(t.url, 'POST', `/post?account_id=${accountId}`, { token: org.token, rawBody: '{"location_id": ', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(notJson.body).toEqual({ error: 400, message: expect.stringMatching(/JSON/) });
    const noAccount = await http(t.url, 'GET', '/location', { token: org.token });
    expect(noAccount.body).toEqual({ error: 400, message: 'account_id is required with an organization token' });
  });
});
