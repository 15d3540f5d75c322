/**
 * The baseline of bench/lists, run as its own process: bare Fastify routes on a bare pg pool doing the work of
 * `GET /post?account_id=…&per_page=…` (token by hash, cached for 30 s as the service does; account check; page;
 * count) and of `GET /location?account_id=…&per_page=…` (the same, and the per-token read limit counted by the
 * service's own `consume_rate_limit` statement), answering the same bytes. Written by hand on purpose: it is what
 * the service is measured against.
 * Usage: node plain-list-server.js <database url> [location read limit per minute]; prints `listening <url>` when
 * ready; stops on SIGTERM.
 */
import { createHash } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { Pool } from 'pg';

const pool = new Pool({ connectionString: process.argv[2], max: 10 });
/** LOCATION_READ_RATE_LIMIT_PER_MINUTE of the stack (the service's default when not given). */
const locationReadLimit = Number(process.argv[3] ?? 300);
const app = Fastify({ logger: false });

interface TokenRow {
  id: string;
  organization_id: string;
  account_id: string | null;
}
const tokens = new Map<string, { row: TokenRow; until: number }>();

const UNAUTHENTICATED = { error: 401, message: 'Missing, unknown or revoked bearer token' };

/** The token's row by the SHA-256 of the bearer secret, cached 30 s; undefined (and a 401 sent) when unknown. */
async function tokenOf(request: FastifyRequest, reply: FastifyReply): Promise<TokenRow | undefined> {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  if (!match) {
    void reply.code(401).send(UNAUTHENTICATED);
    return undefined;
  }
  const hash = createHash('sha256').update(match[1]!).digest('hex');
  let token = tokens.get(hash);
  if (!token || token.until < Date.now()) {
    const { rows } = await pool.query<TokenRow>(
      `select t.id, t.organization_id, t.account_id, o.beta_api, o.citations_api
         from api_token t join organization o on o.id = t.organization_id
        where t.token_hash = $1 and t.revoked_at is null`,
      [hash],
    );
    if (!rows[0]) {
      void reply.code(401).send(UNAUTHENTICATED);
      return undefined;
    }
    tokens.set(hash, (token = { row: rows[0], until: Date.now() + 30_000 }));
  }
  return token.row;
}

/** The account the request lists: an account token's own, or account_id checked against the organization. */
async function accountOf(token: TokenRow, accountId: string | undefined, reply: FastifyReply): Promise<string | undefined> {
  if (token.account_id) return token.account_id;
  const { rows } = await pool.query('select 1 from account where id = $1 and organization_id = $2', [accountId ?? null, token.organization_id]);
  if (rows.length === 0) {
    void reply.code(404).send({ error: 404, message: 'Account not found' });
    return undefined;
  }
  return accountId;
}

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

/** A row of the post page: what is converted is typed, what is passed on stays `unknown`. */
interface PostRow {
  id: unknown;
  provider_name: unknown;
  location_id: unknown;
  account_id: unknown;
  state: unknown;
  source: unknown;
  created_at: Date | null;
  published_time: Date | null;
  updated_at: Date | null;
  scheduled_time: Date | null;
  search_url: unknown;
  last_error: { status: unknown; reason: unknown; message: unknown; details: unknown; at: string } | null;
  params: Record<string, unknown>;
}

