/**
 * bench/lists: the list read paths against a plain baseline, in one run. `GET /post?account_id=…&per_page=20`
 * (REST) and GraphQL `postsPage` with the same fields, and `GET /location?account_id=…&per_page=250` and GraphQL
 * `locationsPage`, are timed against bare Fastify + pg routes doing the same work and answering the same bytes
 * (bench/support/plain-list-server.ts, in its own process), in interleaved rounds. The three answers of a list are
 * checked equal before anything is timed. A benchmark: it prints figures and never asserts.
 * `npm run bench:lists -- --help` lists the options; docs/benchmarks.md explains them.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../src/sandbox/alpha/alpha-sandbox.control';
import type { AlphaSandboxConfig } from '../src/sandbox/alpha/alpha-sandbox.state';
import { abortOnLimits } from './support/abort';
import { processCpuSeconds, processTreeCpuSeconds, selfCpuSeconds } from './support/cpu';
import { describeJsonMismatch } from './support/json-diff';
import { seedLocations } from './support/locations';
import { sleep } from './support/posting';
import { connectToStack, startOwnedStack, type BenchStack } from './support/stack';
import { ms, Samples, summarize, table, type Summary } from './support/stats';
import { integerOption } from './support/options';

const ROOT = path.resolve(__dirname, '../..');

const USAGE = `Usage: npm run bench:lists -- [options]

  --list L             posts, locations or both (default both): which lists are timed
  --posts N            posts created in the listed account before timing (default 40; 0: list what is there)
  --per-page N         page size of the post lists (default 20)
  --locations N        locations created in the listed account before timing (default 250; 0: list what is there)
  --location-per-page N  page size of the location lists (default 250, the most the route allows)
  --connections C      closed loops (keep-alive connections) per target (default 16)
  --seconds S          length of one target's turn in a round (default 5)
  --rounds R           rounds; each runs plain, REST and GraphQL, the order rotating (default 3)
  --warmup-s S         an untimed turn of each target before the first round (default 1; 0 skips it)
  --timeout-s S        global time limit: print what was measured and exit 2 (default 300)
  --url URL            an already running stack (http://127.0.0.1:<port>) instead of starting one
  --token TOKEN        with --url: an organization token
  --database-url URL   with --url: its database (the plain route reads it)
  --location-read-limit N  with --url: its LOCATION_READ_RATE_LIMIT_PER_MINUTE (default 300), which the plain
                       route counts against as the service does (both count in the token's one bucket)
  --json FILE          also write the figures as JSON
  --profile-server DIR write a V8 CPU profile of the server it starts into DIR (open it in Chrome DevTools)
`;

type ListName = 'posts' | 'locations';

interface Options {
  lists: ListName[];
  posts: number;
  perPage: number;
  locations: number;
  locationPerPage: number;
  locationReadLimit: number | undefined;
  connections: number;
  seconds: number;
  rounds: number;
  warmupSeconds: number;
  timeoutMs: number;
  url: string | undefined;
  token: string | undefined;
  databaseUrl: string | undefined;
  json: string | undefined;
  profileServer: string | undefined;
}

function readOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      list: { type: 'string' },
      posts: { type: 'string' },
      'per-page': { type: 'string' },
      locations: { type: 'string' },
      'location-per-page': { type: 'string' },
      'location-read-limit': { type: 'string' },
      connections: { type: 'string' },
      seconds: { type: 'string' },
      rounds: { type: 'string' },
      'warmup-s': { type: 'string' },
      'timeout-s': { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      'database-url': { type: 'string' },
      json: { type: 'string' },
      'profile-server': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (values.url && (!values.token || !values['database-url'])) {
    throw new Error('--url needs --token (an organization token) and --database-url (the plain route reads the database)');
  }
  if (!values.url && (values.token || values['database-url'])) throw new Error('--token and --database-url go with --url');
  if (values.url && values['profile-server']) throw new Error('--profile-server works only on the stack the bench starts (no --url)');
  if (!values.url && values['location-read-limit']) throw new Error('--location-read-limit goes with --url (the stack the bench starts has its own)');
  const list = values.list ?? 'both';
  if (!['posts', 'locations', 'both'].includes(list)) throw new Error(`--list must be posts, locations or both, not ${list}`);
  return {
    lists: list === 'both' ? ['posts', 'locations'] : [list as ListName],
    posts: integerOption('posts', values.posts, 40, 0, 10_000),
    perPage: integerOption('per-page', values['per-page'], 20, 1, 1000),
    locations: integerOption('locations', values.locations, 250, 0, 10_000),
    locationPerPage: integerOption('location-per-page', values['location-per-page'], 250, 1, 250),
    locationReadLimit: values.url ? integerOption('location-read-limit', values['location-read-limit'], 300, 1, 2_147_483_647) : undefined,
    connections: integerOption('connections', values.connections, 16, 1, 1000),
    seconds: integerOption('seconds', values.seconds, 5, 1),
    rounds: integerOption('rounds', values.rounds, 3, 1),
    warmupSeconds: integerOption('warmup-s', values['warmup-s'], 1, 0),
    timeoutMs: integerOption('timeout-s', values['timeout-s'], 300, 10) * 1000,
    url: values.url,
    token: values.token,
    databaseUrl: values['database-url'],
    json: values.json,
    profileServer: values['profile-server'],
  };
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

type TargetName = 'plain' | 'REST' | 'GraphQL';

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

interface Cpu {
  serving: number | undefined;
  postgres: number | undefined;
  bench: number;
}

/** One target's turn in one round. */
interface Turn {
  round: number;
  target: TargetName;
  ok: number;
  errors: number;
  seconds: number;
  rps: number;
  cpu: Cpu;
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

function cpuOf(target: Target, stack: BenchStack): Cpu {
  return { serving: processCpuSeconds(target.servingPid()), postgres: processTreeCpuSeconds(stack.postmasterPid()), bench: selfCpuSeconds() };
}

const minus = (after: number | undefined, before: number | undefined) => (after === undefined || before === undefined ? undefined : after - before);

/**
 * `connections` closed loops for `seconds`: each sends its next request as soon as the previous one is answered.
 * An answer counts when it is a 200 of the checked length; anything else is an error.
 */
async function runTurn(target: Target, stack: BenchStack, options: Options, seconds: number, round: number, totals: Totals, signal: AbortSignal): Promise<Turn> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const cpuBefore = cpuOf(target, stack);
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
  const cpuAfter = cpuOf(target, stack);
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
    cpu: { serving: minus(cpuAfter.serving, cpuBefore.serving), postgres: minus(cpuAfter.postgres, cpuBefore.postgres), bench: cpuAfter.bench - cpuBefore.bench },
    benchLoopP99: loop.percentile(99) / 1e6,
  };
  totals.turns.push(turn);
  return turn;
}

