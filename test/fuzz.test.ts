import { connect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  typeFromAST,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type IntrospectionQuery,
} from 'graphql';
import WebSocket from 'ws';
import { errorCatalogue } from '../src/errors/domain-error';
import { isVerbatim, restFieldName, type RestNaming } from '../src/rest/names';
import { routeTable } from '../src/rest/routes';
import type { RestRoute, ValueSource } from '../src/rest/route';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { BAD_BODIES, BAD_JSON_VALUES, BAD_URL_TEXT, EXPANDING_MASK } from './support/fuzz-values';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Bad input of every kind against every REST route of the route table and every GraphQL query and mutation of the
 * schema (and the subscription over graphql-ws). Whatever is sent, the server must answer in time, below 500, in
 * a documented shape, and stay healthy. New routes and operations join by existing: nothing here names them.
 */

/** A hang detector, not a performance figure: an answer slower than this is a stalled server. */
const ANSWER_BOUND_MS = 5000;
const MARKER = '"__FUZZ_VALUE__"';

let t: TestStack;
let org: OrganizationFixture;
let schema: GraphQLSchema;
const ids = { accountId: '', locationId: '', postId: '', referenceId: '' };

interface Finding {
  what: string;
  status: number;
  body: string;
}

const stats = { tried: 0, serverErrors: 0, slowestMs: 0, slowest: '', longestBlockMs: 0, longestBlock: '' };
const timings: [number, string][] = [];
const findings: Finding[] = [];
const eventLoop = monitorEventLoopDelay({ resolution: 10 });
// Each test reports what it found itself.
beforeEach(() => {
  findings.length = 0;
});

beforeAll(async () => {
  t = await startTestStack({ POST_RATE_LIMIT_PER_MINUTE: '1000000', POST_QUOTA_PER_MONTH: '1000000' });
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
  ids.accountId = org.accounts[0]!.account.id;
  ids.locationId = org.accounts[0]!.locations[0]!.id;
  ids.referenceId = org.accounts[0]!.account.referenceId!;
  const created = await http(t.url, 'POST', `/post?account_id=${ids.accountId}`, {
    token: org.token,
    body: { location_id: ids.locationId, params: { summary: 'Fuzz baseline' } },
  });
  ids.postId = created.body.payload.id;
  const introspection = await graphql<IntrospectionQuery>(t.url, getIntrospectionQuery(), { token: org.token });
  schema = buildClientSchema(introspection.body.data!);
  eventLoop.enable();
}, 60000);

afterAll(async () => {
  eventLoop.disable();
  console.log(
    `fuzz: ${stats.tried} requests over ${routeTable.length} REST routes and ${rootFields().length} GraphQL operations; ` +
      `5xx: ${stats.serverErrors}; slowest answer ${stats.slowestMs} ms (${stats.slowest}); ` +
      `longest event-loop block during one request ${stats.longestBlockMs} ms (${stats.longestBlock})`,
  );
  if (process.env.FUZZ_SLOWEST) console.log(timings.sort((a, b) => b[0] - a[0]).slice(0, 25).map(([ms, w]) => `${ms} ms ${w}`).join('\n'));
  await t?.close();
});

/** Catalogue codes, plus graphql-js's own for documents that do not parse or validate. */
const KNOWN_CODES = new Set([...Object.keys(errorCatalogue), 'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED']);

/** Documented REST error shapes (the interface document's Errors section). */
function isDocumentedRestError(status: number, body: any): boolean {
  if (!body || typeof body !== 'object') return false;
  const keys = Object.keys(body).sort().join(',');
  if (keys === 'error,message') return body.error === status && typeof body.message === 'string';
  if (keys === 'msg,success') return body.success === false && typeof body.msg === 'string';
  if (keys === 'msg,payload,success') return body.success === false && typeof body.msg === 'string';
  if (keys === 'code,missing_fields,msg,success') return body.success === false;
  if (keys === 'error,message,statusCode') return body.statusCode === status && body.error === 'Not Found';
  return false;
}

