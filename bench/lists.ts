/**
 * bench/lists: the list read paths against a plain baseline, in one run. `GET /post?account_id=…&per_page=20`
 * (REST) and GraphQL `postsPage` with the same fields, and `GET /location?account_id=…&per_page=250` and GraphQL
 * `locationsPage`, are timed against bare Fastify + pg routes doing the same work and answering the same bytes
 * (bench/support/plain-list-server.ts, in its own process), in interleaved rounds. The three answers of a list are
 * checked equal before anything is timed. A benchmark: it prints figures and never asserts.
 * `npm run bench:lists -- --help` lists the options; docs/benchmarks.md explains them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { sleep } from './support/abort';
import { cpuNow, cpuSince, type CpuReading } from './support/cpu';
import { decimalOption, integerOption, runBench, type BenchEnvironment } from './support/harness';
import { forkListening, type HelperProcess } from './support/helper-process';
import { describeJsonMismatch } from './support/json-diff';
import { startOtlpSink, type OtlpSink } from './support/otlp-sink';
import { seedLocations } from './support/locations';
import type { BenchStack, ServerProcess } from './support/stack';
import { ms, Samples, summarize, table, type Summary } from './support/stats';

const USAGE = `  --list L             posts, locations or both (default both): which lists are timed
  --posts N            posts created in the listed account before timing (default 40; 0: list what is there)
  --per-page N         page size of the post lists (default 20)
  --locations N        locations created in the listed account before timing (default 250; 0: list what is there)
  --location-per-page N  page size of the location lists (default 250, the most the route allows)
  --connections C      closed loops (keep-alive connections) per target (default 16)
  --seconds S          length of one target's turn in a round (default 5)
  --rounds R           rounds; each runs plain, REST and GraphQL, the order rotating (default 3)
  --warmup-s S         an untimed turn of each target before the first round (default 1; 0 skips it)
  --location-read-limit N  with --url: its LOCATION_READ_RATE_LIMIT_PER_MINUTE (default 300), which the plain
                       route counts against as the service does (both count in the token's one bucket)
  --observability      what metrics and tracing cost: the stack's server runs with METRICS=off and no tracing, and a
                       second server on the same database with METRICS=on and traces exported over OTLP (to a sink
                       of this run) is timed beside it, in the same rounds
  --trace-ratio R      with --observability: the share of requests traced on the observed server (default 1: every
                       one; 0.1 as a production might sample; 0: metrics only, no tracing)
`;

type ListName = 'posts' | 'locations';

interface Options {
  lists: ListName[];
  posts: number;
  perPage: number;
  locations: number;
  locationPerPage: number;
  /** With --url: the running stack's limit; otherwise the one of the stack the bench starts. */
  locationReadLimit: number | undefined;
  connections: number;
  seconds: number;
  rounds: number;
  warmupSeconds: number;
  observability: boolean;
  /** With --observability: the share of requests traced (0: the observed server has metrics only). */
  traceRatio: number;
}

/** The fields of src/rest/operations/post.graphql's RestPostFields: what the REST record presents. */
const POST_FIELDS = `id postId locationId accountId state source createTime publishedTime updateTime scheduledTime searchUrl
  lastError { status reason message details at }
  params { languageCode summary topicType callToAction { actionType url } media { mediaFormat sourceUrl }
    event { title schedule { startDate { year month day } endDate { year month day } startTime { hours minutes seconds } endTime { hours minutes seconds } } }
    offer { couponCode redeemOnlineUrl termsConditions } scheduledTime alertType }`;
const LIST_QUERY = `query BenchList($accountId: ID, $perPage: Int) { postsPage(accountId: $accountId, perPage: $perPage) { found page perPage posts { ${POST_FIELDS} } } }`;

/** The fields of src/rest/operations/location.graphql's RestLocationFields: what the REST record presents. */
const HOURS_PERIOD_FIELDS = 'openDay openTime { hours minutes } closeDay closeTime { hours minutes }';
const LOCATION_FIELDS = `id referenceId name categoryId address postal city countryCode administrativeArea additionalAddressLines
  description phoneNumber additionalPhoneNumbers websiteUri latitude longitude
  regularHours { ${HOURS_PERIOD_FIELDS} }
  specialHours { openDate closeDate isClosed openTime { hours minutes } closeTime { hours minutes } }
  moreHours { hoursTypeId periods { ${HOURS_PERIOD_FIELDS} } }
  categories { primaryCategory { name displayName } additionalCategories { name displayName } }
  serviceItems serviceArea citationsStatus connected alphaLocationName createdAt updatedAt`;
const LOCATIONS_QUERY = `query BenchLocations($accountId: ID, $perPage: Int) { locationsPage(accountId: $accountId, perPage: $perPage) { data: locations { ${LOCATION_FIELDS} } found page perPage } }`;