app.get<{ Querystring: { account_id?: string; per_page?: string; page?: string } }>('/post', async (request, reply) => {
  const token = await tokenOf(request, reply);
  if (!token) return reply;
  const accountId = await accountOf(token, request.query.account_id, reply);
  if (!accountId) return reply;
  const perPage = Number(request.query.per_page ?? 20);
  const page = Number(request.query.page ?? 1);
  const where = `account_id = $1 and state <> 'DELETED' and campaign_id is null`;
  const [list, count] = await Promise.all([
    pool.query<PostRow>(
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

// ---- GET /location ----------------------------------------------------------------------------------------------

interface TimeOfDay {
  hours: string;
  minutes?: string | null;
}
interface Period {
  openDay?: string | null;
  openTime?: TimeOfDay | null;
  closeDay?: string | null;
  closeTime?: TimeOfDay | null;
}
interface Special {
  openDate: string;
  closeDate?: string | null;
  isClosed: boolean;
  openTime?: TimeOfDay | null;
  closeTime?: TimeOfDay | null;
}
interface Category {
  name: string;
  displayName: string;
}

const time = (value: TimeOfDay | null | undefined) => (value ? { hours: value.hours, minutes: value.minutes ?? null } : null);
const period = (value: Period) => ({
  open_day: value.openDay ?? null,
  open_time: time(value.openTime),
  close_day: value.closeDay ?? null,
  close_time: time(value.closeTime),
});
const category = (value: Category) => ({ name: value.name, displayName: value.displayName });

/** The document's categories: camelCase as the provider writes them, members that are null left out. */
function categories(value: { primaryCategory?: Category | null; additionalCategories?: Category[] | null } | null): unknown {
  if (value === null) return null;
  const out: Record<string, unknown> = {};
  if (value.primaryCategory) out.primaryCategory = category(value.primaryCategory);
  if (value.additionalCategories) out.additionalCategories = value.additionalCategories.map(category);
  return out;
}

/** A row of LOCATION_COLUMNS and the page's `found`: what is converted is typed, what is passed on stays `unknown`. */
interface LocationRow {
  id: unknown;
  reference_id: unknown;
  name: unknown;
  category_id: unknown;
  address: unknown;
  postal: unknown;
  city: unknown;
  country_code: unknown;
  administrative_area: unknown;
  additional_address_lines: unknown;
  description: unknown;
  phone_number: unknown;
  additional_phone_numbers: unknown;
  website_uri: unknown;
  latitude: unknown;
  longitude: unknown;
  regular_hours: Period[];
  special_hours: Special[];
  more_hours: { hoursTypeId: string; periods: Period[] }[];
  categories: { primaryCategory?: Category | null; additionalCategories?: Category[] | null } | null;
  service_items: unknown;
  service_area: unknown;
  citations_status: unknown;
  connected: unknown;
  alpha_location_name: unknown;
  created_at: Date | null;
  updated_at: Date | null;
  /** count(*) over (): a bigint, which pg reads as a string. */
  found: string;
}

const LOCATION_COLUMNS = `id, reference_id, name, category_id, address, postal, city, country_code, administrative_area,
  additional_address_lines, description, phone_number, additional_phone_numbers, website_uri, latitude, longitude,
  regular_hours, special_hours, more_hours, categories, service_items, service_area, citations_status, connected,
  alpha_location_name, created_at, updated_at`;

app.get<{ Querystring: { account_id?: string; per_page?: string; page?: string } }>('/location', async (request, reply) => {
  const token = await tokenOf(request, reply);
  if (!token) return reply;
  const accountId = await accountOf(token, request.query.account_id, reply);
  if (!accountId) return reply;
  // The per-token read limit, by the service's own statement and bucket (src/limits/request-limits.ts).
  const { rows: windows } = await pool.query<{ admitted: boolean }>('select * from consume_rate_limit($1, $2, $3)', [
    `location-reads:${token.id}`,
    locationReadLimit,
    60,
  ]);
  if (!windows[0]!.admitted) return reply.code(429).send({ error: 429, message: 'Rate limit exceeded' });
  const perPage = Number(request.query.per_page ?? 10);
  const page = Number(request.query.page ?? 1);
  // The page and the number of matches in one statement, as the service reads them; the count alone past the end.
  const { rows } = await pool.query<LocationRow>(
    `select ${LOCATION_COLUMNS}, count(*) over () as found from location where account_id = $1 order by id asc limit $2 offset $3`,
    [accountId, perPage, (page - 1) * perPage],
  );
  const found =
    rows.length > 0
      ? Number(rows[0]!.found)
      : (await pool.query<{ found: number }>('select count(*)::int as found from location where account_id = $1', [accountId])).rows[0]!.found;
  const data = rows.map((row) => ({
    id: row.id,
    reference_id: row.reference_id,
    name: row.name,
    category_id: row.category_id,
    address: row.address,
    postal: row.postal,
    city: row.city,
    country_code: row.country_code,
    administrative_area: row.administrative_area,
    additional_address_lines: row.additional_address_lines,
    description: row.description,
    phone_number: row.phone_number,
    additional_phone_numbers: row.additional_phone_numbers,
    website_uri: row.website_uri,
    latitude: row.latitude,
    longitude: row.longitude,
    regular_hours: row.regular_hours.map(period),
    special_hours: row.special_hours.map((item) => ({
      open_date: item.openDate,
      close_date: item.closeDate ?? null,
      is_closed: item.isClosed,
      open_time: time(item.openTime),
      close_time: time(item.closeTime),
    })),
    more_hours: row.more_hours.map((item) => ({ hoursTypeId: item.hoursTypeId, periods: item.periods.map(period) })),
    categories: categories(row.categories),
    service_items: row.service_items,
    service_area: row.service_area,
    citations_status: row.citations_status,
    connected: row.connected,
    alpha_location_name: row.alpha_location_name,
    created_at: ms(row.created_at),
    updated_at: ms(row.updated_at),
  }));
  return reply.type('application/json; charset=utf-8').send(JSON.stringify({ success: true, data, found, page, per_page: perPage }));
});

process.once('SIGTERM', () => {
  void app.close().then(() => pool.end()).then(() => process.exit(0));
});

void app.listen({ port: 0, host: '127.0.0.1' }).then((url) => {
  process.stdout.write(`listening ${url}\n`);
});
