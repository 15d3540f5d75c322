/**
 * The plain pipeline of bench/posts and bench/locations, run as its own process: node:http and bare `pg`, no ORM, no
 * GraphQL, on its own tables (schema `plain_bench`, made at start) in the stack's database, doing the durable work
 * of the service by hand. What the service is measured against (docs/benchmarks.md, "The plain pipeline"):
 *
 * - `POST /post?account_id=…` (the service's body): the token (by hash, cached 30 s as the service caches it), the
 *   body checked, then one statement (one implicit transaction) inserting the post (SENDING) and its job, with a
 *   NOTIFY of the SENDING change; 202 `{success, payload: {id, state}}`.
 * - `PATCH /location/update?account_id=…&location_id=…` `{"description"}`: the same for a location update
 *   (QUEUED; one unfinished per location, by the service's own unique index); 200 `{success, payload: {id}}`.
 * - workers: per kind, `--loops` loops taking up to `--batch` jobs with `FOR UPDATE SKIP LOCKED`, woken by the
 *   NOTIFY of a new job (or a 1 s poll), calling the alpha sandbox as the service's workers do, then one statement
 *   per job marking its row LIVE (SUCCEEDED) and completing the job, with a NOTIFY of the change.
 * - `GET /events`: every NOTIFY of the pipeline as a line of JSON, to each open request (the subscriber).
 *
 * Usage: node plain-pipeline-server.js <database url> <alpha sandbox url> [batch] [loops]; prints `listening <url>`.
 */
import { createHash } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Pool } from 'pg';

const [databaseUrl, alphaUrl] = [process.argv[2]!, process.argv[3]!];
const BATCH = Number(process.argv[4] ?? 8);
const LOOPS = Number(process.argv[5] ?? 2);
/** The service's default ALPHA_ACCESS_TOKEN: the demo's accounts have no identity of their own. */
const ACCESS_TOKEN = process.env.ALPHA_ACCESS_TOKEN ?? 'sandbox-access-token';
const pool = new Pool({ connectionString: databaseUrl, max: 10 });

// The service's own tables' shapes (`like … including all`: columns, defaults, checks, indexes), so a row costs
// what it costs there; the job table is the minimum a queue needs.
const SCHEMA = `
drop schema if exists plain_bench cascade;
create schema plain_bench;
create table plain_bench.location (like public.location including all);
alter table plain_bench.location add column organization_id uuid, add column alpha_body jsonb;
create table plain_bench.post (like public.post including all);
create table plain_bench.location_update_job (like public.location_update_job including all);
create table plain_bench.job (id bigserial primary key, kind text not null, ref uuid not null, state text not null default 'created',
  created_at timestamptz not null default now(), started_at timestamptz, finished_at timestamptz);
create index job_ready on plain_bench.job (kind, id) where state = 'created';
insert into plain_bench.location
  select l.*, a.organization_id, null from public.location l join public.account a on a.id = l.account_id
   where l.connected and l.alpha_location_name is not null;
`;

const POST_CHANNEL = 'plain_bench_post';
const UPDATE_CHANNEL = 'plain_bench_location_update';

const CREATE_POST = `
with post as (
  insert into plain_bench.post (id, organization_id, account_id, location_id, state, source, params, created_at, updated_at)
  select gen_random_uuid(), l.organization_id, l.account_id, l.id, 'SENDING', 'external_api', $4, now(), now()
    from plain_bench.location l where l.id = $1 and l.account_id = $2 and l.organization_id = $3
  returning id, state, updated_at),
job as (insert into plain_bench.job (kind, ref) select 'post', id from post)
select id, state, pg_notify('${POST_CHANNEL}', json_build_object('id', id, 'state', state, 'updateTime', updated_at)::text) from post`;

const TAKE_POSTS = `
with taken as (
  update plain_bench.job set state = 'active', started_at = now()
   where id in (select id from plain_bench.job where kind = 'post' and state = 'created' order by id limit $1 for update skip locked)
  returning id, ref)
select taken.id as job_id, p.id, p.params, l.alpha_location_name
  from taken join plain_bench.post p on p.id = taken.ref join plain_bench.location l on l.id = p.location_id`;