/** `observed`: the second server of --observability, with metrics and tracing on. */
type TargetName = 'plain' | 'REST' | 'GraphQL' | 'REST observed' | 'GraphQL observed';

interface Target {
  name: TargetName;
  url: URL;
  method: 'GET' | 'POST';
  body: string | undefined;
  headers: Record<string, string | number>;
  /** Keep-alive sockets of this target only: `--connections` of them. */
  agent: Agent;
  /** The process answering it, whose CPU is charged to it. */
  servingPid: () => number | undefined;
  /** Length of the answer checked before timing: every timed answer must have it. */
  expectedBytes: number;
}

interface Answer {
  status: number;
  bytes: number;
  body: string | undefined;
}

function send(target: Target, keepBody: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(target.url, { method: target.method, agent: target.agent, headers: target.headers }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (keepBody) chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, body: keepBody ? Buffer.concat(chunks).toString() : undefined }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(target.body);
  });
}

/** One target's turn in one round. */
interface Turn {
  round: number;
  target: TargetName;
  ok: number;
  errors: number;
  seconds: number;
  rps: number;
  /** `server`: the process answering the target. */
  cpu: CpuReading;
  benchLoopP99: number;
}

interface Totals {
  ok: number;
  errors: number;
  firstError: string | undefined;
  seconds: number;
  latencies: Samples;
  turns: Turn[];
}

const newTotals = (): Totals => ({ ok: 0, errors: 0, firstError: undefined, seconds: 0, latencies: new Samples(), turns: [] });

/**
 * `connections` closed loops for `seconds`: each sends its next request as soon as the previous one is answered.
 * An answer counts when it is a 200 of the checked length; anything else is an error.
 */
async function runTurn(target: Target, stack: BenchStack, options: Options, seconds: number, round: number, totals: Totals, signal: AbortSignal): Promise<Turn> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const cpuBefore = cpuNow(target.servingPid(), stack.postmasterPid());
  let ok = 0;
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < until && !signal.aborted) {
        const sentAt = performance.now();
        let problem: string | undefined;
        try {
          const answer = await send(target, false);
          if (answer.status !== 200) problem = `HTTP ${answer.status}`;
          else if (answer.bytes !== target.expectedBytes) problem = `${answer.bytes} bytes instead of ${target.expectedBytes}: the list changed`;
        } catch (error) {
          problem = error instanceof Error ? error.message : String(error);
        }
        totals.latencies.push(performance.now() - sentAt);
        if (problem === undefined) ok += 1;
        else {
          errors += 1;
          totals.firstError ??= problem;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = cpuNow(target.servingPid(), stack.postmasterPid());
  loop.disable();
  totals.ok += ok;
  totals.errors += errors;
  totals.seconds += elapsed;
  const turn: Turn = {
    round,
    target: target.name,
    ok,
    errors,
    seconds: elapsed,
    rps: ok / elapsed,
    cpu: cpuSince(cpuBefore, cpuAfter),
    benchLoopP99: loop.percentile(99) / 1e6,
  };
  totals.turns.push(turn);
  return turn;
}

/**
 * The GraphQL list data as this benchmark reads it: the fields it renames or converts are typed; those it passes on
 * to the REST record as they are stay `unknown`.
 */
interface ListPost {
  id: unknown;
  postId: unknown;
  locationId: unknown;
  accountId: unknown;
  state: unknown;
  source: string;
  createTime: string | null;
  publishedTime: string | null;
  updateTime: string | null;
  scheduledTime: string | null;
  searchUrl: unknown;
  lastError: ({ at: string | null } & Record<string, unknown>) | null;
  params: unknown;
}

interface ListClock {
  hours: string;
  minutes: string | null;
}

interface ListPeriod {
  openDay: unknown;
  openTime: ListClock | null;
  closeDay: unknown;
  closeTime: ListClock | null;
}

interface ListCategory {
  name: string;
  displayName: string;
}

interface ListLocation {
  id: unknown;
  referenceId: unknown;
  name: unknown;
  categoryId: unknown;
  address: unknown;
  postal: unknown;
  city: unknown;
  countryCode: unknown;
  administrativeArea: unknown;
  additionalAddressLines: unknown;
  description: unknown;
  phoneNumber: unknown;
  additionalPhoneNumbers: unknown;
  websiteUri: unknown;
  latitude: unknown;
  longitude: unknown;
  regularHours: ListPeriod[];
  specialHours: { openDate: unknown; closeDate: unknown; isClosed: unknown; openTime: ListClock | null; closeTime: ListClock | null }[];
  moreHours: { hoursTypeId: unknown; periods: ListPeriod[] }[];
  categories: { primaryCategory: ListCategory | null; additionalCategories: ListCategory[] | null } | null;
  serviceItems: unknown;
  serviceArea: unknown;
  citationsStatus: unknown;
  connected: unknown;
  alphaLocationName: unknown;
  createdAt: string | null;
  updatedAt: string | null;
}

interface ListPage {
  found: number;
  page: number;
  perPage: number;
}

/** The `data` of the two list queries (LIST_QUERY, LOCATIONS_QUERY): one of them per answer. */
interface ListData {
  postsPage?: ListPage & { posts: ListPost[] };
  locationsPage?: ListPage & { data: ListLocation[] };
}

/** The REST list bodies: `{ success, payload: { found, posts, … } }` for posts, `{ success, data, found, … }` for locations. */
interface RestListBody {
  payload?: { found: number; posts: unknown[] };
  data?: unknown[];
  found?: number;
}

/**
 * The REST record of a GraphQL post, by this benchmark's own hand (not the service's record compiler): snake_case
 * names, `accountId` as `account`, times as ms since the epoch, the source enum as its lower-case value, params
 * without null fields.
 */
function restRecordOf(post: ListPost): Record<string, unknown> {
  const time = (value: string | null) => (value === null ? null : Date.parse(value));
  const withoutNulls = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(withoutNulls)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]))
        : value;
  return {
    id: post.id,
    post_id: post.postId,
    location_id: post.locationId,
    account: post.accountId,
    state: post.state,
    source: post.source.toLowerCase(),
    create_time: time(post.createTime),
    published_time: time(post.publishedTime),
    update_time: time(post.updateTime),
    scheduled_time: time(post.scheduledTime),
    search_url: post.searchUrl,
    last_error: post.lastError ? { ...post.lastError, at: time(post.lastError.at) } : null,
    params: withoutNulls(post.params),
  };
}

