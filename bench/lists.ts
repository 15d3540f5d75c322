/**
 * bench/lists: the list read path against a plain baseline, in one run. `GET /post?account_id=…&per_page=20`
 * (REST) and GraphQL `postsPage` with the same fields are timed against a bare Fastify + pg route doing the same
 * work and answering the same bytes (bench/support/plain-list-server.ts), in interleaved rounds. The three answers
 * are checked equal before anything is timed. A benchmark: it prints figures and never asserts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createAlphaSandboxControl } from '../src/sandbox/alpha/alpha-sandbox.control';
import { connectToStack, startOwnedStack, type BenchStack } from './support/stack';
import { ms, Samples, summarize, table } from './support/stats';

const ROOT = path.resolve(__dirname, '../..');

const USAGE = `Usage: npm run bench:lists -- [options]

  --posts N          posts in the listed account, created before timing (default 40)
  --per-page N       page size of the three lists (default 20)
  --connections C    requests in flight per target (default 16)
  --seconds S        length of one target's turn in a round (default 5)
  --rounds R         rounds; each runs plain, REST and GraphQL, the order rotating (default 3)
  --url URL --token TOKEN --database-url URL   a running stack instead of starting one (all three needed)
  --json FILE        also write the figures as JSON
  --profile-server DIR  write a V8 CPU profile of the server it starts into DIR
`;

const POST_FIELDS = `id postId locationId accountId state source createTime publishedTime updateTime scheduledTime searchUrl
  lastError { status reason message details at }
  params { languageCode summary topicType callToAction { actionType url } media { mediaFormat sourceUrl }
    event { title schedule { startDate { year month day } endDate { year month day } startTime { hours minutes seconds } endTime { hours minutes seconds } } }
    offer { couponCode redeemOnlineUrl termsConditions } scheduledTime alertType }`;
const LIST_QUERY = `query BenchList($accountId: ID, $perPage: Int) { postsPage(accountId: $accountId, perPage: $perPage) { found page perPage posts { ${POST_FIELDS} } } }`;

interface Target {
  name: 'plain' | 'REST' | 'GraphQL';
  url: URL;
  method: 'GET' | 'POST';
  body?: string;
}

interface Totals {
  requests: number;
  errors: number;
  seconds: number;
  latencies: Samples;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function send(target: Target, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      target.url,
      {
        method: target.method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(target.body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(target.body) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(target.body);
  });
}

/** C closed loops for `seconds`: each sends its next request when the previous one is answered. */
async function load(target: Target, token: string, connections: number, seconds: number, totals: Totals): Promise<void> {
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const sentAt = performance.now();
        try {
          const { status } = await send(target, token);
          if (status !== 200) totals.errors += 1;
        } catch {
          totals.errors += 1;
        }
        totals.latencies.push(performance.now() - sentAt);
        totals.requests += 1;
      }
    }),
  );
  totals.seconds += (performance.now() - started) / 1000;
}

/** The REST record of a GraphQL post, by this benchmark's own hand: names, ms times, lower-case source, no nulls in params. */
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

function startPlainServer(databaseUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/bench/support/plain-list-server.js'), databaseUrl], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (http:\/\/\S+)/.exec(output);
      if (match) resolve({ url: match[1]!, child });
    });
    child.once('exit', (code) => reject(new Error(`the plain server exited (${code}) before listening`)));
  });
}

