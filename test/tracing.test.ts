import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { openDatabase } from '../src/db/orm';
import { createPostgresEventBus, type EventBus } from '../src/events/event-bus';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { eventually, pollPost } from './support/posts';
import { childEnv, ROOT, startServerProcess, type ServerProcess } from './support/process';
import { createTestDatabase } from './support/stack';
import { postProbe, subscribe } from './support/ws';
import { composition } from '../src/modules';

/**
 * OpenTelemetry traces, as an operator's collector receives them: a real server process (the instrumentations patch
 * modules as they load, which an in-process stack under Jest cannot show) exports OTLP/HTTP JSON to a receiver this
 * test runs, and the test reads the tree one `POST /post` made, from the request through its SQL to the job it
 * enqueued, the job's provider call and the event its subscribers heard.
 */

const UP = /GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/;

let database: { url: string; drop(): Promise<void> };
let dataDir: string;
let org: OrganizationFixture;
let receiver: OtlpReceiver;
/** The test's own connection to the deployment's event bus, for the subscription's probes. */
let events: EventBus;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), 'lg-tracing-'));
  const opened = await openDatabase(database.url, { entities: composition.entities });
  try {
    org = await createOrganizationFixture(opened.orm.em.fork(), { accounts: 1, locationsEach: 1, connected: true });
  } finally {
    await opened.close();
  }
  receiver = await startOtlpReceiver();
  events = await createPostgresEventBus(database.url, pino({ level: 'silent' }));
});

afterAll(async () => {
  await events?.close();
  for (const server of servers) {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
    await server.exited();
  }
  await receiver?.close();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startServer(env: Record<string, string>): Promise<{ server: ServerProcess; url: string }> {
  const server = startServerProcess({ DATABASE_URL: database.url, DATA_DIR: dataDir, PORT: '0', SANDBOX: 'on', ...env });
  servers.push(server);
  const [, url] = (await server.waitFor(UP, 60000)) as unknown as [string, string];
  return { server, url };
}

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited()).toBe(0);
}

/** Creates a post over REST while a subscriber follows its location, and waits until it is LIVE and heard so. */
async function postAndFollow(url: string): Promise<{ requestId: string }> {
  const account = org.accounts[0]!;
  const locationId = account.locations[0]!.id;
  const probe = postProbe(events, { organizationId: org.organization.id, accountId: account.account.id, locationId });
  const watcher = await subscribe(url, org.token, 'subscription Follow($l: ID) { postUpdated(locationId: $l) { id state version } }', { l: locationId }, probe);
  try {
    const created = await http(url, 'POST', `/post?account_id=${account.account.id}`, {
      token: org.token,
      body: { location_id: locationId, params: { topicType: 'STANDARD', summary: 'Traced from end to end', languageCode: 'en' } },
    });
    expect(created.status).toBe(202);
    const postId = created.body.payload.id as string;
    await pollPost(url, org.token, account.account.id, postId, (post) => post.state === 'LIVE');
    const heard = await watcher.waitFor(2);
    expect(heard.map((event) => event.postUpdated)).toEqual([
      { id: postId, state: 'SENDING', version: 1 },
      { id: postId, state: 'LIVE', version: 2 },
    ]);
    return { requestId: created.headers.get('x-request-id')! };
  } finally {
    await watcher.close();
  }
}

/** The spans of one trace, with what the assertions ask of a tree. */
class Trace {
  private readonly byId: Map<string, ReceivedSpan>;

  constructor(readonly spans: ReceivedSpan[]) {
    this.byId = new Map(spans.map((span) => [span.spanId, span]));
  }

  /** Is `ancestor` on the parent chain of `span`? */
  descends(span: ReceivedSpan, ancestor: ReceivedSpan): boolean {
    for (let parent = span.parentSpanId; parent !== undefined; parent = this.byId.get(parent)?.parentSpanId) {
      if (parent === ancestor.spanId) return true;
    }
    return false;
  }