/**
 * The REST record of a GraphQL location, by this benchmark's own hand: snake_case names (hours items too), times
 * as ms since the epoch, `categories` and `more_hours[].hoursTypeId` in camelCase as the document writes them
 * (categories without null members), service items and area as stored.
 */
function restLocationOf(location: ListLocation): Record<string, unknown> {
  const time = (value: string | null) => (value === null ? null : Date.parse(value));
  const clock = (value: ListClock | null) => (value === null ? null : { hours: value.hours, minutes: value.minutes });
  const period = (value: ListPeriod) => ({
    open_day: value.openDay,
    open_time: clock(value.openTime),
    close_day: value.closeDay,
    close_time: clock(value.closeTime),
  });
  const category = (value: ListCategory) => ({ name: value.name, displayName: value.displayName });
  const categories = location.categories;
  return {
    id: location.id,
    reference_id: location.referenceId,
    name: location.name,
    category_id: location.categoryId,
    address: location.address,
    postal: location.postal,
    city: location.city,
    country_code: location.countryCode,
    administrative_area: location.administrativeArea,
    additional_address_lines: location.additionalAddressLines,
    description: location.description,
    phone_number: location.phoneNumber,
    additional_phone_numbers: location.additionalPhoneNumbers,
    website_uri: location.websiteUri,
    latitude: location.latitude,
    longitude: location.longitude,
    regular_hours: location.regularHours.map(period),
    special_hours: location.specialHours.map((item) => ({
      open_date: item.openDate,
      close_date: item.closeDate,
      is_closed: item.isClosed,
      open_time: clock(item.openTime),
      close_time: clock(item.closeTime),
    })),
    more_hours: location.moreHours.map((item) => ({ hoursTypeId: item.hoursTypeId, periods: item.periods.map(period) })),
    categories:
      categories === null
        ? null
        : {
            ...(categories.primaryCategory ? { primaryCategory: category(categories.primaryCategory) } : {}),
            ...(categories.additionalCategories ? { additionalCategories: categories.additionalCategories.map(category) } : {}),
          },
    service_items: location.serviceItems,
    service_area: location.serviceArea,
    citations_status: location.citationsStatus,
    connected: location.connected,
    alpha_location_name: location.alphaLocationName,
    created_at: time(location.createdAt),
    updated_at: time(location.updatedAt),
  };
}