function isDocumentedGraphQLBody(body: any): boolean {
  if (!body || typeof body !== 'object') return false;
  if (Object.keys(body).some((key) => key !== 'data' && key !== 'errors')) return false;
  for (const error of body.errors ?? []) {
    const code = error?.extensions?.code;
    if (typeof error?.message !== 'string' || !KNOWN_CODES.has(code) || code === 'INTERNAL_SERVER_ERROR') return false;
    if ('stacktrace' in (error.extensions ?? {}) || 'detail' in (error.extensions ?? {})) return false;
  }
  return true;
}

/** REST speaks REST: no GraphQL type names ("PostState"), variables ($input), input types or coercion wording. */
const GRAPHQL_WORDS = /\\?"[A-Z][A-Za-z]*\\?"|\$[A-Za-z]|\w(Input|Args)\b|cannot represent|GraphQL/;

/** Neither kind of answer may carry internals. */
const LEAKS = /\b(select|insert into|update \S+ set|delete from)\b|node_modules|at \S+ \(\/|pgboss|mikro-orm/i;

/** What a REST route's answers are held to beyond the shapes every route shares. */
interface RouteRules {
  /** The names its operation has that the route does not (`locationId`, `input.params`): refusals name the route's own. */
  graphQLNames?: RegExp;
  /** Its success envelope: the account-connection flows answer `{url, external_api: true}`, without `success`. */
  envelope?: RestRoute['envelope'];
}

/** A success body in the route's envelope. */
function isDocumentedSuccess(body: unknown, envelope: RestRoute['envelope']): boolean {
  const members = body as Record<string, unknown> | undefined;
  if (typeof envelope === 'object') return Object.entries(envelope.bare).every(([name, value]) => members?.[name] === value);
  return members?.success === true;
}

async function check(what: string, send: () => Promise<{ status: number; text: string }>, graphQLShape: boolean, route: RouteRules = {}): Promise<void> {
  stats.tried += 1;
  eventLoop.reset();
  const started = performance.now();
  let answer: { status: number; text: string };
  try {
    answer = await send();
  } catch (error) {
    findings.push({ what, status: 0, body: `no answer: ${String(error)}` });
    return;
  }
  const ms = Math.round(performance.now() - started);
  if (ms > stats.slowestMs) Object.assign(stats, { slowestMs: ms, slowest: what });
  // The longest the event loop (shared with the in-process server) was held during this request.
  const blockedMs = Math.round(eventLoop.max / 1e6);
  eventLoop.reset();
  if (blockedMs > stats.longestBlockMs) Object.assign(stats, { longestBlockMs: blockedMs, longestBlock: what });
  timings.push([blockedMs, `${what} (answered in ${ms} ms)`]);
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    body = undefined;
  }
  const success = answer.status >= 200 && answer.status < 300;
  const documented = graphQLShape
    ? isDocumentedGraphQLBody(body)
    : success
      ? isDocumentedSuccess(body, route.envelope)
      : isDocumentedRestError(answer.status, body);
  if (answer.status >= 500) stats.serverErrors += 1;
  const message = (body as { message?: unknown; msg?: unknown } | undefined)?.message ?? (body as { msg?: unknown } | undefined)?.msg;
  const graphQLWords = !graphQLShape && !success && (GRAPHQL_WORDS.test(answer.text) || (typeof message === 'string' && route.graphQLNames?.test(message) === true));
  if (answer.status >= 500 || !documented || ms > ANSWER_BOUND_MS || LEAKS.test(answer.text) || graphQLWords) {
    findings.push({ what: `${what} (${ms} ms)`, status: answer.status, body: answer.text.slice(0, 300) });
  }
}

