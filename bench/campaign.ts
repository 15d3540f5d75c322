/**
 * bench/campaign: a campaign within a provider budget (issue 29). Organization A's campaigns (createPostCampaign, 100
 * locations each) drain against the alpha sandbox's per-project quota while organization B creates one post every
 * second (POST /post); the service runs with an alpha budget a little under the quota. Prints what became of the
 * posts, how many calls the provider refused, the campaign's drain rate against the quota, B's create-to-LIVE and,
 * per worker process, the calls it made. A benchmark: it prints figures and never asserts. `npm run bench:campaign --
 * --help` lists the options; docs/benchmarks.md explains them.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { deadLetterQueueOf } from '../src/jobs/queue';
import { postPublishQueue } from '../src/post/post.queues';
import { sleep } from './support/abort';
import { readTimelines, type PostTimeline } from './support/breakdown';
import { decimalOption, integerOption, loadAverage, runBench, type BenchEnvironment } from './support/harness';
import { createConnectedOrganizations, targetsOf, type BenchOrganization } from './support/organizations';
import { createPost, createPostsPaced, type CreateRecord } from './support/posting';
import { graphql, type BenchStack } from './support/stack';
import { ms, percentileOfSorted, summarize, table, type Summary } from './support/stats';
import { PhaseRecorder, SubscriberPool } from './support/subscribers';

/** The budget's default share of the quota: 2.5% under it, the smallest margin its lateness rule is built for. */
const SMALLEST_MARGIN_BUDGET = 0.975;

const USAGE = `  --posts N            organization A's posts: campaigns of 100 locations (createPostCampaign), one post per
                       location (default 1000)
  --quota Q            the alpha sandbox's per-project quota, calls a second (its own process, started with it;
                       default 20)
  --budget B           the service's alpha budget, calls a second: ALPHA_BUDGET of every process (default 97.5% of
                       the quota, 19.5 of 20: the smallest margin the budget's lateness rule keeps within the
                       provider's rolling second, docs/jobs.md "Provider budgets")
  --single-every-ms M  organization B creates one post (POST /post) every M ms, on a schedule, until A's last post
                       is LIVE (default 1000)
  --drain-idle-s S     stop waiting after S seconds without a post of the run ending (default 60)
  (--workers: 1 or 2 worker processes beside the API, each with the same ALPHA_BUDGET; default 1)
`;

/** createPostCampaign takes at most this many locations. */
const CAMPAIGN_SIZE = 100;
/** B's locations: its posts go round them. */
const B_LOCATIONS = 10;

interface Options {
  posts: number;
  quota: number;
  budget: number;
  singleEveryMs: number;
  drainIdleMs: number;
}

const TARGETS = { refusedShare: 0.01, drainShareOfQuota: 0.9, singleP95Ms: 3000 };

/** What became of one organization's posts, from the database once the run ended. */
interface Outcome {
  total: number;
  states: Record<string, number>;
  deadLettered: number;
  retried: number;
}

/** One worker process's alpha calls during the run, from its own metrics. */
interface WorkerCalls {
  url: string;
  granted: number | undefined;
  refused: number | undefined;
  late: number | undefined;
}

interface Result {
  runId: string;
  loadAtStart: string;
  loadAtEnd: string;
  complete: boolean;
  a: Outcome;
  b: Outcome;
  campaigns: number;
  /** performance.now() of the first campaign's mutation sent / the last campaign's answer. */
  firstCampaignSentAt: number;
  campaignsCreatedMs: number;
  /** A's last LIVE event at the subscriber, ms after the first campaign was sent. */
  aLastLiveMs: number | undefined;
  aLive: number;
  /** A's first and last post as the provider stamped them (createTime), ms apart; the posts it has. */
  aProviderSpanMs: number | undefined;
  aProviderPosts: number;
  admitted: number;
  refused: number;
  callsDuringRetryAfter: number;
  /** Gaps between consecutive admitted post creates at the sandbox, ms: the budget spaces them 1000 / budget apart. */
  arrivalGaps: { p1: number | undefined; p5: number | undefined; p50: number | undefined };
  /** When each refusal came, seconds after the run's first admitted call. */
  refusalsAtS: number[];
  bCreated: number;
  bCreateErrors: Record<string, number>;
  bCreateToLive: Summary;
  bUnfinished: number;
  workers: WorkerCalls[];
}