async function postsInState(stack: BenchStack, accountId: string, state: string, signal: AbortSignal): Promise<number> {
  const response = await fetch(`${stack.baseUrl}/post?account_id=${encodeURIComponent(accountId)}&state=${state}&per_page=1`, {
    headers: { authorization: `Bearer ${stack.token}` },
    signal,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /post?state=${state} answered ${response.status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { payload: { found: number } }).payload.found;
}

/** `count` posts in the first target's account, one at a time; then until none of the account's posts is in flight. */
async function seedPosts(stack: BenchStack, count: number, signal: AbortSignal): Promise<string> {
  const target = stack.targets[0];
  if (!target) throw new Error('the stack has no connected location to post to');
  const run = randomBytes(4).toString('hex');
  for (let index = 0; index < count && !signal.aborted; index += 1) {
    const response = await fetch(`${stack.baseUrl}/post?account_id=${encodeURIComponent(target.accountId)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ location_id: target.locationId, params: { topicType: 'STANDARD', languageCode: 'en', summary: `bench list ${run} #${index}` } }),
      signal,
    });
    if (response.status !== 202) throw new Error(`POST /post answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    await response.arrayBuffer().catch(() => undefined);
  }
  // The list must stand still while it is timed: no post of the account may still be on its way to the provider.
  const deadline = performance.now() + 60_000;
  while (!signal.aborted) {
    const inFlight = (await postsInState(stack, target.accountId, 'SENDING', signal)) + (await postsInState(stack, target.accountId, 'PROCESSING', signal));
    if (inFlight === 0) break;
    if (performance.now() > deadline) throw new Error(`${inFlight} post(s) still SENDING or PROCESSING after 60 s`);
    await sleep(100, signal);
  }
  return target.accountId;
}

/** How a list's GraphQL data becomes REST's body, by this benchmark's own hand, and what a REST body holds. */
const SHAPES: Record<ListName, { restOf(data: ListData): string; items(rest: RestListBody): { items: number; found: number } }> = {
  posts: {
    restOf: (data) => {
      const page = data.postsPage;
      if (!page) throw new Error('GraphQL answered no postsPage');
      return JSON.stringify({ success: true, payload: { found: page.found, page: page.page, per_page: page.perPage, posts: page.posts.map(restRecordOf) } });
    },
    items: (rest) => ({ items: rest.payload?.posts.length ?? 0, found: rest.payload?.found ?? 0 }),
  },
  locations: {
    restOf: (data) => {
      const page = data.locationsPage;
      if (!page) throw new Error('GraphQL answered no locationsPage');
      return JSON.stringify({ success: true, data: page.data.map(restLocationOf), found: page.found, page: page.page, per_page: page.perPage });
    },
    items: (rest) => ({ items: rest.data?.length ?? 0, found: rest.found ?? 0 }),
  },
};

/** One list's three targets, what was checked of them, and what their turns measured. */
interface ListRun {
  name: ListName;
  perPage: number;
  /** plain, REST and GraphQL; with --observability, REST and GraphQL of the observed server after them. */
  targets: [Target, Target, Target, ...Target[]];
  checked: { rest: string; items: number; found: number; bytes: Partial<Record<TargetName, number>> } | undefined;
  totals: Map<TargetName, Totals>;
  /** The rate-limit bucket the list counts in (locations: `location-reads:<token id>`), shown each round. */
  bucket: string | undefined;
}

/** The three answers, equal before anything is timed; throws with where they part when they are not. */
async function checkAnswers(run: ListRun): Promise<void> {
  const [plain, rest, graphql] = run.targets;
  const [plainAnswer, restAnswer, graphqlAnswer] = await Promise.all([send(plain, true), send(rest, true), send(graphql, true)]);
  const bad = [
    ['plain', plainAnswer],
    ['REST', restAnswer],
    ['GraphQL', graphqlAnswer],
  ].filter(([, answer]) => (answer as Answer).status !== 200) as [string, Answer][];
  if (bad.length > 0) {
    throw new Error(`${run.name}: not every list answered 200:\n${bad.map(([name, answer]) => `  ${name}: HTTP ${answer.status} ${answer.body!.slice(0, 300)}`).join('\n')}`);
  }
  const restBody = restAnswer.body!;
  if (plainAnswer.body !== restBody) {
    throw new Error(`${run.name}: REST and the plain route answer different bytes.\n${describeJsonMismatch(restBody, plainAnswer.body!, ['REST', 'plain'])}`);
  }
  const answer = JSON.parse(graphqlAnswer.body!) as { data?: ListData | null; errors?: { message: string }[] };
  if (!answer.data || answer.errors?.length) {
    throw new Error(`${run.name}: GraphQL answered errors: ${JSON.stringify(answer.errors ?? answer).slice(0, 600)}`);
  }
  const asRest = SHAPES[run.name].restOf(answer.data);
  if (asRest !== restBody) {
    throw new Error(`${run.name}: GraphQL's list, mapped to REST records, is not REST's.\n${describeJsonMismatch(restBody, asRest, ['REST', 'GraphQL as REST'])}`);
  }
  plain.expectedBytes = plainAnswer.bytes;
  rest.expectedBytes = restAnswer.bytes;
  graphql.expectedBytes = graphqlAnswer.bytes;
  const bytes: Partial<Record<TargetName, number>> = { plain: plainAnswer.bytes, REST: restAnswer.bytes, GraphQL: graphqlAnswer.bytes };
  // The observed server reads the same database: its answers are the same bytes as the first server's.
  for (const observed of run.targets.slice(3)) {
    const same = observed.method === 'GET' ? restAnswer : graphqlAnswer;
    const observedAnswer = await send(observed, true);
    if (observedAnswer.status !== 200 || observedAnswer.body !== same.body) {
      throw new Error(`${run.name}: ${observed.name} answers otherwise than the first server (HTTP ${observedAnswer.status}).\n${describeJsonMismatch(same.body!, observedAnswer.body ?? '', ['first', observed.name])}`);
    }
    observed.expectedBytes = observedAnswer.bytes;
    bytes[observed.name] = observedAnswer.bytes;
  }
  run.checked = { rest: restBody, ...SHAPES[run.name].items(JSON.parse(restBody) as RestListBody), bytes };
}

interface Figure {
  target: TargetName;
  rps: number;
  roundRps: number[];
  ofPlain: number | undefined;
  latency: Summary;
  ok: number;
  errors: number;
  firstError: string | undefined;
  /** CPU ms per answered request: the serving process, PostgreSQL (postmaster and backends), this process. */
  cpuMsPerRequest: { serving: number | undefined; postgres: number | undefined; bench: number | undefined };
  /** Cores busy during the target's turns (serving + PostgreSQL + bench): 2 means the machine was saturated. */
  coresBusy: number | undefined;
  benchLoopP99Max: number;
}

function figuresOf(totals: Map<TargetName, Totals>): Figure[] {
  const figures: Figure[] = [];
  for (const [target, t] of totals) {
    if (t.turns.length === 0) continue;
    const sum = (pick: (turn: Turn) => number | undefined) =>
      t.turns.every((turn) => pick(turn) !== undefined) ? t.turns.reduce((total, turn) => total + pick(turn)!, 0) : undefined;
    const perRequest = (seconds: number | undefined) => (seconds === undefined || t.ok === 0 ? undefined : (seconds * 1000) / t.ok);
    const serving = sum((turn) => turn.cpu.server);
    const postgres = sum((turn) => turn.cpu.postgres);
    const bench = sum((turn) => turn.cpu.bench);
    figures.push({
      target,
      rps: t.ok / t.seconds,
      roundRps: t.turns.map((turn) => turn.rps),
      ofPlain: undefined,
      latency: summarize(t.latencies.values()),
      ok: t.ok,
      errors: t.errors,
      firstError: t.firstError,
      cpuMsPerRequest: { serving: perRequest(serving), postgres: perRequest(postgres), bench: perRequest(bench) },
      coresBusy: serving === undefined || postgres === undefined || bench === undefined ? undefined : (serving + postgres + bench) / t.seconds,
      benchLoopP99Max: Math.max(...t.turns.map((turn) => turn.benchLoopP99)),
    });
  }
  const plain = figures.find((figure) => figure.target === 'plain');
  for (const figure of figures) figure.ofPlain = plain && plain.rps > 0 ? figure.rps / plain.rps : undefined;
  return figures;
}

const TARGETS: { target: TargetName; share: number }[] = [
  { target: 'REST', share: 0.8 },
  { target: 'GraphQL', share: 0.6 },
];

const ROUTES: Record<ListName, { rest: string; graphql: string }> = {
  posts: { rest: 'GET /post', graphql: 'postsPage' },
  locations: { rest: 'GET /location', graphql: 'locationsPage' },
};

/** What metrics and tracing cost (--observability): the observed server's req/s against the first one's, per list. */
function observabilityCost(measured: { run: ListRun; figures: Figure[] }[], traces: { exports: number; bytes: number } | undefined): void {
  console.log('');
  console.log('Metrics and tracing on against off (req/s of the observed server as a share of the first; goal: at most 5% lower)');
  for (const { run, figures } of measured) {
    for (const [off, on] of [['REST', 'REST observed'], ['GraphQL', 'GraphQL observed']] as const) {
      const offFigure = figures.find((f) => f.target === off);
      const onFigure = figures.find((f) => f.target === on);
      if (!offFigure || !onFigure || offFigure.rps === 0) continue;
      const ratio = onFigure.rps / offFigure.rps;
      const name = off === 'REST' ? ROUTES[run.name].rest : `GraphQL ${ROUTES[run.name].graphql}`;
      const cpu = (f: Figure) => ms(f.cpuMsPerRequest.serving, 2);
      console.log(
        `  ${name}: ${onFigure.rps.toFixed(0)} against ${offFigure.rps.toFixed(0)} req/s = ${(ratio * 100).toFixed(1)}% ` +
          `(${((1 - ratio) * 100).toFixed(1)}% lower; server CPU ms/req ${cpu(onFigure)} against ${cpu(offFigure)}) -> ${ratio >= 0.95 ? 'met' : 'MISSED'}`,
      );
    }
  }
  if (traces) console.log(`  traces exported to the sink: ${traces.exports} export request(s), ${(traces.bytes / 1024 / 1024).toFixed(1)} MB`);
}

function report(runs: ListRun[], options: Options, stack: BenchStack | undefined, aborted: string | undefined, traces: { exports: number; bytes: number } | undefined): void {
  const measured = runs.map((run) => ({ run, figures: figuresOf(run.totals) })).filter(({ figures }) => figures.length > 0);
  if (measured.length === 0) return;
  const pct = (value: number | undefined) => (value === undefined ? 'n/a' : `${(value * 100).toFixed(0)}%`);
  const problems: string[] = [];
  for (const { run, figures } of measured) {
    const what = run.checked
      ? `${run.checked.items} of ${run.checked.found} ${run.name}, ${((run.checked.bytes.REST ?? 0) / 1024).toFixed(1)} KB REST, ${((run.checked.bytes.GraphQL ?? 0) / 1024).toFixed(1)} KB GraphQL`
      : run.name;
    console.log('');
    console.log(
      `Figures: ${ROUTES[run.name].rest} and ${ROUTES[run.name].graphql}, per_page ${run.perPage} (${what}; ` +
        `${options.connections} connections per target, ${options.rounds} round(s) of ${options.seconds} s per target, interleaved)`,
    );
    console.log(
      table([
        ['target', 'req/s', 'per round', 'p50 ms', 'p99 ms', 'of plain', 'CPU ms/req serving/pg/bench', 'cores busy', 'errors'],
        ...figures.map((f) => [
          f.target,
          f.rps.toFixed(0),
          f.roundRps.map((rps) => rps.toFixed(0)).join('/'),
          ms(f.latency.p50),
          ms(f.latency.p99),
          pct(f.ofPlain),
          `${ms(f.cpuMsPerRequest.serving, 2)}/${ms(f.cpuMsPerRequest.postgres, 2)}/${ms(f.cpuMsPerRequest.bench, 2)}`,
          ms(f.coresBusy, 2),
          String(f.errors),
        ]),
      ]),
    );
    for (const f of figures) {
      if (f.errors > 0) problems.push(`${run.name} ${f.target}: ${f.errors} request(s) failed or answered otherwise; first: ${f.firstError}`);
      if (f.benchLoopP99Max > 20) problems.push(`${run.name} ${f.target}: the benchmark's own event loop lagged (p99 ${f.benchLoopP99Max.toFixed(1)} ms): its latencies include the client's`);
    }
  }
  console.log('  serving: the process answering (plain: the baseline server; REST, GraphQL: the service; observed: its second');
  console.log('  server, metrics and tracing on). Cores busy counts the serving process, PostgreSQL and the bench: 2.00 is the');
  console.log('  whole machine.');

  const warnings = stack?.serverWarnings() ?? [];
  if (warnings.length > 0) problems.push(`the server logged ${warnings.length} warning line(s); first: ${warnings[0]!.slice(0, 300)}`);
  if (problems.length > 0) {
    console.log('');
    console.log('Problems');
    for (const problem of problems) console.log(`  - ${problem}`);
  }

  console.log('');
  console.log('Targets (req/s as a share of the plain route)');
  for (const { run, figures } of measured) {
    for (const { target, share } of TARGETS) {
      const figure = figures.find((f) => f.target === target);
      const verdict = figure?.ofPlain === undefined ? 'not measured' : figure.ofPlain >= share ? 'met' : 'MISSED';
      const name = target === 'REST' ? ROUTES[run.name].rest : `GraphQL ${ROUTES[run.name].graphql}`;
      console.log(`  ${name} at least ${(share * 100).toFixed(0)}% of the plain route: ${pct(figure?.ofPlain)} -> ${verdict}${aborted ? ' (run stopped early)' : ''}`);
    }
  }
  if (options.observability) observabilityCost(measured, traces);
  if (aborted) console.log(`\nStopped early: ${aborted}. The figures above are what was measured until then.`);
}

function readObservability(wanted: boolean, url: string | undefined): boolean {
  if (!wanted) return false;
  if (url) throw new Error('--observability starts its own two servers: it does not go with --url');
  if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) throw new Error('--observability compares tracing on with off: unset OTEL_EXPORTER_OTLP_ENDPOINT');
  return true;
}

function readTraceRatio(raw: string | undefined, observability: boolean): number {
  if (raw === undefined) return 1;
  if (!observability) throw new Error('--trace-ratio goes with --observability');
  const ratio = decimalOption('trace-ratio', raw, 1, 0);
  if (ratio > 1) throw new Error(`--trace-ratio must be from 0 to 1, not ${raw}`);
  return ratio;
}

/** The events counted in a rate-limit bucket's window now (rows of rate_limit_event). */
async function windowEvents(db: Client | undefined, bucket: string | undefined): Promise<number | undefined> {
  if (!db || !bucket) return undefined;
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from rate_limit_event where bucket = $1', [bucket]);
  return rows[0]?.n;
}

runBench({
  name: 'lists',
  usage: USAGE,
  values: ['list', 'posts', 'per-page', 'locations', 'location-per-page', 'location-read-limit', 'connections', 'seconds', 'rounds', 'warmup-s', 'trace-ratio'],
  flags: ['observability'],
  timeoutSeconds: 300,
  databaseUrl: { why: 'which the plain route reads', required: true },
  // A zero-latency provider: the seeded posts leave SENDING at once, the seeded locations connect at once; and no
  // per-location edit limit, so the seeding's updates are never put off.
  sandbox: { latencyMs: 0, processingMs: 0, locationEditsPerMinute: 1_000_000 },
  read(values, common): Options {
    if (!common.url && values['location-read-limit']) throw new Error('--location-read-limit goes with --url (the stack the bench starts has its own)');
    const list = values.list ?? 'both';
    if (list !== 'posts' && list !== 'locations' && list !== 'both') throw new Error(`--list must be posts, locations or both, not ${list}`);
    return {
      lists: list === 'both' ? ['posts', 'locations'] : [list],
      posts: integerOption('posts', values.posts, 40, 0, 10_000),
      perPage: integerOption('per-page', values['per-page'], 20, 1, 1000),
      locations: integerOption('locations', values.locations, 250, 0, 10_000),
      locationPerPage: integerOption('location-per-page', values['location-per-page'], 250, 1, 250),
      locationReadLimit: common.url ? integerOption('location-read-limit', values['location-read-limit'], 300, 1, 2_147_483_647) : undefined,
      connections: integerOption('connections', values.connections, 16, 1, 1000),
      seconds: integerOption('seconds', values.seconds, 5, 1),
      rounds: integerOption('rounds', values.rounds, 3, 1),
      warmupSeconds: integerOption('warmup-s', values['warmup-s'], 1, 0),
      observability: readObservability(values.observability === true, common.url),
      traceRatio: readTraceRatio(values['trace-ratio'], values.observability === true),
    };
  },
  // The first server is the one without: metrics off, and no tracing (readObservability refuses an OTLP endpoint).
  stackEnv: (options): Record<string, string> => (options.observability ? { METRICS: 'off' } : {}),
  start(options, signal) {
    console.log(`  lists: ${options.lists.join(', ')}`);
    const agents: Agent[] = [];
    const runs: ListRun[] = [];
    let db: Client | undefined;
    let plain: HelperProcess | undefined;
    let sink: OtlpSink | undefined;
    return {
      async measure({ stack }: BenchEnvironment) {
        const databaseUrl = stack.databaseUrl!;
        const target = stack.targets[0];
        if (!target) throw new Error('the stack has no connected location: no account to list');

        if (options.lists.includes('posts')) {
          const seedStarted = performance.now();
          await seedPosts(stack, options.posts, signal);
          if (signal.aborted) return;
          console.log(`  posts: ${options.posts} created in account ${target.accountId} and settled in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
        }
        if (options.lists.includes('locations') && options.locations > 0) {
          const seedStarted = performance.now();
          await seedLocations(stack, target.accountId, { count: options.locations, run: randomBytes(4).toString('hex'), signal });
          if (signal.aborted) return;
          console.log(
            `  locations: ${options.locations} created (POST /location, then PATCH /location/update with categories, more hours and service items) ` +
              `in account ${target.accountId}, connected and settled in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
          );
        }

        const locationReadLimit = options.locationReadLimit ?? stack.locationReadLimit ?? 300;
        plain = await forkListening(path.join(__dirname, 'support/plain-list-server.js'), [databaseUrl, String(locationReadLimit)], 'the plain server', signal);
        console.log(`  plain routes: ${plain.url} (dist-dev/bench/support/plain-list-server.js, its own process; location read limit ${locationReadLimit}/min)`);

        db = new Client({ connectionString: databaseUrl, application_name: 'lg-bench' });
        await db.connect();
        const tokenHash = createHash('sha256').update(stack.token).digest('hex');
        const tokenId = (await db.query<{ id: string }>('select id from api_token where token_hash = $1', [tokenHash])).rows[0]?.id;

        const authorization = `Bearer ${stack.token}`;
        const agentOf = () => {
          const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
          agents.push(agent);
          return agent;
        };
        let observed: ServerProcess | undefined;
        if (options.observability) {
          if (!stack.startServerBeside) throw new Error('--observability needs a stack of this run');
          sink = await startOtlpSink();
          const tracing: Record<string, string> =
            options.traceRatio === 0
              ? {}
              : {
                  OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
                  // The SDK's default protocol and batching, said rather than inherited; the share of requests sampled.
                  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
                  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
                  OTEL_TRACES_SAMPLER_ARG: String(options.traceRatio),
                };
          observed = await stack.startServerBeside({ METRICS: 'on', ...tracing }, signal);
          const traced = options.traceRatio === 0 ? 'no tracing' : `traces exported to ${sink.url}, ${(options.traceRatio * 100).toFixed(0)}% of requests sampled`;
          console.log(`  observed server: ${observed.baseUrl} (ROLE=api on the same database; METRICS=on, ${traced})`);
          console.log('  first server: METRICS=off, no tracing');
        }
        const serverPid = stack.serverPid;
        const plainPid = plain.pid;
        for (const name of options.lists) {
          const perPage = name === 'posts' ? options.perPage : options.locationPerPage;
          const restPath = name === 'posts' ? '/post' : '/location';
          const query = `account_id=${encodeURIComponent(target.accountId)}&per_page=${perPage}`;
          const graphqlBody = JSON.stringify({ query: name === 'posts' ? LIST_QUERY : LOCATIONS_QUERY, variables: { accountId: target.accountId, perPage } });
          const run: ListRun = {
            name,
            perPage,
            targets: [
              { name: 'plain', url: new URL(`${plain.url}${restPath}?${query}`), method: 'GET', body: undefined, headers: { authorization }, agent: agentOf(), servingPid: () => plainPid, expectedBytes: -1 },
              { name: 'REST', url: new URL(`${stack.baseUrl}${restPath}?${query}`), method: 'GET', body: undefined, headers: { authorization }, agent: agentOf(), servingPid: () => serverPid, expectedBytes: -1 },
              {
                name: 'GraphQL',
                url: new URL(`${stack.baseUrl}/graphql`),
                method: 'POST',
                body: graphqlBody,
                headers: { authorization, 'content-type': 'application/json', 'content-length': Buffer.byteLength(graphqlBody) },
                agent: agentOf(),
                servingPid: () => serverPid,
                expectedBytes: -1,
              },
            ],
            checked: undefined,
            totals: new Map(),
            bucket: name === 'locations' && tokenId ? `location-reads:${tokenId}` : undefined,
          };
          if (observed) {
            const observedPid = observed.pid;
            const [, rest, graphql] = run.targets;
            run.targets.push(
              { ...rest, name: 'REST observed', url: new URL(`${observed.baseUrl}${restPath}?${query}`), agent: agentOf(), servingPid: () => observedPid },
              { ...graphql, name: 'GraphQL observed', url: new URL(`${observed.baseUrl}/graphql`), agent: agentOf(), servingPid: () => observedPid },
            );
          }
          await checkAnswers(run);
          runs.push(run);
          const checked = run.checked!;
          console.log(
            `  ${name}: the ${run.targets.length} answers are equal: ${checked.items} of ${checked.found}; ${checked.bytes.REST} bytes from plain and REST, ` +
              `${checked.bytes.GraphQL} from GraphQL`,
          );
          if (checked.items === 0) console.log(`  (an empty page: the ${name} lists measured carry nothing)`);
        }

        for (const run of runs) {
          if (signal.aborted) break;
          console.log(`  ${run.name}:`);
          if (options.warmupSeconds > 0) {
            console.log(`    warm-up: ${options.warmupSeconds} s of each target, not counted`);
            for (const t of run.targets) if (!signal.aborted) await runTurn(t, stack, options, options.warmupSeconds, 0, newTotals(), signal);
          }
          for (const t of run.targets) run.totals.set(t.name, newTotals());
          for (let round = 1; round <= options.rounds && !signal.aborted; round += 1) {
            const order = run.targets.map((_, index) => run.targets[(index + round - 1) % run.targets.length]!);
            const line: string[] = [];
            for (const t of order) {
              if (signal.aborted) break;
              const turn = await runTurn(t, stack, options, options.seconds, round, run.totals.get(t.name)!, signal);
              line.push(`${t.name} ${turn.rps.toFixed(0)} req/s${turn.errors > 0 ? ` (${turn.errors} errors)` : ''}`);
            }
            const window = await windowEvents(db, run.bucket);
            console.log(`    round ${round}: ${line.join(', ')}${window === undefined ? '' : `; rate-limit window now ${window} events`}`);
          }
        }

        // Nothing may have changed the lists while they were timed: the same bytes as before.
        for (const run of runs) {
          if (signal.aborted) break;
          const after = await send(run.targets[1], true);
          if (after.body !== run.checked!.rest) {
            console.log(`  NOTE: REST's ${run.name} answer changed while it was timed.\n${describeJsonMismatch(run.checked!.rest, after.body ?? '', ['before', 'after'])}`);
          }
        }
      },
      report(stack, aborted) {
        report(runs, options, stack, aborted, sink?.received());
        return {
          lists: runs.map((run) => ({
            list: run.name,
            perPage: run.perPage,
            answers: run.checked && { items: run.checked.items, found: run.checked.found, bytes: run.checked.bytes },
            figures: figuresOf(run.totals),
            turns: [...run.totals.values()].flatMap((t) => t.turns),
          })),
        };
      },
      async close() {
        for (const agent of agents) agent.destroy();
        await db?.end().catch(() => undefined);
        await sink?.close();
        if (plain) await plain.stop().catch((error: unknown) => console.error(`stopping the plain server: ${String(error)}`));
      },
      forceStop: () => plain?.kill(),
    };
  },
});