async function send(method: string, path: string, options: { headers?: Record<string, string>; body?: string | Buffer } = {}) {
  const response = await fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${org.token}`, ...options.headers },
    body: options.body,
  });
  return { status: response.status, text: await response.text() };
}

/** Raw bytes on a socket, for what fetch refuses to send (oversized headers, control characters, broken HTTP). */
function sendRaw(request: string): Promise<{ status: number; text: string }> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let data = '';
    socket.setTimeout(ANSWER_BOUND_MS * 2, () => socket.destroy(new Error('raw request timed out')));
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, text: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
    socket.write(request, 'latin1');
  });
}

// ---------------------------------------------------------------------------------------------------------------
// REST

/** A valid value for each documented REST name the routes read, so each request differs from a good one in one place. */
function goodRestValue(name: string): unknown {
  const values: Record<string, unknown> = {
    account_id: ids.accountId,
    location_id: ids.locationId,
    id: ids.postId,
    params: { summary: 'Fuzz {a}', topicType: 'STANDARD' },
    parameterMask: 'a',
    parameters: { a: 'b' },
    name: 'Fuzzed name',
    url: 'https://hooks.example.com/in',
    event_types: ['*'],
    redirect_url: 'https://app.example/return',
  };
  return values[name];
}

interface RestRequest {
  path: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** Body fields, as JSON text each. */
  body: Record<string, string> | undefined;
}

function restNames(route: RestRoute): { source: ValueSource; name: string }[] {
  return (Object.values(route.variables) as ValueSource[]).flatMap((source): { source: ValueSource; name: string }[] =>
    source.from === 'bodyFields' ? Object.values(source.fields).map((name) => ({ source, name })) : [{ source, name: source.name }],
  );
}

/**
 * What a REST refusal of this route must not say: the GraphQL names of its operation (variables, root arguments, the
 * fields of its input types) that are not also a name the route reads (its sources, their fields in the route's
 * naming, and the names kept below verbatim fields). camelCase names anywhere; lowercase ones as a path's head
 * (`input.params.summary`), where they cannot be an English word.
 */
function graphQLOnlyNames(route: RestRoute): RegExp | undefined {
  const operation = route.operation.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  if (!operation || operation.kind !== Kind.OPERATION_DEFINITION) return undefined;
  const graphQLNames = new Set<string>();
  const rest = new Set(restNames(route).map(({ name }) => name));
  // `naming` undefined: names are kept as they are below this point (a verbatim field, or a body read by one name).
  const walk = (type: GraphQLInputType, naming: RestNaming | undefined, seen: ReadonlySet<string>) => {
    const input = getNamedType(type);
    if (!isInputObjectType(input) || seen.has(input.name)) return;
    for (const field of Object.values(input.getFields())) {
      const kept = naming === undefined || isVerbatim(naming, input.name, field.name);
      graphQLNames.add(field.name);
      rest.add(kept ? field.name : restFieldName(naming, input.name, field.name));
      walk(field.type, kept ? undefined : naming, new Set([...seen, input.name]));
    }
  };
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind === Kind.FIELD) for (const argument of selection.arguments ?? []) graphQLNames.add(argument.name.value);
  }
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    graphQLNames.add(name);
    const source: ValueSource | undefined = route.variables[name];
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!source || !type) continue;
    const input = getNamedType(type);
    if (source.from !== 'bodyFields' || !isInputObjectType(input)) {
      walk(type, undefined, new Set());
      continue;
    }
    const naming = source.naming ?? {};
    for (const field of Object.values(input.getFields())) {
      graphQLNames.add(field.name);
      if (field.name in source.fields) walk(field.type, isVerbatim(naming, input.name, field.name) ? undefined : naming, new Set([input.name]));
    }
  }
  const only = [...graphQLNames].filter((name) => !rest.has(name));
  const camel = only.filter((name) => /[A-Z]/.test(name));
  const lower = only.filter((name) => !/[A-Z]/.test(name));
  const patterns = [...(camel.length ? [`\\b(${camel.join('|')})\\b`] : []), ...(lower.length ? [`\\b(${lower.join('|')})[.[]`] : [])];
  return patterns.length ? new RegExp(patterns.join('|')) : undefined;
}

function baseline(route: RestRoute): RestRequest {
  const request: RestRequest = { path: {}, query: {}, headers: {}, body: undefined };
  for (const { source, name } of restNames(route)) {
    const value = goodRestValue(name);
    if (source.from === 'body' || source.from === 'bodyFields') {
      request.body ??= {};
      if (value !== undefined) request.body[name] = JSON.stringify(value);
    } else if (value !== undefined) {
      request[source.from === 'header' ? 'headers' : source.from][name] = encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value));
    }
  }
  return request;
}

function sendRest(route: RestRoute, request: RestRequest, extraQuery = '') {
  const path = route.path.replace(/:(\w+)/g, (_m, name: string) => request.path[name] ?? 'x');
  const query = Object.entries(request.query).map(([k, v]) => `${k}=${v}`).join('&') + extraQuery;
  const body = request.body && `{${Object.entries(request.body).map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
  return send(route.method, `${path}${query ? `?${query}` : ''}`, {
    headers: { ...request.headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body,
  });
}

describe('fuzzing every REST route', () => {
  it.each(routeTable.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s: every bad value answers below 500, in a documented shape, in time',
    async (label, route) => {
      const good = baseline(route);
      const rules: RouteRules = { graphQLNames: graphQLOnlyNames(route), envelope: route.envelope };
      for (const { source, name } of restNames(route)) {
        if (source.from === 'path' || source.from === 'query') {
          for (const bad of BAD_URL_TEXT) {
            const from = source.from;
            await check(`${label} ${name}=${bad.kind}`, () => sendRest(route, { ...good, [from]: { ...good[from], [name]: bad.text } }), false, rules);
          }
          if (source.from === 'query') {
            await check(`${label} ${name} repeated`, () => sendRest(route, good, `&${name}=a&${name}=b`), false, rules);
            await check(`${label} ${name}[] array syntax`, () => sendRest(route, good, `&${name}[]=a&${name}[x]=b`), false, rules);
          }
        } else if (source.from === 'header') {
          for (const value of ['x'.repeat(300), '   ', 'Ã©Ã¨', 'a'.repeat(8000), '{a}']) {
            await check(`${label} header ${name}=${value.slice(0, 10)}…`, () => sendRest(route, { ...good, headers: { ...good.headers, [name]: value } }), false, rules);
          }
        } else {
          for (const bad of BAD_JSON_VALUES) {
            await check(`${label} body ${name}=${bad.kind}`, () => sendRest(route, { ...good, body: { ...good.body, [name]: bad.json } }), false, rules);
          }
          // One level down into objects (params.summary, params.callToAction, …).
          const value = goodRestValue(name);
          if (value && typeof value === 'object') {
            for (const field of nestedFieldsOf(name)) {
              for (const bad of BAD_JSON_VALUES.filter((b) => !b.heavy)) {
                const nested = JSON.stringify({ ...(value), [field]: '__FUZZ_VALUE__' }).replace(MARKER, bad.json);
                await check(`${label} body ${name}.${field}=${bad.kind}`, () => sendRest(route, { ...good, body: { ...good.body, [name]: nested } }), false, rules);
              }
            }
          }
        }
      }
      if (good.body) {
        for (const bad of BAD_BODIES) {
          const path = route.path.replace(/:(\w+)/g, (_m, n: string) => good.path[n] ?? 'x');
          await check(`${label} whole body ${bad.kind}`, () => send(route.method, `${path}?account_id=${ids.accountId}`, {
            headers: { 'content-type': bad.contentType ?? 'application/json' },
            body: bad.body,
          }), false, rules);
        }
        if (restNames(route).some(({ name }) => name === 'parameterMask')) {
          await check(`${label} the doubling parameterMask`, () =>
            sendRest(route, { ...good, body: { ...good.body, parameterMask: JSON.stringify(EXPANDING_MASK.parameterMask), parameters: JSON.stringify(EXPANDING_MASK.parameters), params: JSON.stringify({ summary: '{a}' }) } }), false, rules);
        }
      }
      for (const authorization of [undefined, 'Basic abc', `Bearer ${'a'.repeat(8000)}`, 'Bearer a b', 'Bearer']) {
        await check(`${label} authorization ${String(authorization).slice(0, 12)}`, () => {
          const path = route.path.replace(/:(\w+)/g, (_m, n: string) => good.path[n] ?? 'x');
          return fetch(`${t.url}${path}`, { method: route.method, headers: authorization ? { authorization } : {} }).then(async (r) => ({ status: r.status, text: await r.text() }));
        }, false, rules);
      }
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
        if (method === route.method) continue;
        await check(`${method} ${route.path}`, () => send(method, route.path.replace(/:(\w+)/g, 'x')), false, rules);
      }
      expect(findings).toEqual([]);
    },
    300000,
  );
});

/** The fields of a post's params: the only nested body object of the documented routes so far. */
function nestedFieldsOf(name: string): string[] {
  const input = name === 'params' ? schema.getType('PostParamsInput') : undefined;
  return input && isInputObjectType(input) ? Object.keys(input.getFields()) : [];
}

// ---------------------------------------------------------------------------------------------------------------
// GraphQL

function rootFields(): { operation: 'query' | 'mutation'; field: GraphQLField<unknown, unknown> }[] {
  if (!schema) return [];
  const of = (operation: 'query' | 'mutation', type: GraphQLObjectType | null | undefined) =>
    Object.values(type?.getFields() ?? {}).map((field) => ({ operation, field }));
  return [...of('query', schema.getQueryType()), ...of('mutation', schema.getMutationType())];
}

/** A valid value for an argument or input field, by name and type; undefined leaves an optional one out. */
function goodValue(name: string, type: GraphQLInputType): unknown {
  const required = isNonNullType(type);
  const inner = required ? type.ofType : type;
  if (isListType(inner)) {
    const item = goodValue(name.replace(/s$/, ''), inner.ofType);
    return item === undefined ? (required ? [] : undefined) : [item];
  }
  const byName: Record<string, unknown> = {
    accountId: ids.accountId,
    locationId: ids.locationId,
    id: ids.postId,
    postId: ids.postId,
    referenceId: ids.referenceId,
    params: { summary: 'Fuzz {a}' },
    parameterMask: 'a',
    parameters: { a: 'b' },
    name: 'Fuzzed name',
  };
  if (name in byName) return byName[name];
  if (!required) return undefined;
  if (isInputObjectType(inner)) {
    const fields = Object.values(inner.getFields()).map((field) => [field.name, goodValue(field.name, field.type)] as const);
    return Object.fromEntries(fields.filter(([, value]) => value !== undefined));
  }
  if (isEnumType(inner)) return inner.getValues()[0]!.value;
  if (isScalarType(inner)) {
    const scalars: Record<string, unknown> = { ID: ids.postId, String: 'x', Int: 1, Float: 1, Boolean: false, JSON: {}, DateTime: new Date().toISOString() };
    return scalars[inner.name] ?? 'x';
  }
  return undefined;
}

/** Paths to the fields of an input object, down to `depth` levels (input.params.callToAction.url). */
function inputPaths(type: GraphQLInputType, depth: number): string[][] {
  const named = getNamedType(type);
  if (!isInputObjectType(named) || depth === 0) return [];
  return Object.values(named.getFields()).flatMap((field) => [[field.name], ...inputPaths(field.type, depth - 1).map((rest) => [field.name, ...rest])]);
}

/** Sets `path` inside `value` to the marker, building objects on the way. */
function withMarker(value: unknown, path: string[]): unknown {
  if (path.length === 0) return '__FUZZ_VALUE__';
  const object = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  return { ...object, [path[0]!]: withMarker(object[path[0]!], path.slice(1)) };
}

function documentFor(operation: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const definitions = field.args.map((arg) => `$${arg.name}: ${arg.type.toString()}`).join(', ');
  const args = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const selection = isCompositeType(getNamedType(field.type)) ? ' { __typename }' : '';
  return `${operation} Fuzz${definitions ? `(${definitions})` : ''} { ${field.name}${args ? `(${args})` : ''}${selection} }`;
}

function sendGraphQL(query: string, variablesJson: string) {
  return send('POST', '/graphql', { headers: { 'content-type': 'application/json' }, body: `{"query":${JSON.stringify(query)},"variables":${variablesJson}}` });
}

describe('fuzzing every GraphQL operation', () => {
  it('has operations to fuzz', () => {
    expect(rootFields().length).toBeGreaterThan(5);
  });

  it.each(['query', 'mutation'] as const)('every %s field: every bad argument answers below 500, in a documented shape, in time', async (kind) => {
    for (const { operation, field } of rootFields().filter((root) => root.operation === kind)) {
      const query = documentFor(operation, field);
      const good = Object.fromEntries(field.args.map((arg) => [arg.name, goodValue(arg.name, arg.type)]).filter(([, v]) => v !== undefined));
      for (const arg of field.args) {
        for (const bad of BAD_JSON_VALUES) {
          const variables = JSON.stringify({ ...good, [arg.name]: '__FUZZ_VALUE__' }).replace(MARKER, bad.json);
          await check(`${field.name}($${arg.name}=${bad.kind})`, () => sendGraphQL(query, variables), true);
        }
        for (const path of inputPaths(arg.type, 3)) {
          for (const bad of BAD_JSON_VALUES.filter((b) => !b.heavy)) {
            const variables = JSON.stringify({ ...good, [arg.name]: withMarker(good[arg.name], path) }).replace(MARKER, bad.json);
            await check(`${field.name}($${arg.name}.${path.join('.')}=${bad.kind})`, () => sendGraphQL(query, variables), true);
          }
        }
      }
      // The same values as literals in the document, where the argument is a string.
      for (const arg of field.args.filter((a) => getNamedType(a.type).name === 'String' || getNamedType(a.type).name === 'ID')) {
        await check(`${field.name}(${arg.name}: "\\u0000" literal)`, () =>
          send('POST', '/graphql', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `${operation} { ${field.name}(${arg.name}: "a\\u0000b")${isCompositeType(getNamedType(field.type)) ? ' { __typename }' : ''} }` }) }), true);
      }
    }
    expect(findings).toEqual([]);
  }, 600000);

  it('whole requests that are not GraphQL, over POST and GET, answer below 500 in the GraphQL error shape', async () => {
    for (const bad of BAD_BODIES) {
      await check(`POST /graphql ${bad.kind}`, () => send('POST', '/graphql', { headers: { 'content-type': bad.contentType ?? 'application/json' }, body: bad.body }), true);
    }
    const get = (search: string) => send('GET', `/graphql?${search}`, { headers: { accept: 'application/json' } });
    for (const search of [
      'query=%00',
      'query=%7B%20organization%20%7B%20id%20%7D%20%7D&variables=%00',
      'query=query(%24a%3AString)%7Baccount(referenceId%3A%24a)%7Bid%7D%7D&variables=%7B%22a%22%3A%22%5Cu0000%22%7D',
      'query=query(%24a%3AString)%7Baccount(referenceId%3A%24a)%7Bid%7D%7D&variables=%7B%22a%22%3A%22%5Cud800%22%7D',
      'query=%7B',
      `query=${'%7B'.repeat(3000)}`,
      'variables=%7B%7D',
      'query=mutation%7BrevokeApiToken(id%3A%22x%22)%7Bid%7D%7D',
    ]) {
      await check(`GET /graphql?${search.slice(0, 40)}`, () => get(search), true);
    }
    expect(findings).toEqual([]);
  }, 120000);

  it('the subscription over graphql-ws refuses bad variables with coded errors and keeps the socket', async () => {
    const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const messages: any[] = [];
    const waiters: (() => void)[] = [];
    socket.on('message', (data) => {
      messages.push(JSON.parse((data as Buffer).toString()));
      waiters.splice(0).forEach((wake) => wake());
    });
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    const next = (test: (message: any) => boolean) =>
      new Promise<any>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no answer on the socket')), ANSWER_BOUND_MS);
        const look = () => {
          const found = messages.find(test);
          if (found) {
            clearTimeout(timer);
            resolve(found);
          } else waiters.push(look);
        };
        look();
      });
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${org.token}` } }));
    await next((m) => m.type === 'connection_ack');
    try {
      for (const [index, bad] of BAD_JSON_VALUES.entries()) {
        stats.tried += 1;
        const id = `bad-${index}`;
        const query = JSON.stringify('subscription ($p: ID) { postUpdated(postId: $p) { id } }');
        socket.send(`{"id":"${id}","type":"subscribe","payload":{"query":${query},"variables":{"p":${bad.json}}}}`);
        // A refused subscription answers `error`; an accepted one stays silent: a query sent after it answers first.
        socket.send(JSON.stringify({ id: `probe-${index}`, type: 'subscribe', payload: { query: '{ __typename }' } }));
        await next((m) => m.id === `probe-${index}` && m.type === 'complete');
        const refused = messages.find((m) => m.id === id && m.type === 'error');
        for (const error of refused?.payload ?? []) {
          if (!KNOWN_CODES.has(error.extensions?.code) || error.extensions.code === 'INTERNAL_SERVER_ERROR') {
            findings.push({ what: `postUpdated over graphql-ws ($p=${bad.kind})`, status: 0, body: JSON.stringify(error).slice(0, 300) });
          }
        }
        if (!refused) socket.send(JSON.stringify({ id, type: 'complete' }));
      }
      expect(socket.readyState).toBe(WebSocket.OPEN);
    } finally {
      socket.close();
      await closed;
    }
    expect(findings).toEqual([]);
  }, 120000);
});

// ---------------------------------------------------------------------------------------------------------------
// What Node and Fastify refuse before any route

describe('requests refused before any route', () => {
  it('answer in the documented generic shape', async () => {
    const cases: [string, string][] = [
      ['headers over 16 KB', `GET /organization HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`],
      ['a malformed request line', 'GARBAGE\r\n\r\n'],
      ['a control character in a header', 'GET /organization HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n'],
      ['an invalid Content-Length', 'POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
      ['a URL over 16 KB', `GET /post?q=${'a'.repeat(20000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
      ['bad percent-encoding in the path', 'GET /post/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
      ['an over-long path parameter', `GET /post/${'x'.repeat(500)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`],
      ['an unknown path', 'GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
      ['an unknown method on a known path', 'PUT /organization HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'],
      ['TRACE', 'TRACE /organization HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ];
    const statuses: Record<string, number> = {};
    for (const [what, raw] of cases) {
      await check(what, async () => {
        const answer = await sendRaw(raw);
        statuses[what] = answer.status;
        return answer;
      }, false);
    }
    expect(findings).toEqual([]);
    expect(statuses).toEqual({
      'headers over 16 KB': 431,
      'a malformed request line': 400,
      'a control character in a header': 400,
      'an invalid Content-Length': 400,
      'a URL over 16 KB': 431,
      'bad percent-encoding in the path': 400,
      'an over-long path parameter': 414,
      'an unknown path': 404,
      'an unknown method on a known path': 405,
      TRACE: 405,
    });
  });
});

describe('after all of it', () => {
  it('the server is healthy and answers good requests', async () => {
    expect((await http(t.url, 'GET', '/healthz')).status).toBe(200);
    expect((await http(t.url, 'GET', '/readyz')).status).toBe(200);
    const organization = await http(t.url, 'GET', '/organization', { token: org.token });
    expect(organization.status).toBe(200);
    const created = await http(t.url, 'POST', `/post?account_id=${ids.accountId}`, {
      token: org.token,
      body: { location_id: ids.locationId, params: { summary: 'Still fine' } },
    });
    expect(created.status).toBe(202);
    expect(stats.serverErrors).toBe(0);
  });
});