  /** The tree as indented lines (name, kind, scope), for a failure's message. */
  render(): string {
    const lines: string[] = [];
    const walk = (parent: string | undefined, depth: number) => {
      for (const span of this.spans.filter((candidate) => (parent === undefined ? !candidate.parentSpanId || !this.byId.has(candidate.parentSpanId) : candidate.parentSpanId === parent))) {
        lines.push(`${'  '.repeat(depth)}${span.name} [kind ${span.kind}, ${span.scope}]`);
        walk(span.spanId, depth + 1);
      }
    };
    walk(undefined, 0);
    return lines.join('\n');
  }

  /** The spans that match, below `ancestor` when one is given. */
  find(match: (span: ReceivedSpan) => boolean, ancestor?: ReceivedSpan): ReceivedSpan[] {
    return this.spans.filter((span) => match(span) && (!ancestor || this.descends(span, ancestor)));
  }

  /** The one span that matches (below `ancestor`); undefined while it has not arrived. */
  one(match: (span: ReceivedSpan) => boolean, ancestor?: ReceivedSpan): ReceivedSpan | undefined {
    const found = this.find(match, ancestor);
    if (found.length > 1) throw new Error(`${found.length} spans match where one was expected: ${found.map((span) => span.name).join(', ')}`);
    return found[0];
  }
}

/** The alpha provider's create call: POST …/localPosts (its query names the request id). */
const isLocalPostsCall = (span: ReceivedSpan) =>
  span.kind === SPAN_KIND.CLIENT && span.attributes['http.request.method'] === 'POST' && new URL(String(span.attributes['url.full'])).pathname.endsWith('/localPosts');
const isSql = (span: ReceivedSpan) => span.kind === SPAN_KIND.CLIENT && span.attributes['db.system.name'] === 'postgresql';
const sqlText = (span: ReceivedSpan) => String(span.attributes['db.query.text'] ?? '').toLowerCase();

/** The trace of the request with this id (its Fastify span carries it as lg.request_id); undefined until it arrives. */
function traceOf(requestId: string): Trace | undefined {
  const spans = receiver.spans();
  const tagged = spans.find((span) => span.attributes['lg.request_id'] === requestId && span.scope === '@fastify/otel');
  return tagged && new Trace(spans.filter((span) => span.traceId === tagged.traceId));
}

