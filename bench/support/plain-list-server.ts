/**
 * The baseline of bench/lists, run as its own process: a bare Fastify route on a bare pg pool doing the work of
 * `GET /post?account_id=…&per_page=…` (token by hash, cached for 30 s as the service does; account check; page;
 * count) and answering the same bytes. Written by hand on purpose: it is what the service is measured against.
 * Usage: node plain-list-server.js <database url>; prints `listening <url>` when ready; stops on SIGTERM.
 */
import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import { Pool } from 'pg';

const pool = new Pool({ connectionString: process.argv[2], max: 10 });
const app = Fastify({ logger: false });

interface TokenRow {
  organization_id: string;
  account_id: string | null;
}
const tokens = new Map<string, { row: TokenRow; until: number }>();

/** The document's key order of `params` (the REST fragment's selection order). */
const PARAM_KEYS = ['languageCode', 'summary', 'topicType', 'callToAction', 'media', 'event', 'offer', 'scheduledTime', 'alertType'];

function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]));
  }
  return value;
}

function params(stored: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of PARAM_KEYS) if (stored[key] !== undefined && stored[key] !== null) out[key] = withoutNulls(stored[key]);
  return out;
}

const ms = (value: Date | null) => (value === null ? null : value.getTime());

app.get<{ Querystring: { account_id?: string; per_page?: string; page?: string } }>('/post', async (request, reply) => {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  if (!match) return reply.code(401).send({ error: 401, message: 'Missing, unknown or revoked bearer token' });
  const hash = createHash('sha256').update(match[1]!).digest('hex');
  let token = tokens.get(hash);
  if (!token || token.until < Date.now()) {
    const { rows } = await pool.query<TokenRow>(
      `select t.organization_id, t.account_id, o.beta_api, o.citations_api
         from api_token t join organization o on o.id = t.organization_id
        where t.token_hash = $1 and t.revoked_at is null`,
      [hash],
    );
    if (!rows[0]) return reply.code(401).send({ error: 401, message: 'Missing, unknown or revoked bearer token' });
    tokens.set(hash, (token = { row: rows[0], until: Date.now() + 30_000 }));
  }
  let accountId = token.row.account_id;
  if (!accountId) {
    accountId = request.query.account_id ?? null;
    const { rows } = await pool.query('select 1 from account where id = $1 and organization_id = $2', [accountId, token.row.organization_id]);
    if (rows.length === 0) return reply.code(404).send({ error: 404, message: 'Account not found' });
  }
  const perPage = Number(request.query.per_page ?? 20);
  const page = Number(request.query.page ?? 1);
  const where = `account_id = $1 and state <> 'DELETED' and campaign_id is null`;
  const [list, count] = await Promise.all([
    pool.query(
      `select id, provider_name, location_id, account_id, state, source, created_at, published_time, updated_at,
              scheduled_time, search_url, last_error, params
         from post where ${where} order by created_at desc, id desc limit $2 offset $3`,
      [accountId, perPage, (page - 1) * perPage],
    ),
    pool.query<{ found: number }>(`select count(*)::int as found from post where ${where}`, [accountId]),
  ]);
  const posts = list.rows.map((row) => ({
    id: row.id,
    post_id: row.provider_name,
    location_id: row.location_id,
    account: row.account_id,
    state: row.state,
    source: row.source,
    create_time: ms(row.created_at),
    published_time: ms(row.published_time),
    update_time: ms(row.updated_at),
    scheduled_time: ms(row.scheduled_time),
    search_url: row.search_url,
    last_error: row.last_error
      ? { status: row.last_error.status, reason: row.last_error.reason, message: row.last_error.message, details: row.last_error.details, at: Date.parse(row.last_error.at) }
      : null,
    params: params(row.params),
  }));
  return reply
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ success: true, payload: { found: count.rows[0]!.found, page, per_page: perPage, posts } }));
});

process.once('SIGTERM', () => {
  void app.close().then(() => pool.end()).then(() => process.exit(0));
});

void app.listen({ port: 0, host: '127.0.0.1' }).then((url) => {
  process.stdout.write(`listening ${url}\n`);
});