async function seedPosts(stack: BenchStack, count: number): Promise<{ accountId: string }> {
  const target = stack.targets[0];
  if (!target) throw new Error('the stack has no connected location to post to');
  const sandbox = createAlphaSandboxControl(`${stack.baseUrl}/sandbox/alpha`);
  if (stack.owned) await sandbox.configure({ latencyMs: 0, processingMs: 0 });
  for (let index = 0; index < count; index += 1) {
    const response = await fetch(`${stack.baseUrl}/post?account_id=${target.accountId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ location_id: target.locationId, params: { topicType: 'STANDARD', languageCode: 'en', summary: `bench list ${index}` } }),
    });
    if (response.status !== 202) throw new Error(`POST /post answered ${response.status}: ${await response.text()}`);
  }
  // The list must stand still while it is timed: wait until no post of the account is still being sent.
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const response = await fetch(`${stack.baseUrl}/post?account_id=${target.accountId}&state=SENDING`, { headers: { authorization: `Bearer ${stack.token}` } });
    const body = (await response.json()) as { payload: { found: number } };
    if (body.payload.found === 0) return { accountId: target.accountId };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('posts were still SENDING after 60 s');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      posts: { type: 'string', default: '40' },
      'per-page': { type: 'string', default: '20' },
      connections: { type: 'string', default: '16' },
      seconds: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      url: { type: 'string' },
      token: { type: 'string' },
      'database-url': { type: 'string' },
      json: { type: 'string' },
      'profile-server': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const posts = Number(values.posts);
  const perPage = Number(values['per-page']);
  const connections = Number(values.connections);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());

  const stack = values.url
    ? await connectToStack({ url: values.url, token: values.token ?? '', databaseUrl: values['database-url'] })
    : await startOwnedStack({ root: ROOT, signal: controller.signal, profileDir: values['profile-server'] });
  let plain: { url: string; child: ChildProcess } | undefined;
  try {
    if (!stack.databaseUrl) throw new Error('the plain route needs the database: give --database-url');
    console.log(`bench/lists on ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const { accountId } = await seedPosts(stack, posts);
    plain = await startPlainServer(stack.databaseUrl);
    const query = `account_id=${accountId}&per_page=${perPage}`;
    const targets: Target[] = [
      { name: 'plain', url: new URL(`${plain.url}/post?${query}`), method: 'GET' },
      { name: 'REST', url: new URL(`${stack.baseUrl}/post?${query}`), method: 'GET' },
      { name: 'GraphQL', url: new URL(`${stack.baseUrl}/graphql`), method: 'POST', body: JSON.stringify({ query: LIST_QUERY, variables: { accountId, perPage } }) },
    ];

    // The three answers, equal before anything is timed.
    const [plainAnswer, restAnswer, graphqlAnswer] = await Promise.all(targets.map((target) => send(target, stack.token)));
    if (plainAnswer!.status !== 200 || restAnswer!.status !== 200 || graphqlAnswer!.status !== 200) {
      throw new Error(`a list did not answer 200: plain ${plainAnswer!.status}, REST ${restAnswer!.status}, GraphQL ${graphqlAnswer!.status}`);
    }
    if (plainAnswer!.body !== restAnswer!.body) {
      throw new Error(`REST and the plain route answer different bytes:\n  REST  ${restAnswer!.body.slice(0, 600)}\n  plain ${plainAnswer!.body.slice(0, 600)}`);
    }
    const page = (JSON.parse(graphqlAnswer!.body) as { data: { postsPage: { found: number; page: number; perPage: number; posts: Record<string, unknown>[] } } }).data.postsPage;
    const fromGraphql = JSON.stringify({ success: true, payload: { found: page.found, page: page.page, per_page: page.perPage, posts: page.posts.map(restRecordOf) } });
    if (fromGraphql !== restAnswer!.body) {
      throw new Error(`GraphQL's list is not REST's:\n  GraphQL as REST ${fromGraphql.slice(0, 600)}\n  REST            ${restAnswer!.body.slice(0, 600)}`);
    }
    const found = (JSON.parse(restAnswer!.body) as { payload: { found: number; posts: unknown[] } }).payload;
    console.log(`the three answers are equal: ${found.posts.length} posts of ${found.found}, ${restAnswer!.body.length} bytes`);

    // Warm-up: a second of each, not counted.
    for (const target of targets) await load(target, stack.token, connections, 1, { requests: 0, errors: 0, seconds: 0, latencies: new Samples() });

    const totals = new Map(targets.map((target) => [target.name, { requests: 0, errors: 0, seconds: 0, latencies: new Samples() } as Totals]));
    for (let round = 0; round < rounds && !controller.signal.aborted; round += 1) {
      const order = targets.map((_, index) => targets[(index + round) % targets.length]!);
      for (const target of order) {
        const before = totals.get(target.name)!.requests;
        await load(target, stack.token, connections, seconds, totals.get(target.name)!);
        console.log(`  round ${round + 1} ${target.name}: ${((totals.get(target.name)!.requests - before) / seconds).toFixed(0)} req/s`);
      }
    }

    const figures = targets.map((target) => {
      const t = totals.get(target.name)!;
      const latency = summarize(t.latencies.values());
      return { name: target.name, rps: t.requests / t.seconds, p50: latency.p50, p99: latency.p99, errors: t.errors };
    });
    const baseline = figures[0]!.rps;
    console.log('');
    console.log(
      table([
        ['target', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'of plain'],
        ...figures.map((f) => [f.name, f.rps.toFixed(0), ms(f.p50), ms(f.p99), String(f.errors), `${((f.rps / baseline) * 100).toFixed(0)}%`]),
      ]),
    );
    const rest = figures[1]!.rps / baseline;
    const graphql = figures[2]!.rps / baseline;
    console.log('');
    console.log(`Targets (${connections} connections, ${rounds} rounds of ${seconds} s each, interleaved)`);
    console.log(`  REST at least 80% of the plain route: ${(rest * 100).toFixed(0)}% -> ${rest >= 0.8 ? 'met' : 'MISSED'}`);
    console.log(`  GraphQL at least 60% of the plain route: ${(graphql * 100).toFixed(0)}% -> ${graphql >= 0.6 ? 'met' : 'MISSED'}`);
    if (values.json) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(values.json, JSON.stringify({ connections, seconds, rounds, figures }, null, 2));
    }
    return controller.signal.aborted ? 2 : 0;
  } finally {
    if (plain) {
      plain.child.kill('SIGTERM');
      await new Promise((resolve) => (plain!.child.exitCode !== null ? resolve(undefined) : plain!.child.once('exit', resolve)));
    }
    agent.destroy();
    await stack.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