/** `wait`, and when it fails, the trace received so far in its message. */
async function withTrace<T>(requestId: string, wait: () => Promise<T>): Promise<T> {
  try {
    return await wait();
  } catch (error) {
    throw new Error(`${(error as Error).message}; the request's trace so far:\n${traceOf(requestId)?.render() ?? '(none)'}`);
  }
}

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let server: ServerProcess;
  let url: string;

  beforeAll(async () => {
    ({ server, url } = await startServer({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Exported a tenth of a second after they end: the test waits for spans, not for the default five seconds.
      OTEL_BSP_SCHEDULE_DELAY: '100',
      // The request's log lines, to find their trace id.
      LOG_LEVEL: 'info',
    }));
  }, 90000);
  afterAll(() => stop(server));

  it('makes one trace of POST /post: the request, its GraphQL operation and SQL, the job it enqueued, the job’s provider call and SQL, and the events subscribers heard', async () => {
    const { requestId } = await postAndFollow(url);

    // Spans arrive in batches as they end: waited for until every part of the tree is there.
    const { tree, request, operation, job, providerCall } = await withTrace(requestId, () => eventually(
      async () => {
        const tree = traceOf(requestId);
        if (!tree) return undefined;
        const request = tree.one((span) => span.kind === SPAN_KIND.SERVER && span.name === 'POST /post');
        const operation = request && tree.one((span) => span.name === 'mutation RestCreatePost', request);
        const job = operation && tree.one((span) => span.name === 'job post-publish', operation);
        const providerCall = job && tree.one((span) => isLocalPostsCall(span), job);
        const eventsHeard = tree.find((span) => span.name === 'event post.updated');
        // SENDING, announced by the request; LIVE, by the job.
        if (!providerCall || eventsHeard.length < 2) return undefined;
        return { tree, request, operation, job, providerCall };
      },
      20000,
      'the whole trace of POST /post',
    ));

    // The request: the HTTP server span, named by its route, its status, and our request id on the Fastify span below it.
    expect(request.parentSpanId).toBeUndefined();
    expect(new Set(tree.spans.map((span) => span.service))).toEqual(new Set(['listings-gateway']));
    expect(request.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/post', 'http.response.status_code': 202 });
    expect(tree.one((span) => span.scope === '@fastify/otel' && span.attributes['lg.request_id'] === requestId, request)).toBeDefined();

    // The REST route's GraphQL operation (run by graphql-jit, spanned as the GraphQL instrumentation spans /graphql's),
    // and under it the SQL that stored the post and its job, in one statement (docs/write-path.md).
    expect(operation.attributes).toMatchObject({ 'graphql.operation.type': 'mutation', 'graphql.operation.name': 'RestCreatePost' });
    const requestSql = tree.find(isSql, operation).map(sqlText);
    expect(requestSql.some((text) => text.includes('insert into "post"'))).toBe(true);
    expect(requestSql.some((text) => /insert into pgboss\.job/.test(text))).toBe(true);
    // No statement's values are recorded: only the statement text with its placeholders.
    expect(requestSql.join('\n')).not.toContain('Traced from end to end');

    // The job: a consumer span in the request's trace, below the operation that enqueued it.
    expect(job.kind).toBe(SPAN_KIND.CONSUMER);
    expect(job.attributes).toMatchObject({
      'messaging.system': 'pg-boss',
      'messaging.destination.name': 'post-publish',
      'lg.request_id': requestId,
      'lg.job.retry_count': 0,
    });
    expect(job.status).not.toBe(2);
    // Its provider call (fetch: undici) and its SQL: the post read and moved to LIVE.
    expect(providerCall.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 200 });
    expect(tree.find(isSql, job).map(sqlText).some((text) => text.includes('update "post"'))).toBe(true);
    // The trace context went out with the call: the provider's side (the sandbox, on this server) continues it.
    expect(tree.find((span) => span.kind === SPAN_KIND.SERVER && span.parentSpanId === providerCall.spanId)).toHaveLength(1);

    // The events that reached the subscriber: SENDING in the request's part of the trace, LIVE in the job's.
    const heard = tree.find((span) => span.name === 'event post.updated');
    for (const event of heard) {
      expect(event.kind).toBe(SPAN_KIND.CONSUMER);
      expect(event.attributes).toMatchObject({ 'messaging.destination.name': 'post.updated' });
    }
    expect(heard.filter((event) => tree.descends(event, operation) && !tree.descends(event, job)).length).toBeGreaterThanOrEqual(1);
    expect(heard.filter((event) => tree.descends(event, job)).length).toBeGreaterThanOrEqual(1);

    // The request's log lines carry its trace id.
    const lines = server.output().split('\n').filter((line) => line.includes(requestId)).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.reqId === requestId && line.trace_id === request.traceId).length).toBeGreaterThan(0);
  }, 60000);

  it('traces a GraphQL request: its server span, the execution named by the operation, its SQL', async () => {
    const answer = await graphql(url, 'query TracedOrganization { organization { id } }', { token: org.token });
    expect(answer.status).toBe(200);
    const requestId = answer.headers.get('x-request-id')!;
    const { tree, execution } = await eventually(async () => {
      const tree = traceOf(requestId);
      const request = tree?.one((span) => span.kind === SPAN_KIND.SERVER && span.name === 'POST /graphql');
      const execution = request && tree!.one((span) => span.name === 'query TracedOrganization', request);
      return execution && tree!.find(isSql, execution).length > 0 ? { tree: tree!, execution } : undefined;
    }, 20000, 'the trace of a GraphQL request');
    expect(execution.attributes).toMatchObject({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'TracedOrganization' });
    expect(tree.find(isSql, execution).map(sqlText).some((text) => text.includes('"organization"'))).toBe(true);
    // No resolver spans: making them costs every field of every list item (docs/operations.md).
    expect(tree.find((span) => span.name.startsWith('graphql.resolve'))).toEqual([]);
  }, 30000);

  it('leaves health probes and scrapes out, and no OAuth code reaches a span', async () => {
    const before = receiver.spans().length;
    expect((await http(url, 'GET', '/healthz')).status).toBe(200);
    // A callback with a code (its state is unknown: refused), then a request whose trace shows that all before it was exported.
    const callback = await fetch(`${url}/oauth/alpha/callback?code=secret-code-123&state=unknown-state`, { redirect: 'manual' });
    const callbackId = callback.headers.get('x-request-id')!;
    const marker = await graphql(url, 'query Marker { organization { id } }', { token: org.token });
    const markerId = marker.headers.get('x-request-id')!;
    await eventually(async () => (traceOf(markerId) && traceOf(callbackId) ? true : undefined), 20000, 'the callback’s and the marker’s traces');
    const since = receiver.spans().slice(before);
    expect(since.filter((span) => String(span.attributes['url.path'] ?? '').startsWith('/healthz'))).toEqual([]);
    expect(JSON.stringify(since)).not.toContain('secret-code-123');
    const callbackSpan = traceOf(callbackId)!.one((span) => span.kind === SPAN_KIND.SERVER);
    expect(callbackSpan!.attributes).toMatchObject({ 'url.path': '/oauth/alpha/callback', 'url.query': 'code=REDACTED&state=REDACTED' });
  }, 30000);
});