/** The sum of the samples of `metric` whose labels include every one of `labels`, in a Prometheus text scrape. */
function sumOf(scrape: string, metric: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of scrape.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const close = line.lastIndexOf('}');
    const labelText = line.slice(metric.length + 1, close);
    if (Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`))) sum += Number(line.slice(close + 1).trim());
  }
  return sum;
}

/** A worker's alpha calls so far: given a slot of the budget, answered 429, slots given up late (undefined: not scraped). */
async function scrapeWorker(url: string): Promise<{ granted: number; refused: number; late: number } | undefined> {
  try {
    const response = await fetch(url);
    const text = await response.text();
    if (response.status !== 200) throw new Error(`HTTP ${response.status} ${text.slice(0, 200)}`);
    return {
      granted: sumOf(text, 'lg_provider_budget_calls_total', { provider: 'alpha' }),
      refused: sumOf(text, 'lg_provider_requests_total', { provider: 'alpha', status: '429' }),
      late: sumOf(text, 'lg_provider_budget_late_slots_total', { provider: 'alpha' }),
    };
  } catch (error) {
    console.log(`  (could not scrape ${url}: ${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
}

/** Jobs any process could take now (not scheduled later): the stack's own start-up work (the demo) is done at 0. */
async function jobsDueNow(databaseUrl: string): Promise<number> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'lg-bench' });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from pgboss.job where state in ('created', 'retry', 'active') and start_after <= now()`);
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/** Posts among `ids` whose publish job was dead-lettered (its `-dead` queue got it), whether settled yet or not. */
async function deadLettered(databaseUrl: string, ids: string[]): Promise<number> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'lg-bench' });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `select count(distinct data->>'postId')::int as n from (
         select data from pgboss.job where name = $1 union all select data from pgboss.archive where name = $1
       ) dead where data->>'postId' = any($2)`,
      [deadLetterQueueOf(postPublishQueue.name), ids],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/** The low end of a sample (bunched calls show there), and its median. */
function summarizeLow(values: number[]): { p1: number | undefined; p5: number | undefined; p50: number | undefined } {
  const sorted = Float64Array.from(values).sort();
  return { p1: percentileOfSorted(sorted, 1), p5: percentileOfSorted(sorted, 5), p50: percentileOfSorted(sorted, 50) };
}

function outcomeOf(timelines: PostTimeline[], dead: number): Outcome {
  const states: Record<string, number> = {};
  for (const timeline of timelines) states[timeline.state] = (states[timeline.state] ?? 0) + 1;
  return { total: timelines.length, states, deadLettered: dead, retried: timelines.filter((t) => t.retryCount > 0).length };
}

class CampaignBench {
  readonly runId = randomBytes(4).toString('hex');
  private readonly pools: SubscriberPool[] = [];

  constructor(
    private readonly stack: BenchStack,
    private readonly options: Options,
    private readonly signal: AbortSignal,
  ) {}

  private prefix(phase: string): string {
    return `bench ${this.runId} ${phase} `;
  }

  /** The stack as organization `organization` posts to it (its token, its locations). */
  private stackOf(organization: BenchOrganization): BenchStack {
    return { ...this.stack, token: organization.token, targets: targetsOf(organization) };
  }

  async subscribe(organization: BenchOrganization): Promise<SubscriberPool> {
    const pool = new SubscriberPool({ wsUrl: `${this.stack.baseUrl.replace(/^http/, 'ws')}/graphql`, token: organization.token, count: 1, signal: this.signal });
    this.pools.push(pool);
    await pool.open();
    return pool;
  }

  /**
   * Nobody acknowledges a graphql-ws subscription: it listens once it got an event. One post at a time until one
   * reaches its end at the subscriber; it also warms the path up (it goes before the sandbox is reset, uncounted).
   */
  async awaitListening(pool: SubscriberPool, organization: BenchOrganization): Promise<void> {
    for (let attempt = 1; attempt <= 10 && !this.signal.aborted; attempt++) {
      const recorder = new PhaseRecorder(this.prefix(`${organization.name}-ready-${attempt}`), 1);
      pool.setRecorder(recorder);
      const created = await createPost(this.stackOf(organization), 0, `${recorder.prefix}#0`, this.signal);
      if (!created.id) throw new Error(`could not create a post for ${organization.name}: ${created.error ?? 'aborted'}`);
      const deadline = performance.now() + 5000;
      while (recorder.probeTerminal.size === 0 && performance.now() < deadline && !this.signal.aborted) await sleep(20, this.signal);
      if (recorder.probeTerminal.size > 0) return;
    }
    if (!this.signal.aborted) throw new Error(`${organization.name}'s subscriber got no event after 10 posts`);
  }

  /** Until the stack's own start-up jobs (the demo's preparation) are done, so their calls are not counted. */
  async settle(databaseUrl: string, maxMs = 60_000): Promise<void> {
    const deadline = performance.now() + maxMs;
    let due = await jobsDueNow(databaseUrl);
    while (due > 0 && performance.now() < deadline && !this.signal.aborted) {
      await sleep(250, this.signal);
      due = await jobsDueNow(databaseUrl);
    }
    if (due > 0) console.log(`  ${due} job(s) of the stack's start still due after ${maxMs / 1000} s: their calls count in the run`);
  }

  /** A's campaigns, one after the other; the ids of their posts (a failed mutation throws: nothing to measure). */
  async createCampaigns(a: BenchOrganization, aPrefix: string, created: (ids: string[]) => void): Promise<void> {
    const locations = a.locationIds.slice(0, this.options.posts);
    for (let start = 0, n = 1; start < locations.length && !this.signal.aborted; start += CAMPAIGN_SIZE, n += 1) {
      const answer = await graphql<{ createPostCampaign: { posts: { id: string }[] } }>(
        this.stack.baseUrl,
        a.token,
        'mutation BenchCampaign($a: ID, $input: CreatePostCampaignInput!) { createPostCampaign(accountId: $a, input: $input) { posts { id } } }',
        { a: a.accountId, input: { locationIds: locations.slice(start, start + CAMPAIGN_SIZE), params: { summary: `${aPrefix}campaign ${n}`, languageCode: 'en' } } },
      );
      created(answer.createPostCampaign.posts.map((post) => post.id));
    }
  }

  /** Until every one of `ids` has reached its end at `recorder`, or `idleMs` pass without one doing so. */
  async drain(recorder: PhaseRecorder, ids: () => string[], expected: () => number, idleMs: number): Promise<boolean> {
    let ended = 0;
    let lastEnd = performance.now();
    for (;;) {
      const done = ids().filter((id) => recorder.probeTerminal.has(id)).length;
      if (done >= expected()) return true;
      if (done > ended) {
        ended = done;
        lastEnd = performance.now();
      }
      if (this.signal.aborted || performance.now() - lastEnd > idleMs) return false;
      await sleep(50, this.signal);
    }
  }

  async run(environment: BenchEnvironment, result: (partial: Partial<Result>) => void): Promise<void> {
    const databaseUrl = this.stack.databaseUrl;
    if (!this.stack.owned || !databaseUrl) throw new Error('bench/campaign writes its organizations into the database of the stack it starts: run it without --url');
    const [a, b] = await createConnectedOrganizations(databaseUrl, [
      { name: 'A', alphaAccountId: `bench-a-${this.runId}`, locations: this.options.posts },
      { name: 'B', alphaAccountId: `bench-b-${this.runId}`, locations: B_LOCATIONS },
    ]);
    console.log(`  organizations: A with ${a!.locationIds.length} connected location(s), B with ${b!.locationIds.length} (written into the stack's database)`);
    const aPool = await this.subscribe(a!);
    const bPool = await this.subscribe(b!);
    await this.awaitListening(aPool, a!);
    await this.awaitListening(bPool, b!);
    await this.settle(databaseUrl);
    // The warm-up's calls (and the demo's) are not the run's: the sandbox starts over, its quota kept.
    await environment.resetSandbox();
    return this.measure(environment, databaseUrl, [a!, b!], [aPool, bPool], result);
  }

  private async measure(
    { sandbox }: BenchEnvironment,
    databaseUrl: string,
    [a, b]: [BenchOrganization, BenchOrganization],
    [aPool, bPool]: [SubscriberPool, SubscriberPool],
    result: (partial: Partial<Result>) => void,
  ): Promise<void> {
    const aRecorder = new PhaseRecorder(this.prefix('A'), 1);
    const bRecorder = new PhaseRecorder(this.prefix('B'), 1);
    aPool.setRecorder(aRecorder);
    bPool.setRecorder(bRecorder);
    const workerUrls = this.stack.workerMetricsUrls ?? [];
    const before = await Promise.all(workerUrls.map(scrapeWorker));
    result({ runId: this.runId, loadAtStart: loadAverage() });
    console.log(`  measuring: load average ${loadAverage()}`);

    const aIds: string[] = [];
    let aDone = false;
    const firstCampaignSentAt = performance.now();
    // B's schedule runs from the first campaign on, a post every --single-every-ms, until A is done.
    const bRun = createPostsPaced(this.stackOf(b), {
      count: Number.MAX_SAFE_INTEGER,
      rate: 1000 / this.options.singleEveryMs,
      prefix: bRecorder.prefix,
      signal: this.signal,
      maxInFlight: 2,
      stop: () => aDone,
    });
    await this.createCampaigns(a, aRecorder.prefix, (ids) => aIds.push(...ids));
    const campaignsCreatedMs = performance.now() - firstCampaignSentAt;
    console.log(`  ${aIds.length} posts of A in ${Math.ceil(aIds.length / CAMPAIGN_SIZE)} campaign(s), created in ${(campaignsCreatedMs / 1000).toFixed(1)} s; draining…`);
    const aComplete = await this.drain(aRecorder, () => aIds, () => aIds.length, this.options.drainIdleMs);
    aDone = true;
    const bRecords: CreateRecord[] = await bRun;
    const bIds = bRecords.flatMap((record) => (record.id ? [record.id] : []));
    const bComplete = await this.drain(bRecorder, () => bIds, () => bIds.length, this.options.drainIdleMs);
    const stoppedAt = performance.now();
    const loadAtEnd = loadAverage();

    const after = await Promise.all(workerUrls.map(scrapeWorker));
    const state = await sandbox.state();
    const aProviderTimes = state.posts
      .filter((post) => post.accountId === a.alphaAccountId && post.createTime)
      .map((post) => Date.parse(post.createTime!))
      .sort((x, y) => x - y);
    // Every admitted post create of the run (A's and B's), as the sandbox stamped it: how evenly the calls came.
    const arrivals = state.posts.flatMap((post) => (post.createTime ? [Date.parse(post.createTime)] : [])).sort((x, y) => x - y);
    const arrivalGaps = arrivals.slice(1).map((at, index) => at - arrivals[index]!);
    const aLiveTimes = aIds.flatMap((id) => {
      const end = aRecorder.probeTerminal.get(id);
      return end?.state === 'LIVE' ? [end.at] : [];
    });
    const bCreateToLive: number[] = [];
    let bUnfinished = 0;
    for (const record of bRecords) {
      if (!record.id) continue;
      const end = bRecorder.probeTerminal.get(record.id);
      // Not ended yet: at least this slow; leaving it out would flatter the percentiles.
      if (!end) bUnfinished += 1;
      bCreateToLive.push((end?.at ?? stoppedAt) - record.sentAt);
    }
    const bCreateErrors: Record<string, number> = {};
    for (const record of bRecords) if (record.error) bCreateErrors[record.error.slice(0, 160)] = (bCreateErrors[record.error.slice(0, 160)] ?? 0) + 1;
    const workers = workerUrls.map((url, index) => {
      const start = before[index];
      const end = after[index];
      const delta = (key: 'granted' | 'refused' | 'late') => (start && end ? end[key] - start[key] : undefined);
      return { url, granted: delta('granted'), refused: delta('refused'), late: delta('late') };
    });

    result({
      loadAtEnd,
      complete: aComplete && bComplete && !this.signal.aborted,
      a: outcomeOf(await readTimelines(databaseUrl, aRecorder.prefix), await deadLettered(databaseUrl, aIds)),
      b: outcomeOf(await readTimelines(databaseUrl, bRecorder.prefix), await deadLettered(databaseUrl, bIds)),
      campaigns: Math.ceil(aIds.length / CAMPAIGN_SIZE),
      firstCampaignSentAt,
      campaignsCreatedMs,
      aLastLiveMs: aLiveTimes.length > 0 ? Math.max(...aLiveTimes) - firstCampaignSentAt : undefined,
      aLive: aLiveTimes.length,
      aProviderSpanMs: aProviderTimes.length > 1 ? aProviderTimes[aProviderTimes.length - 1]! - aProviderTimes[0]! : undefined,
      aProviderPosts: aProviderTimes.length,
      admitted: state.quota.admitted,
      refused: state.quota.refused,
      callsDuringRetryAfter: state.quota.callsDuringRetryAfter,
      arrivalGaps: summarizeLow(arrivalGaps),
      refusalsAtS: state.quota.refusals.map((refusal) => (Date.parse(refusal.at) - (arrivals[0] ?? 0)) / 1000),
      bCreated: bIds.length,
      bCreateErrors,
      bCreateToLive: summarize(bCreateToLive),
      bUnfinished,
      workers,
    });
  }

  async close(): Promise<void> {
    for (const pool of this.pools) await pool.close();
  }
}