/**
 * The REST record of a GraphQL post, by this benchmark's own hand (not the service's record compiler): snake_case
 * names, `accountId` as `account`, times as ms since the epoch, the source enum as its lower-case value, params
 * without null fields.
 */
function restRecordOf(post: Record<string, any>): Record<string, unknown> {
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
    source: String(post.source).toLowerCase(),
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
function restLocationOf(location: Record<string, any>): Record<string, unknown> {
  const time = (value: string | null) => (value === null ? null : Date.parse(value));
  const clock = (value: { hours: string; minutes: string | null } | null) => (value === null ? null : { hours: value.hours, minutes: value.minutes });
  const period = (value: Record<string, any>) => ({
    open_day: value.openDay,
    open_time: clock(value.openTime),
    close_day: value.closeDay,
    close_time: clock(value.closeTime),
  });
  const category = (value: { name: string; displayName: string }) => ({ name: value.name, displayName: value.displayName });
  const categories = location.categories as { primaryCategory: { name: string; displayName: string } | null; additionalCategories: { name: string; displayName: string }[] | null } | null;
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
    regular_hours: (location.regularHours as Record<string, any>[]).map(period),
    special_hours: (location.specialHours as Record<string, any>[]).map((item) => ({
      open_date: item.openDate,
      close_date: item.closeDate,
      is_closed: item.isClosed,
      open_time: clock(item.openTime),
      close_time: clock(item.closeTime),
    })),
    more_hours: (location.moreHours as Record<string, any>[]).map((item) => ({ hoursTypeId: item.hoursTypeId, periods: (item.periods as Record<string, any>[]).map(period) })),
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

interface PlainServer {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
  kill(): void;
}

/**
 * The baseline in its own process, so it does not share an event loop with the load generator (as the service does
 * not). Forked with an IPC channel and bench/support/exit-with-parent.js preloaded: it exits when this process goes.
 */
function startPlainServer(databaseUrl: string, locationReadLimit: number, signal: AbortSignal): Promise<PlainServer> {
  const child: ChildProcess = fork(path.join(__dirname, 'support/plain-list-server.js'), [databaseUrl, String(locationReadLimit)], {
    execArgv: ['--require', path.join(__dirname, 'support/exit-with-parent.js')],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(kill, 5_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    let output = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      kill();
      reject(new Error(`the plain server ${why}${output ? `; its output: ${output.slice(0, 500)}` : ''}`));
    };
    const onAbort = () => fail('start was aborted');
    const onExit = (code: number | null, sig: NodeJS.Signals | null) => fail(`exited (${code ?? sig}) before listening`);
    const timer = setTimeout(() => fail('did not listen within 15 s'), 15_000);
    signal.addEventListener('abort', onAbort, { once: true });
    child.once('exit', onExit);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        child.off('exit', onExit);
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve({ url: match[1]!, pid: child.pid, stop, kill });
      }
    };
    child.stdout!.on('data', onData);
  });
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
const SHAPES: Record<ListName, { restOf(data: Record<string, any>): string; items(rest: Record<string, any>): { items: number; found: number } }> = {
  posts: {
    restOf: (data) => {
      const page = data.postsPage;
      return JSON.stringify({ success: true, payload: { found: page.found, page: page.page, per_page: page.perPage, posts: page.posts.map(restRecordOf) } });
    },
    items: (rest) => ({ items: rest.payload.posts.length, found: rest.payload.found }),
  },
  locations: {
    restOf: (data) => {
      const page = data.locationsPage;
      return JSON.stringify({ success: true, data: page.data.map(restLocationOf), found: page.found, page: page.page, per_page: page.perPage });
    },
    items: (rest) => ({ items: rest.data.length, found: rest.found }),
  },
};

/** One list's three targets, what was checked of them, and what their turns measured. */
interface ListRun {
  name: ListName;
  perPage: number;
  targets: [Target, Target, Target];
  checked: { rest: string; items: number; found: number; bytes: Record<TargetName, number> } | undefined;
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
  const answer = JSON.parse(graphqlAnswer.body!) as { data?: Record<string, any> | null; errors?: { message: string }[] };
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
  run.checked = {
    rest: restBody,
    ...SHAPES[run.name].items(JSON.parse(restBody) as Record<string, any>),
    bytes: { plain: plainAnswer.bytes, REST: restAnswer.bytes, GraphQL: graphqlAnswer.bytes },
  };
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
    const serving = sum((turn) => turn.cpu.serving);
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

function report(runs: ListRun[], options: Options, stack: BenchStack | undefined, aborted: string | undefined): void {
  const measured = runs.map((run) => ({ run, figures: figuresOf(run.totals) })).filter(({ figures }) => figures.length > 0);
  if (measured.length === 0) return;
  const pct = (value: number | undefined) => (value === undefined ? 'n/a' : `${(value * 100).toFixed(0)}%`);
  const problems: string[] = [];
  for (const { run, figures } of measured) {
    const what = run.checked
      ? `${run.checked.items} of ${run.checked.found} ${run.name}, ${(run.checked.bytes.REST / 1024).toFixed(1)} KB REST, ${(run.checked.bytes.GraphQL / 1024).toFixed(1)} KB GraphQL`
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
  console.log('  serving: the process answering (plain: the baseline server; REST, GraphQL: the service). Cores busy counts');
  console.log('  those three processes only: 2.00 is the whole machine.');

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
  if (aborted) console.log(`\nStopped early: ${aborted}. The figures above are what was measured until then.`);
}

/** The events counted in a rate-limit bucket's window now (rows of rate_limit_event). */
async function windowEvents(db: Client | undefined, bucket: string | undefined): Promise<number | undefined> {
  if (!db || !bucket) return undefined;
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from rate_limit_event where bucket = $1', [bucket]);
  return rows[0]?.n;
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = readOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 64;
  }

  let stack: BenchStack | undefined;
  let plain: PlainServer | undefined;
  const limits = abortOnLimits(options.timeoutMs, () => {
    plain?.kill();
    stack?.forceStop();
  });
  const signal = limits.signal;

  console.log('bench/lists');
  console.log(`  node ${process.version}, ${cpus().length} CPU core(s) (${cpus()[0]?.model.trim() ?? 'unknown'}), ${process.platform}/${process.arch}`);
  console.log(`  load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`  lists: ${options.lists.join(', ')}`);

  const agents: Agent[] = [];
  const runs: ListRun[] = [];
  let db: Client | undefined;
  let sandbox: AlphaSandboxControl | undefined;
  let previousSandboxConfig: AlphaSandboxConfig | undefined;
  let failed = false;
  try {
    if (options.url) {
      stack = await connectToStack({ url: options.url, token: options.token!, databaseUrl: options.databaseUrl, locationReadLimit: options.locationReadLimit });
      console.log(`  stack: ${stack.baseUrl} (already running; --url)`);
    } else {
      const started = performance.now();
      stack = await startOwnedStack({ root: ROOT, signal, profileDir: options.profileServer });
      console.log(`  stack: ${stack.baseUrl} (started for this run in ${((performance.now() - started) / 1000).toFixed(1)} s: node dist/src/main.js, embedded PostgreSQL, throwaway DATA_DIR)`);
    }
    const databaseUrl = stack.databaseUrl!;
    const target = stack.targets[0];
    if (!target) throw new Error('the stack has no connected location: no account to list');

    // A zero-latency provider: the seeded posts leave SENDING at once, the seeded locations connect at once; and
    // no per-location edit limit, so the seeding's updates are never put off.
    sandbox = createAlphaSandboxControl(`${stack.baseUrl}/sandbox/alpha`);
    if (stack.owned) await sandbox.reset();
    else previousSandboxConfig = (await sandbox.state()).config;
    await sandbox.configure({ latencyMs: 0, processingMs: 0, locationEditsPerMinute: 1_000_000 });

    if (options.lists.includes('posts')) {
      const seedStarted = performance.now();
      await seedPosts(stack, options.posts, signal);
      if (signal.aborted) return 2;
      console.log(`  posts: ${options.posts} created in account ${target.accountId} and settled in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
    }
    if (options.lists.includes('locations') && options.locations > 0) {
      const seedStarted = performance.now();
      await seedLocations(stack, target.accountId, { count: options.locations, run: randomBytes(4).toString('hex'), signal });
      if (signal.aborted) return 2;
      console.log(
        `  locations: ${options.locations} created (POST /location, then PATCH /location/update with categories, more hours and service items) ` +
          `in account ${target.accountId}, connected and settled in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
      );
    }

    const locationReadLimit = stack.locationReadLimit ?? 300;
    plain = await startPlainServer(databaseUrl, locationReadLimit, signal);
    console.log(`  plain routes: ${plain.url} (dist/bench/support/plain-list-server.js, its own process; location read limit ${locationReadLimit}/min)`);

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
      await checkAnswers(run);
      runs.push(run);
      const checked = run.checked!;
      console.log(
        `  ${name}: the three answers are equal: ${checked.items} of ${checked.found}; ${checked.bytes.REST} bytes from plain and REST, ` +
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
  } catch (error) {
    failed = true;
    if (!signal.aborted) console.error(`\nbench failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    limits.finished();
    report(runs, options, stack, limits.reason());
    console.log(`\nload average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    if (options.json) {
      const machine = { node: process.version, cores: cpus().length, cpu: cpus()[0]?.model.trim(), platform: `${process.platform}/${process.arch}` };
      const lists = runs.map((run) => ({
        list: run.name,
        perPage: run.perPage,
        answers: run.checked && { items: run.checked.items, found: run.checked.found, bytes: run.checked.bytes },
        figures: figuresOf(run.totals),
        turns: [...run.totals.values()].flatMap((t) => t.turns),
      }));
      writeFileSync(options.json, JSON.stringify({ machine, options: { ...options, token: undefined, databaseUrl: undefined }, lists }, null, 2));
    }
    for (const agent of agents) agent.destroy();
    await db?.end().catch(() => undefined);
    if (plain) await plain.stop().catch((error: unknown) => console.error(`stopping the plain server: ${String(error)}`));
    if (previousSandboxConfig && sandbox) await sandbox.configure(previousSandboxConfig).catch(() => undefined);
    if (stack) {
      await stack.stop().catch((error: unknown) => console.error(`stopping the stack: ${String(error)}`));
      if (stack.owned) console.log('stack stopped, its data directory removed');
    }
  }
  return limits.reason() ? 2 : failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