const FINISH_POST = `
with post as (
  update plain_bench.post set state = $2, provider_name = $3, search_url = $4, published_time = case when $2 = 'LIVE' then now() end,
         pending_action = null, updated_at = now(), version = version + 1
   where id = $1 and state = 'SENDING' returning id, state, updated_at),
job as (update plain_bench.job set state = 'completed', finished_at = now() where id = $5)
select pg_notify('${POST_CHANNEL}', json_build_object('id', id, 'state', state, 'updateTime', updated_at)::text) from post`;

const UPDATE_EVENT = `json_build_object('id', u.id, 'locationId', u.location_id, 'status', u.status, 'version', u.version,
  'createdAt', u.created_at, 'startedAt', u.started_at, 'finishedAt', u.finished_at)::text`;

const CREATE_UPDATE = `
with u as (
  insert into plain_bench.location_update_job (id, organization_id, account_id, location_id, status, fields, changes, created_at)
  select gen_random_uuid(), l.organization_id, l.account_id, l.id, 'QUEUED', '{description}', $4, now()
    from plain_bench.location l where l.id = $1 and l.account_id = $2 and l.organization_id = $3
  on conflict do nothing
  returning *),
job as (insert into plain_bench.job (kind, ref) select 'location-update', id from u)
select u.id, pg_notify('${UPDATE_CHANNEL}', ${UPDATE_EVENT}) from u`;

const TAKE_UPDATES = `
with taken as (
  update plain_bench.job set state = 'active', started_at = now()
   where id in (select id from plain_bench.job where kind = 'location-update' and state = 'created' order by id limit $1 for update skip locked)
  returning id, ref),
u as (
  update plain_bench.location_update_job j set status = 'RUNNING', started_at = now(), version = version + 1
    from taken where j.id = taken.ref and j.status = 'QUEUED'
  returning j.*, taken.id as job_id)
select u.job_id, u.id, u.changes, l.alpha_location_name, l.alpha_body, pg_notify('${UPDATE_CHANNEL}', ${UPDATE_EVENT})
  from u join plain_bench.location l on l.id = u.location_id`;

const FINISH_UPDATE = `
with u as (
  update plain_bench.location_update_job set status = $2, error = $3, finished_at = now(), version = version + 1
   where id = $1 and status = 'RUNNING' returning *),
location as (
  update plain_bench.location l set description = u.changes->>'description', alpha_body = $4, updated_at = now()
    from u where l.id = u.location_id and u.status = 'SUCCEEDED'),
job as (update plain_bench.job set state = 'completed', finished_at = now() where id = $5)
select pg_notify('${UPDATE_CHANNEL}', ${UPDATE_EVENT}) from u`;

// ---- HTTP ---------------------------------------------------------------------------------------------------

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOPIC_TYPES = new Set(['STANDARD', 'EVENT', 'OFFER', 'ALERT']);

/** Text the database can store, of at most `max` characters. */
function text(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value.length > max || value.includes('\u0000')) throw new HttpError(400, `${field} must be text of at most ${max} characters`);
  return value;
}

function uuid(value: unknown, field: string): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw new HttpError(400, `${field} must be a UUID`);
  return value;
}

async function bodyOf(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 64 * 1024) throw new HttpError(413, 'body too large');
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'body must be JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'body must be an object');
  return body as Record<string, unknown>;
}

const tokens = new Map<string, { organizationId: string; until: number }>();

/** The token's organization, by the SHA-256 of the bearer secret in `api_token`, cached 30 s. */
async function organizationOf(request: IncomingMessage): Promise<string> {
  const secret = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (!secret) throw new HttpError(401, 'Missing, unknown or revoked bearer token');
  const hash = createHash('sha256').update(secret).digest('hex');
  let token = tokens.get(hash);
  if (!token || token.until < Date.now()) {
    const { rows } = await pool.query<{ organization_id: string }>('select organization_id from api_token where token_hash = $1 and revoked_at is null', [hash]);
    if (!rows[0]) throw new HttpError(401, 'Missing, unknown or revoked bearer token');
    tokens.set(hash, (token = { organizationId: rows[0].organization_id, until: Date.now() + 30_000 }));
  }
  return token.organizationId;
}