function outcomeRow(name: string, outcome: Outcome | undefined): string[] {
  if (!outcome) return [name, '-', '-', '-', '-', '-', '-'];
  const other = Object.entries(outcome.states).filter(([state]) => state !== 'LIVE' && state !== 'ERROR');
  return [
    name,
    String(outcome.total),
    String(outcome.states.LIVE ?? 0),
    String(outcome.states.ERROR ?? 0),
    String(outcome.deadLettered),
    String(outcome.retried),
    other.length > 0 ? other.map(([state, count]) => `${state} ${count}`).join(', ') : '-',
  ];
}

function report(r: Partial<Result>, options: Options & { workers: number }, aborted: string | undefined): Record<string, unknown> {
  console.log('');
  console.log(`Figures (run ${r.runId ?? '-'}; quota ${options.quota}/s at the sandbox, ALPHA_BUDGET ${options.budget}/s in each of ${options.workers} worker process(es))`);
  console.log(`  load average when measuring began: ${r.loadAtStart ?? '-'}; when it ended: ${r.loadAtEnd ?? '-'}`);
  console.log('');
  console.log(table([['posts', 'total', 'LIVE', 'ERROR', 'dead-lettered', 'retried', 'other states'], outcomeRow(`A (${r.campaigns ?? 0} campaign(s))`, r.a), outcomeRow('B (single posts)', r.b)]));

  const calls = (r.admitted ?? 0) + (r.refused ?? 0);
  const refusedShare = calls > 0 ? (r.refused ?? 0) / calls : undefined;
  const drainEndToEnd = r.aLastLiveMs ? (r.aLive ?? 0) / (r.aLastLiveMs / 1000) : undefined;
  const drainAtProvider = r.aProviderSpanMs ? (r.aProviderPosts ?? 0) / (r.aProviderSpanMs / 1000) : undefined;
  const pct = (value: number | undefined) => (value === undefined ? 'n/a' : `${(value * 100).toFixed(1)}%`);
  const share = (rate: number | undefined) => (rate === undefined ? undefined : rate / options.quota);
  console.log('');
  console.log(
    table([
      ['figure', 'value'],
      ['provider calls admitted / refused (sandbox quota)', `${r.admitted ?? '-'} / ${r.refused ?? '-'}`],
      ['refused share', pct(refusedShare)],
      ['calls during a Retry-After', String(r.callsDuringRetryAfter ?? '-')],
      ['refusals at, s after the first call', r.refusalsAtS && r.refusalsAtS.length > 0 ? r.refusalsAtS.map((at) => at.toFixed(1)).join(', ') : '-'],
      [`gap between admitted creates p1 / p5 / p50, ms (budget: ${(1000 / options.budget).toFixed(1)})`, r.arrivalGaps ? `${ms(r.arrivalGaps.p1)} / ${ms(r.arrivalGaps.p5)} / ${ms(r.arrivalGaps.p50)}` : '-'],
      ['A: campaigns created in', r.campaignsCreatedMs === undefined ? '-' : `${ms(r.campaignsCreatedMs / 1000)} s`],
      ['A: first campaign sent -> last LIVE', r.aLastLiveMs === undefined ? '-' : `${ms(r.aLastLiveMs / 1000)} s`],
      ['A: drain, posts/s (first campaign sent -> last LIVE)', `${ms(drainEndToEnd, 2)} = ${pct(share(drainEndToEnd))} of the quota`],
      ['A: posts/s at the provider (first -> last createTime)', `${ms(drainAtProvider, 2)} = ${pct(share(drainAtProvider))} of the quota`],
      ['B: posts created', `${r.bCreated ?? '-'}${r.bUnfinished ? ` (${r.bUnfinished} not ended: counted with their time so far)` : ''}`],
      ['B: create-to-LIVE p50 / p95 / max, ms', r.bCreateToLive ? `${ms(r.bCreateToLive.p50, 0)} / ${ms(r.bCreateToLive.p95, 0)} / ${ms(r.bCreateToLive.max, 0)}` : '-'],
    ]),
  );
  if (r.workers && r.workers.length > 0) {
    console.log('');
    console.log('Each worker process (its own metrics, during the run)');
    console.log(
      table([
        ['worker', 'alpha calls in a budget slot', 'alpha 429s', 'slots given up late', 'share of the calls'],
        ...r.workers.map((worker, index) => {
          const total = r.workers!.reduce((sum, w) => sum + (w.granted ?? 0), 0);
          return [`${index + 1} (${worker.url})`, String(worker.granted ?? 'n/a'), String(worker.refused ?? 'n/a'), String(worker.late ?? 'n/a'), pct(total > 0 && worker.granted !== undefined ? worker.granted / total : undefined)];
        }),
      ]),
    );
  }
  console.log('');
  console.log('  drain (first campaign sent -> last LIVE) is the target\'s figure: what the organization waits for, creation,');
  console.log('  queueing and the last post\'s way back included. At the provider: the pacing alone, A\'s calls over their own span.');
  console.log(`  B's posts share the budget: A can have at most ${options.budget} - ${(1000 / options.singleEveryMs).toFixed(2)} = ${(options.budget - 1000 / options.singleEveryMs).toFixed(2)} calls/s of it (${pct((options.budget - 1000 / options.singleEveryMs) / options.quota)} of the quota).`);
  if (r.bCreateErrors && Object.keys(r.bCreateErrors).length > 0) {
    console.log('');
    for (const [error, count] of Object.entries(r.bCreateErrors)) console.log(`  B: ${count} create(s) failed: ${error}`);
  }

  const verdict = (value: number | undefined, ok: (v: number) => boolean) => (value === undefined ? 'not measured' : ok(value) ? 'reached' : 'NOT reached');
  const allLive = (o: Outcome | undefined) => o !== undefined && (o.states.LIVE ?? 0) === o.total && o.deadLettered === 0;
  console.log('');
  console.log(`Targets${r.complete === false ? ' (incomplete run)' : ''}`);
  console.log(`  every post LIVE, none in ERROR or dead-lettered: ${r.a && r.b ? (allLive(r.a) && allLive(r.b) ? 'reached' : 'NOT reached') : 'not measured'}`);
  console.log(`  refused <= ${pct(TARGETS.refusedShare)} of the calls: ${pct(refusedShare)} -> ${verdict(refusedShare, (v) => v <= TARGETS.refusedShare)}`);
  console.log(`  drain >= ${pct(TARGETS.drainShareOfQuota)} of the quota: ${pct(share(drainEndToEnd))} -> ${verdict(share(drainEndToEnd), (v) => v >= TARGETS.drainShareOfQuota)}`);
  console.log(`  B's create-to-LIVE p95 <= ${TARGETS.singleP95Ms} ms: ${ms(r.bCreateToLive?.p95, 0)} ms -> ${verdict(r.bCreateToLive?.p95, (v) => v <= TARGETS.singleP95Ms)}`);
  if (aborted) {
    console.log('');
    console.log(`Stopped early: ${aborted}. The figures above are what was measured until then.`);
  }
  return { result: r, drainEndToEnd, drainAtProvider, refusedShare };
}