describe('a clean stop', () => {
  it('exports the spans still waiting for their batch', async () => {
    const { server, url } = await startServer({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // A batch would wait a minute: only the stop's flush can send this one in time.
      OTEL_BSP_SCHEDULE_DELAY: '60000',
    });
    const answer = await graphql(url, 'query LastOne { organization { id } }', { token: org.token });
    const requestId = answer.headers.get('x-request-id')!;
    expect(traceOf(requestId)).toBeUndefined();
    await stop(server);
    expect(traceOf(requestId)?.one((span) => span.name === 'query LastOne')).toBeDefined();
  }, 90000);
});

describe('with OTEL_EXPORTER_OTLP_ENDPOINT unset', () => {
  it('sends nothing, though other OTEL_* variables name a collector, and the service works as ever', async () => {
    const silent = await startOtlpReceiver();
    try {
      const { server, url } = await startServer({
        // The traces' own endpoint alone does not turn tracing on: OTEL_EXPORTER_OTLP_ENDPOINT does.
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${silent.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        LOG_LEVEL: 'info',
      });
      const { requestId } = await postAndFollow(url);
      // A clean stop would export whatever was left: after it, nothing can come any more.
      await stop(server);
      expect(silent.requests()).toBe(0);
      const lines = server.output().split('\n').filter((line) => line.includes(requestId));
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.filter((line) => line.includes('trace_id'))).toEqual([]);
    } finally {
      await silent.close();
    }
  }, 90000);

  it('loads neither the SDK nor any instrumentation: only the API, whose calls are no-ops', async () => {
    /** The OpenTelemetry packages a process has loaded once its entry started tracing (or not) and loaded the stack. */
    const loaded = async (env: Record<string, string>): Promise<string[]> => {
      const script = `
        const { loadConfig } = require('./dist/src/config');
        const { startTracing } = require('./dist/src/observability/tracing');
        startTracing(loadConfig()).then(() => {
          require('./dist/src/stack');
          const names = Object.keys(require.cache)
            .map((file) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file)?.[1])
            .filter((name) => name && /^@opentelemetry\\/|^@fastify\\/otel$|-in-the-middle$/.test(name));
          console.log(JSON.stringify([...new Set(names)].sort()));
          process.exit(0);
        });`;
      const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: ROOT, env: childEnv(env) });
      return JSON.parse(stdout) as string[];
    };
    expect(await loaded({})).toEqual(['@opentelemetry/api']);
    // The same check sees them when tracing is on.
    expect(await loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })).toEqual(
      expect.arrayContaining(['@opentelemetry/sdk-node', '@opentelemetry/instrumentation-pg', '@fastify/otel', 'require-in-the-middle']),
    );
  }, 30000);
});