async function createPost(request: IncomingMessage, query: URLSearchParams): Promise<[number, unknown]> {
  const organizationId = await organizationOf(request);
  const accountId = uuid(query.get('account_id'), 'account_id');
  const body = await bodyOf(request);
  const locationId = uuid(body.location_id, 'location_id');
  const params = body.params as Record<string, unknown> | undefined;
  if (!params || typeof params !== 'object') throw new HttpError(400, 'params must be an object');
  if (!TOPIC_TYPES.has(params.topicType as string)) throw new HttpError(400, 'params.topicType must be one of STANDARD, EVENT, OFFER, ALERT');
  const summary = text(params.summary, 'params.summary', 1500);
  const { rows } = await pool.query<{ id: string; state: string }>(CREATE_POST, [locationId, accountId, organizationId, { topicType: params.topicType, summary }]);
  if (!rows[0]) throw new HttpError(404, 'Location not found in this account');
  return [202, { success: true, payload: { id: rows[0].id, state: rows[0].state } }];
}

async function createUpdate(request: IncomingMessage, query: URLSearchParams): Promise<[number, unknown]> {
  const organizationId = await organizationOf(request);
  const accountId = uuid(query.get('account_id'), 'account_id');
  const locationId = uuid(query.get('location_id'), 'location_id');
  const body = await bodyOf(request);
  const description = text(body.description, 'description', 750);
  const { rows } = await pool.query<{ id: string }>(CREATE_UPDATE, [locationId, accountId, organizationId, { description }]);
  if (rows[0]) return [200, { success: true, payload: { id: rows[0].id } }];
  // Only when refused: which of the two reasons.
  const known = await pool.query('select 1 from plain_bench.location where id = $1 and account_id = $2 and organization_id = $3', [locationId, accountId, organizationId]);
  throw known.rows.length === 0 ? new HttpError(404, 'Location not found in this account') : new HttpError(409, 'Another update of this location is in progress');
}

const subscribers = new Set<ServerResponse>();

async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  try {
    let answer: [number, unknown];
    if (request.method === 'POST' && url.pathname === '/post') answer = await createPost(request, url.searchParams);
    else if (request.method === 'PATCH' && url.pathname === '/location/update') answer = await createUpdate(request, url.searchParams);
    else if (request.method === 'GET' && url.pathname === '/events') {
      response.writeHead(200, { 'content-type': 'application/x-ndjson' });
      response.flushHeaders();
      subscribers.add(response);
      response.on('close', () => subscribers.delete(response));
      return;
    } else answer = [404, { success: false, error: 'no such route' }];
    response.writeHead(answer[0], { 'content-type': 'application/json' }).end(JSON.stringify(answer[1]));
  } catch (error) {
    const status = error instanceof HttpError ? error.status : 500;
    const message = error instanceof Error ? error.message : String(error);
    if (status === 500) console.error(error);
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, error: message }));
  }
}

// ---- workers ------------------------------------------------------------------------------------------------

/** A wake-up flag per kind: a NOTIFY that came while a loop was busy is not lost. */
class Wakeup {
  private pending = false;
  private waiters: (() => void)[] = [];

  notify(): void {
    this.pending = true;
    for (const wake of this.waiters.splice(0)) wake();
  }

  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        this.pending = false;
        resolve();
      });
    });
  }
}

let stopping = false;

async function workLoop(wakeup: Wakeup, take: (limit: number) => Promise<(() => Promise<void>)[]>): Promise<void> {
  while (!stopping) {
    try {
      const jobs = await take(BATCH);
      await Promise.all(jobs.map((job) => job()));
      // A full batch: more may be waiting, without a NOTIFY of their own to this loop.
      if (jobs.length < BATCH) await wakeup.wait(1000);
    } catch (error) {
      console.error(error);
      await wakeup.wait(1000);
    }
  }
}