runBench({
  name: 'campaign',
  usage: USAGE,
  values: ['posts', 'quota', 'budget', 'single-every-ms', 'drain-idle-s'],
  timeoutSeconds: 900,
  defaultWorkers: 1,
  sandbox: { latencyMs: 0, processingMs: 0 },
  stackEnv: (options: Options) => ({ ALPHA_BUDGET: `${options.budget}/s` }),
  // The quota is the sandbox process's own from its start (a reset keeps it); each worker's calls are read from its
  // own metrics listener.
  stackShape: (options: Options) => ({ sandboxesApart: true, workerMetrics: true, sandboxEnv: { ALPHA_SANDBOX_QUOTA_PER_SECOND: String(options.quota) } }),
  read(values, common): Options {
    if (common.workers < 1 || common.workers > 2) throw new Error(`--workers must be 1 or 2 for bench/campaign, not ${common.workers}`);
    const quota = integerOption('quota', values.quota, 20, 1, 1_000_000);
    return {
      posts: integerOption('posts', values.posts, 1000, 1, 100_000),
      quota,
      budget: decimalOption('budget', values.budget, quota * SMALLEST_MARGIN_BUDGET, 0.1),
      singleEveryMs: integerOption('single-every-ms', values['single-every-ms'], 1000, 10),
      drainIdleMs: integerOption('drain-idle-s', values['drain-idle-s'], 60, 1) * 1000,
    };
  },
  start(options, signal) {
    const result: Partial<Result> = {};
    let bench: CampaignBench | undefined;
    console.log(
      `  ${options.posts} posts of A in campaigns of ${CAMPAIGN_SIZE}, B one post every ${options.singleEveryMs} ms; quota ${options.quota}/s, budget ${options.budget}/s, ${options.workers} worker process(es)`,
    );
    return {
      async measure(environment: BenchEnvironment) {
        bench = new CampaignBench(environment.stack, options, signal);
        await bench.run(environment, (partial) => Object.assign(result, partial));
      },
      report(_stack, aborted) {
        return report(result, options, aborted);
      },
      async close() {
        await bench?.close();
      },
    };
  },
});