/** One call to the alpha sandbox as the service's client makes it (bearer token, JSON both ways). */
async function alpha(method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${alphaUrl}/v4/${path}`, {
    method,
    headers: { authorization: `Bearer ${ACCESS_TOKEN}`, accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`alpha ${method} ${path}: HTTP ${response.status} ${JSON.stringify(answer).slice(0, 200)}`);
  return answer;
}

async function takePosts(limit: number): Promise<(() => Promise<void>)[]> {
  const { rows } = await pool.query<{ job_id: string; id: string; params: Record<string, unknown>; alpha_location_name: string }>(TAKE_POSTS, [limit]);
  return rows.map((row) => async () => {
    try {
      // What post.worker.ts publishPost sends: the local post, our post id as the request id.
      const remote = await alpha('POST', `${row.alpha_location_name}/localPosts?requestId=${row.id}`, row.params);
      const state = remote.state === 'LIVE' || remote.state === 'REJECTED' ? remote.state : 'PROCESSING';
      await pool.query(FINISH_POST, [row.id, state, remote.name ?? null, remote.searchUrl ?? null, row.job_id]);
    } catch (error) {
      console.error(String(error));
      await pool.query(FINISH_POST, [row.id, 'ERROR', null, null, row.job_id]);
    }
  });
}

async function takeUpdates(limit: number): Promise<(() => Promise<void>)[]> {
  const { rows } = await pool.query<{ job_id: string; id: string; changes: { description: string }; alpha_location_name: string; alpha_body: Record<string, unknown> }>(
    TAKE_UPDATES,
    [limit],
  );
  return rows.map((row) => async () => {
    // What location.worker.ts runLocationUpdate sends: the whole location with the change, the changed field's mask.
    const location = { ...row.alpha_body, profile: { ...(row.alpha_body.profile as object | undefined), description: row.changes.description } };
    try {
      await alpha('PATCH', `${row.alpha_location_name}?updateMask=profile.description`, location);
      await pool.query(FINISH_UPDATE, [row.id, 'SUCCEEDED', null, location, row.job_id]);
    } catch (error) {
      console.error(String(error));
      await pool.query(FINISH_UPDATE, [row.id, 'FAILED', { message: String(error) }, null, row.job_id]);
    }
  });
}

/** The provider's copy of each location it has (its output-only fields dropped): the body an update sends. */
async function loadAlphaBodies(): Promise<void> {
  const { rows } = await pool.query<{ id: string; alpha_location_name: string }>('select id, alpha_location_name from plain_bench.location');
  for (let start = 0; start < rows.length; start += 8) {
    await Promise.all(
      rows.slice(start, start + 8).map(async (row) => {
        const response = await fetch(`${alphaUrl}/v4/${row.alpha_location_name}`, { headers: { authorization: `Bearer ${ACCESS_TOKEN}` } });
        // One the sandbox no longer has (a reset keeps no location): posts need no body, and updates go elsewhere.
        if (!response.ok) return void (await response.arrayBuffer());
        const { name: _name, metadata: _metadata, ...body } = (await response.json()) as Record<string, unknown>;
        await pool.query('update plain_bench.location set alpha_body = $2 where id = $1', [row.id, body]);
      }),
    );
  }
}

async function main(): Promise<void> {
  await pool.query(SCHEMA);
  await loadAlphaBodies();
  const wakeups = { [POST_CHANNEL]: new Wakeup(), [UPDATE_CHANNEL]: new Wakeup() };
  const listener = new Client({ connectionString: databaseUrl });
  await listener.connect();
  listener.on('notification', ({ channel, payload }) => {
    // A new job's NOTIFY wakes its workers; every change goes to the subscribers.
    if (payload && (payload.includes('"SENDING"') || payload.includes('"QUEUED"'))) wakeups[channel as keyof typeof wakeups]?.notify();
    const line = `${payload ?? ''}\n`;
    for (const subscriber of subscribers) subscriber.write(line);
  });
  await listener.query(`listen ${POST_CHANNEL}; listen ${UPDATE_CHANNEL}`);
  const loops: Promise<void>[] = [];
  for (let i = 0; i < LOOPS; i++) {
    loops.push(workLoop(wakeups[POST_CHANNEL], takePosts), workLoop(wakeups[UPDATE_CHANNEL], takeUpdates));
  }
  const server = http.createServer((request, response) => void route(request, response));
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  process.on('SIGTERM', () => {
    stopping = true;
    for (const subscriber of subscribers) subscriber.end();
    for (const wakeup of Object.values(wakeups)) wakeup.notify();
    server.close();
    void Promise.all(loops)
      .then(() => listener.end())
      .then(() => pool.end())
      .finally(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
