/**
 * bench/posts: posts per second from create to LIVE, create-to-LIVE latency, and commit-to-subscriber latency
 * with 1 and with 1,000 graphql-ws subscribers, on a stack with zero sandbox latency. A benchmark: it prints
 * figures and never asserts. `npm run bench:posts -- --help` lists the options; docs/benchmarks.md explains them.
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { sleep } from './support/abort';
import { fetchPattern, pendingPublishJobs, readTimelines, type FetchPattern, type PostTimeline } from './support/breakdown';
import { cpuNow, cpuSince, cpuSplit, stackCpuNow, type CpuReading } from './support/cpu';
import { integerOption, runBench, type BenchEnvironment } from './support/harness';
import { countsSince, type CountingProxy, type WireCounts } from './support/pg-count-proxy';
import { PLAIN_USAGE, startPlainPipeline, type PlainPipeline } from './support/plain-pipeline';
import { createPost } from './support/posting';
import type { BenchStack, PostTarget } from './support/stack';
import { ms, summarize, table, type Summary } from './support/stats';
import { PhaseRecorder, SubscriberPool } from './support/subscribers';
import { printComparison, printShapes, printWire } from './support/wire-report';

const USAGE = `  --posts N            posts of the 1-subscriber run (default 2000)
  --concurrency C      POST /post requests in flight (default 64)
  --fanout-posts N     posts of the fan-out run, concurrency C (default 200)
  --fanout-paced-posts N  posts of the paced fan-out run on the same sockets (default 50; 0 skips it)
  --fanout-rate R      posts per second of the paced fan-out run, sent on a fixed schedule (default 5)
  --subscribers S      subscribers of the fan-out runs, one socket each (default 1000)
  --sequential-posts N posts of the unloaded run: 1 subscriber, one request at a time (default 100; 0 skips it)
  --warmup N           posts created and awaited before the first run, not measured (default 20)
  --scenarios LIST     comma-separated: sequential,fanout,fanout-paced,single,plain (default all, run in this order);
                       plain: the plain pipeline (bench/support/plain-pipeline-server.ts) with single's posts and
                       concurrency, compared with single; with it the sandboxes run in processes of their own
  --drain-idle-s S     stop waiting for events after S seconds without one (default 30)
${PLAIN_USAGE}`;

interface Options {
  posts: number;
  concurrency: number;
  fanoutPosts: number;
  fanoutPacedPosts: number;
  fanoutRate: number;
  subscribers: number;
  sequentialPosts: number;
  warmup: number;
  scenarios: Set<string>;
  drainIdleMs: number;
  plainBatch: number;
  plainLoops: number;
}

const SCENARIOS = ['sequential', 'fanout', 'fanout-paced', 'single', 'plain'];

interface Scenario {
  name: string;
  subscribers: number;
  posts: number;
  concurrency: number;
  /** Posts per second on a fixed schedule (open loop), or undefined: as fast as `concurrency` allows. */
  rate: number | undefined;
  /** Run against the plain pipeline instead of the service. */
  plain?: boolean;
}

/** One POST /post as the client saw it. */
interface CreateRecord {
  index: number;
  target: PostTarget;
  /** performance.now() when the request was sent / its answer read. */
  sentAt: number;
  answeredAt: number;
  /** Date.now() when sent: compared with the server's own timestamps. */
  sentWallClock: number;
  status: number;
  id: string | undefined;
  error: string | undefined;
}

interface Breakdown {
  sentToTxStart: Summary;
  txStartToJobFetched: Summary;
  jobFetchedToLive: Summary;
  liveToProbe: Summary;
  fetches: FetchPattern;
  gaps: Summary;
  retried: number;
}

interface ScenarioResult {
  scenario: Scenario;
  complete: boolean;
  requested: number;
  created: number;
  createErrors: Map<string, number>;
  live: number;
  /** Created posts not yet LIVE when the run stopped: they count in create-to-LIVE with their time so far. */
  unfinished: number;
  otherTerminal: Map<string, number>;
  postsPerSecond: number | undefined;
  createRatePerSecond: number | undefined;
  createToLive: Summary;
  postLatency: Summary;
  commitToSubscriber: Summary;
  fanoutSpread: Summary;
  eventsReceived: number;
  eventsExpected: number;
  shortSubscribers: number;
  subscriberErrors: string[];
  wallSeconds: number;
  cpu: CpuReading;
  benchLoopDelayP99: number;
  breakdown: Breakdown | undefined;
  /** What the pipeline sent PostgreSQL during the run, counted on the wire (when counted). */
  wire: WireCounts | undefined;
}

/** Where a scenario's posts go, and how its CPU and statements are read. */
interface Pipeline {
  stack: BenchStack;
  cpu(): CpuReading;
  statements: CountingProxy | undefined;
}

/** What measure() needs of the subscribers: the graphql-ws pool, or the plain pipeline's event stream. */
type Subscribers = Pick<SubscriberPool, 'size' | 'errors' | 'setRecorder'>;

class Aborted extends Error {}

class Bench {
  private readonly runId = randomBytes(4).toString('hex');
  private readonly wsUrl: string;
  private warmedUp = false;

  constructor(
    private readonly stack: BenchStack,
    private readonly options: Options,
    private readonly signal: AbortSignal,
  ) {
    this.wsUrl = `${stack.baseUrl.replace(/^http/, 'ws')}/graphql`;
  }

  private prefix(phase: string): string {
    return `bench ${this.runId} ${phase} `;
  }

  private async createOne(index: number, prefix: string, stack: BenchStack): Promise<CreateRecord> {
    const sentWallClock = Date.now();
    const record = await createPost(stack, index, `${prefix}#${index}`, this.signal);
    return { ...record, target: stack.targets[index % stack.targets.length]!, sentWallClock };
  }

  private async createPosts(count: number, concurrency: number, prefix: string, rate?: number, stack = this.stack): Promise<CreateRecord[]> {
    const records: CreateRecord[] = [];
    let next = 0;
    const start = performance.now();
    const lane = async () => {
      while (next < count && !this.signal.aborted) {
        const index = next++;
        if (rate !== undefined) await sleep(start + (index * 1000) / rate - performance.now(), this.signal);
        if (this.signal.aborted) break;
        records.push(await this.createOne(index, prefix, stack));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
    return records;
  }

  /** Until `condition` holds, `idleMs` pass without a new event of the phase, or the run is aborted. */
  private async drain(recorder: PhaseRecorder, condition: () => boolean, idleMs: number): Promise<boolean> {
    while (!condition()) {
      if (this.signal.aborted) return false;
      if (performance.now() - recorder.lastEventAt > idleMs) return false;
      await sleep(20, this.signal);
    }
    return true;
  }

  /**
   * Subscriptions are acknowledged by nobody in graphql-ws: a subscriber is known to be listening once it got
   * an event. One post at a time is created until every subscriber received an event of it.
   */
  private async awaitListening(pool: SubscriberPool, name: string): Promise<void> {
    for (let attempt = 1; attempt <= 20; attempt++) {
      const recorder = new PhaseRecorder(this.prefix(`${name}-ready-${attempt}`), pool.size);
      pool.setRecorder(recorder);
      const [created] = await this.createPosts(1, 1, recorder.prefix);
      if (!created?.id) throw new Error(`could not create a post: ${created?.error ?? 'aborted'}`);
      const started = performance.now();
      recorder.lastEventAt = started;
      if (await this.drain(recorder, () => recorder.short(1) === 0 && recorder.probeTerminal.size === 1, 5000)) return;
      if (this.signal.aborted) throw new Aborted('aborted');
    }
    throw new Error(`${name}: subscribers did not all receive events after 20 attempts`);
  }

  /** Until the previous scenario's publish jobs are done (when the database is known), so runs stay apart. */
  private async settle(maxMs = 120_000): Promise<void> {
    if (!this.stack.databaseUrl) return;
    const deadline = performance.now() + maxMs;
    let pending = await pendingPublishJobs(this.stack.databaseUrl);
    if (pending === 0) return;
    log(`  waiting for ${pending} publish job(s) left from the previous run…`);
    while (pending > 0 && performance.now() < deadline && !this.signal.aborted) {
      await sleep(250, this.signal);
      pending = await pendingPublishJobs(this.stack.databaseUrl);
    }
    if (pending > 0) log(`  ${pending} publish job(s) still pending: the next run shares the worker with them`);
  }

  /**
   * Scenarios with the same subscribers, one after the other on the same sockets. Results are handed to `done`
   * as each scenario ends, so a run stopped by the time limit still reports the scenarios it finished.
   */
  async runGroup(scenarios: Scenario[], done: (result: ScenarioResult) => void): Promise<void> {
    const first = scenarios[0]!;
    await this.settle();
    const pool = new SubscriberPool({ wsUrl: this.wsUrl, token: this.stack.token, count: first.subscribers, signal: this.signal });
    try {
      const opened = performance.now();
      await pool.open();
      log(`  ${first.name}: ${first.subscribers} subscriber(s) connected in ${((performance.now() - opened) / 1000).toFixed(1)} s`);
      await this.awaitListening(pool, first.name);
      // JIT and pools warm up once per server process: the first group does it for all.
      if (this.options.warmup > 0 && !this.warmedUp) {
        this.warmedUp = true;
        const warmup = new PhaseRecorder(this.prefix('warmup'), pool.size);
        pool.setRecorder(warmup);
        const created = (await this.createPosts(this.options.warmup, first.concurrency, warmup.prefix)).filter((r) => r.id).length;
        warmup.lastEventAt = performance.now();
        await this.drain(warmup, () => warmup.probeTerminal.size >= created && warmup.received >= 2 * created * pool.size, 10_000);
      }
      for (const scenario of scenarios) {
        await this.settle();
        if (this.signal.aborted) throw new Aborted('aborted');
        const how = scenario.rate === undefined ? `concurrency ${scenario.concurrency}` : `${scenario.rate} posts/s`;
        log(`  ${scenario.name}: measuring ${scenario.posts} posts, ${how}…`);
        done(await this.measure(scenario, pool, this.servicePipeline()));
      }
    } finally {
      pool.setRecorder(undefined);
      await pool.close();
    }
  }

  private servicePipeline(): Pipeline {
    return { stack: this.stack, cpu: () => stackCpuNow(this.stack), statements: this.stack.statements };
  }

  /**
   * The plain pipeline's run: its server started (once), its one subscriber (the GET /events stream) known to be
   * listening, the same warm-up as the service's, then the scenario.
   */
  async runPlain(scenario: Scenario, plain: PlainPipeline, done: (result: ScenarioResult) => void): Promise<void> {
    const stack = plain.asStack(this.stack);
    let recorder: PhaseRecorder | undefined;
    const subscribers: Subscribers = { size: 1, errors: [], setRecorder: (next) => (recorder = next) };
    // Its events carry no summary: the phase is the recorder of the moment. Like the service's, the SENDING
    // event is left out of commit-to-subscriber (the service's carries no updateTime).
    await plain.subscribe((event, at, wallClock) => {
      const state = String(event.state);
      recorder?.record(0, { id: String(event.id), state, version: 0, updateTime: state === 'SENDING' ? null : String(event.updateTime), params: { summary: null } }, at, wallClock);
    });
    const pipeline: Pipeline = { stack, cpu: () => cpuNow(plain.pid, this.stack.postmasterPid(), this.stack.sandboxPids()), statements: plain.statements };
    const warmup = new PhaseRecorder(this.prefix('plain-warmup'), 1);
    subscribers.setRecorder(warmup);
    const created = (await this.createPosts(Math.max(1, this.options.warmup), scenario.concurrency, warmup.prefix, undefined, stack)).filter((r) => r.id).length;
    warmup.lastEventAt = performance.now();
    await this.drain(warmup, () => warmup.probeTerminal.size >= created, 10_000);
    if (warmup.probeTerminal.size === 0) throw new Error('the plain pipeline: no post of the warm-up reached its subscriber');
    if (this.signal.aborted) throw new Aborted('aborted');
    log(`  ${scenario.name}: measuring ${scenario.posts} posts, concurrency ${scenario.concurrency}…`);
    done(await this.measure(scenario, subscribers, pipeline));
  }

  private async measure(scenario: Scenario, pool: Subscribers, pipeline: Pipeline): Promise<ScenarioResult> {
    const recorder = new PhaseRecorder(this.prefix(scenario.name), pool.size);
    pool.setRecorder(recorder);
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const wireBefore = await pipeline.statements?.counts();
    const cpuBefore = pipeline.cpu();
    const started = performance.now();

    const records = await this.createPosts(scenario.posts, scenario.concurrency, recorder.prefix, scenario.rate, pipeline.stack);
    const created = records.filter((record) => record.id !== undefined);
    const expectedEvents = 2 * created.length * pool.size; // SENDING at the create, LIVE when published
    recorder.lastEventAt = Math.max(recorder.lastEventAt, performance.now());
    const complete =
      (await this.drain(
        recorder,
        () => recorder.probeTerminal.size >= created.length && recorder.received >= expectedEvents,
        this.options.drainIdleMs,
      )) && !this.signal.aborted;

    const wallSeconds = (performance.now() - started) / 1000;
    const cpuAfter = pipeline.cpu();
    const wireAfter = await pipeline.statements?.counts();
    loopDelay.disable();
    pool.setRecorder(undefined);

    const createErrors = new Map<string, number>();
    for (const record of records) {
      if (record.error) {
        const key = record.error.slice(0, 160);
        createErrors.set(key, (createErrors.get(key) ?? 0) + 1);
      }
    }
    const createToLive: number[] = [];
    const stoppedAt = performance.now();
    let unfinished = 0;
    const otherTerminal = new Map<string, number>();
    let firstSent = Infinity;
    let lastLive = -Infinity;
    let lastAnswer = -Infinity;
    for (const record of records) {
      firstSent = Math.min(firstSent, record.sentAt);
      if (record.id) lastAnswer = Math.max(lastAnswer, record.answeredAt);
      if (!record.id) continue;
      const terminal = recorder.probeTerminal.get(record.id);
      if (!terminal) {
        // Not LIVE yet: at least this slow. Leaving it out would flatter the percentiles.
        unfinished += 1;
        createToLive.push(stoppedAt - record.sentAt);
      } else if (terminal.state === 'LIVE') {
        createToLive.push(terminal.at - record.sentAt);
        lastLive = Math.max(lastLive, terminal.at);
      } else otherTerminal.set(terminal.state, (otherTerminal.get(terminal.state) ?? 0) + 1);
    }
    const live = createToLive.length - unfinished;
    const spreads: number[] = [];
    for (const spread of recorder.spreads.values()) if (spread.count === pool.size && pool.size > 1) spreads.push(spread.last - spread.first);

    const result: ScenarioResult = {
      scenario,
      complete,
      requested: scenario.posts,
      created: created.length,
      createErrors,
      live,
      unfinished,
      otherTerminal,
      postsPerSecond: live > 0 ? live / ((lastLive - firstSent) / 1000) : undefined,
      createRatePerSecond: created.length > 0 ? created.length / ((lastAnswer - firstSent) / 1000) : undefined,
      createToLive: summarize(createToLive),
      postLatency: summarize(created.map((record) => record.answeredAt - record.sentAt)),
      commitToSubscriber: summarize(recorder.commitToSubscriber.values()),
      fanoutSpread: summarize(spreads),
      eventsReceived: recorder.received,
      eventsExpected: expectedEvents,
      shortSubscribers: recorder.short(2 * created.length),
      subscriberErrors: [...pool.errors],
      wallSeconds,
      cpu: cpuSince(cpuBefore, cpuAfter),
      benchLoopDelayP99: loopDelay.percentile(99) / 1e6,
      breakdown: undefined,
      wire: wireBefore && wireAfter ? countsSince(wireBefore, wireAfter) : undefined,
    };
    if (this.stack.databaseUrl && !scenario.plain && !this.signal.aborted) {
      try {
        result.breakdown = breakdownOf(await readTimelines(this.stack.databaseUrl, recorder.prefix), records, recorder);
      } catch (error) {
        log(`  (no server-side breakdown: ${error instanceof Error ? error.message : String(error)})`);
      }
    }
    return result;
  }

}

function breakdownOf(timelines: PostTimeline[], records: CreateRecord[], recorder: PhaseRecorder): Breakdown {
  const sentWallClock = new Map(records.filter((r) => r.id).map((r) => [r.id!, r.sentWallClock]));
  const sentToTxStart: number[] = [];
  const txStartToJobFetched: number[] = [];
  const jobFetchedToLive: number[] = [];
  for (const timeline of timelines) {
    const sent = sentWallClock.get(timeline.id);
    if (sent !== undefined) sentToTxStart.push(timeline.createdAt - sent);
    if (timeline.jobStartedOn !== undefined) txStartToJobFetched.push(timeline.jobStartedOn - timeline.createdAt);
    if (timeline.jobStartedOn !== undefined && timeline.updatedAt !== undefined && timeline.state === 'LIVE') {
      jobFetchedToLive.push(timeline.updatedAt - timeline.jobStartedOn);
    }
  }
  const pattern = fetchPattern(timelines);
  return {
    sentToTxStart: summarize(sentToTxStart),
    txStartToJobFetched: summarize(txStartToJobFetched),
    jobFetchedToLive: summarize(jobFetchedToLive),
    // The probe's own commit-to-subscriber figures: what the last stage of create-to-LIVE is made of.
    liveToProbe: summarize(probeCommitLatencies(timelines, recorder)),
    fetches: pattern,
    gaps: summarize(pattern.gaps),
    retried: timelines.filter((t) => t.retryCount > 0).length,
  };
}

function probeCommitLatencies(timelines: PostTimeline[], recorder: PhaseRecorder): number[] {
  // probeTerminal holds performance.now() arrivals; convert to the wall clock through the time origin.
  const values: number[] = [];
  for (const timeline of timelines) {
    const arrival = recorder.probeTerminal.get(timeline.id);
    if (arrival && timeline.updatedAt !== undefined) values.push(performance.timeOrigin + arrival.at - timeline.updatedAt);
  }
  return values;
}

function log(line: string): void {
  console.log(line);
}

const TARGETS = { postsPerSecond: 500, createToLiveP50: 100, commitToSubscriberP95: 50 };

function report(results: ScenarioResult[], options: Options, stack: BenchStack | undefined, aborted: string | undefined): void {
  console.log('');
  console.log('Figures (ms unless stated; create-to-LIVE at the first subscriber; commit-to-subscriber over all subscribers and events)');
  const rows = [['scenario', 'subs', 'N', 'conc/rate', 'posts/s', 'c2L p50', 'c2L p95', 'c2S p50', 'c2S p95', 'events recv/expected', 'done']];
  for (const r of results) {
    // With unfinished posts a percentile may be one of their times so far: then it is a lower bound.
    const c2l = (value: number | undefined) => `${r.unfinished > 0 ? '>=' : ''}${ms(value)}`;
    rows.push([
      r.scenario.name,
      String(r.scenario.subscribers),
      r.created === r.requested ? String(r.requested) : `${r.created}/${r.requested}`,
      r.scenario.rate === undefined ? String(r.scenario.concurrency) : `${r.scenario.rate}/s`,
      ms(r.postsPerSecond, 0),
      c2l(r.createToLive.p50),
      c2l(r.createToLive.p95),
      ms(r.commitToSubscriber.p50),
      ms(r.commitToSubscriber.p95),
      `${r.eventsReceived}/${r.eventsExpected}`,
      r.complete ? 'yes' : 'NO',
    ]);
  }
  console.log(table(rows));
  if (results.some((r) => r.unfinished > 0)) {
    console.log('  >= : some posts were not LIVE when the run stopped; they count with their time so far (a lower bound).');
  }

  console.log('');
  console.log('Details');
  const details = [['scenario', 'LIVE', 'POST p50', 'POST p95', 'creates/s', 'c2L max', 'c2S max', 'fan-out spread p50/p95', results.some((r) => r.cpu.sandboxes !== undefined) ? 'CPU s service/pg/bench/sandboxes' : 'CPU s server/pg/bench', 'wall s', 'bench loop p99']];
  for (const r of results) {
    details.push([
      r.scenario.name,
      `${r.live}/${r.created}`,
      ms(r.postLatency.p50),
      ms(r.postLatency.p95),
      ms(r.createRatePerSecond, 0),
      `${r.unfinished > 0 ? '>=' : ''}${ms(r.createToLive.max)}`,
      ms(r.commitToSubscriber.max),
      r.scenario.subscribers > 1 ? `${ms(r.fanoutSpread.p50)}/${ms(r.fanoutSpread.p95)}` : '-',
      cpuSplit(r.cpu, ms),
      ms(r.wallSeconds),
      ms(r.benchLoopDelayP99),
    ]);
  }
  console.log(table(details));

  const withBreakdown = results.filter((r) => r.breakdown);
  if (withBreakdown.length > 0) {
    console.log('');
    console.log('Where create-to-LIVE goes (server timestamps from the database; p50/p95 ms)');
    const stages = [['scenario', 'sent->create tx', 'create tx->job fetched', 'job fetched->LIVE stamped', 'LIVE stamped->probe event', 'fetches', 'batch mean/max', 'fetch gap p50/p95/max', 'gaps>1s', 'retried']];
    for (const r of withBreakdown) {
      const b = r.breakdown!;
      const pair = (s: Summary) => `${ms(s.p50)}/${ms(s.p95)}`;
      stages.push([
        r.scenario.name,
        pair(b.sentToTxStart),
        pair(b.txStartToJobFetched),
        pair(b.jobFetchedToLive),
        pair(b.liveToProbe),
        String(b.fetches.fetches),
        `${b.fetches.meanBatch.toFixed(1)}/${b.fetches.maxBatch}`,
        `${ms(b.gaps.p50)}/${ms(b.gaps.p95)}/${ms(b.gaps.max)}`,
        String(b.fetches.longGaps),
        String(b.retried),
      ]);
    }
    console.log(table(stages));
  }

  const problems: string[] = [];
  for (const r of results) {
    for (const [error, count] of r.createErrors) problems.push(`${r.scenario.name}: ${count} create(s) failed: ${error}`);
    for (const [state, count] of r.otherTerminal) problems.push(`${r.scenario.name}: ${count} post(s) ended ${state}`);
    if (r.shortSubscribers > 0) {
      const why = r.complete ? '' : ' (the run stopped before they could arrive)';
      problems.push(`${r.scenario.name}: ${r.shortSubscribers} subscriber(s) did not receive every event${why}`);
    }
    for (const error of r.subscriberErrors.slice(0, 5)) problems.push(`${r.scenario.name}: ${error}`);
  }
  const warnings = stack?.serverWarnings() ?? [];
  if (warnings.length > 0) problems.push(`the server logged ${warnings.length} warning line(s); first: ${warnings[0]!.slice(0, 300)}`);
  if (problems.length > 0) {
    console.log('');
    console.log('Problems');
    for (const problem of problems) console.log(`  - ${problem}`);
  }

  const single = results.find((r) => r.scenario.name === 'single');
  const fanouts = results.filter((r) => r.scenario.subscribers > 1);
  const verdict = (value: number | undefined, ok: (v: number) => boolean, complete: boolean | undefined) =>
    value === undefined ? 'not measured' : `${ok(value) ? 'reached' : 'NOT reached'}${complete === false ? ' (incomplete run)' : ''}`;
  console.log('');
  console.log('Targets');
  console.log(
    `  >= ${TARGETS.postsPerSecond} posts/s create-to-LIVE (1 subscriber, N=${single?.created ?? '-'}): ${ms(single?.postsPerSecond, 0)} -> ` +
      verdict(single?.postsPerSecond, (v) => v >= TARGETS.postsPerSecond, single?.complete),
  );
  console.log(
    `  p50 create-to-LIVE < ${TARGETS.createToLiveP50} ms (1 subscriber, N=${single?.created ?? '-'}): ${ms(single?.createToLive.p50)} ms -> ` +
      verdict(single?.createToLive.p50, (v) => v < TARGETS.createToLiveP50, single?.complete),
  );
  if (fanouts.length === 0) console.log(`  p95 commit-to-subscriber < ${TARGETS.commitToSubscriberP95} ms at ${options.subscribers} subscribers: not measured`);
  for (const fanout of fanouts) {
    const load = fanout.scenario.rate === undefined ? `concurrency ${fanout.scenario.concurrency}` : `${fanout.scenario.rate} posts/s`;
    console.log(
      `  p95 commit-to-subscriber < ${TARGETS.commitToSubscriberP95} ms at ${fanout.scenario.subscribers} subscribers (${fanout.scenario.name}, N=${fanout.created}, ${load}): ` +
        `${ms(fanout.commitToSubscriber.p95)} ms -> ` +
        verdict(fanout.commitToSubscriber.p95, (v) => v < TARGETS.commitToSubscriberP95, fanout.complete),
    );
  }
  if (aborted) {
    console.log('');
    console.log(`Stopped early: ${aborted}. The figures above are what was measured until then.`);
  }
}

/** Statements and CPU per post of every run, and the service's `single` against `plain`, with the service's shapes. */
function reportPlain(results: ScenarioResult[]): Record<string, unknown> | undefined {
  const runOf = (r: ScenarioResult) => ({ name: r.scenario.name, units: r.live, wire: r.wire, cpu: r.cpu });
  printWire('post', results.filter((r) => r.wire || r.cpu.server !== undefined).map(runOf));
  const single = results.find((r) => r.scenario.name === 'single');
  const plain = results.find((r) => r.scenario.plain);
  if (single) printShapes('The service (single)', 'post', runOf(single), 25);
  if (plain) printShapes('The plain pipeline', 'post', runOf(plain), 8);
  if (!single || !plain) return undefined;
  const compared = (r: ScenarioResult) => ({ ...runOf(r), perSecond: r.postsPerSecond, latency: r.createToLive });
  return printComparison('post', 'create-to-LIVE', compared(single), compared(plain));
}

function toJson(results: ScenarioResult[]): unknown {
  return results.map((r) => ({
    ...r,
    createErrors: Object.fromEntries(r.createErrors),
    otherTerminal: Object.fromEntries(r.otherTerminal),
    breakdown: r.breakdown && { ...r.breakdown, fetches: { ...r.breakdown.fetches, gaps: undefined } },
  }));
}

/** The scenarios to run, in groups sharing their subscribers' sockets. */
function groupsOf(options: Options): Scenario[][] {
  // Cheapest first: when the global time limit cuts a run short, it cuts the longest one.
  const groups: Scenario[][] = [];
  const wanted = (name: string, posts: number) => options.scenarios.has(name) && posts > 0;
  if (wanted('sequential', options.sequentialPosts)) {
    groups.push([{ name: 'sequential', subscribers: 1, posts: options.sequentialPosts, concurrency: 1, rate: undefined }]);
  }
  const fanout: Scenario[] = [];
  if (wanted('fanout', options.fanoutPosts)) {
    fanout.push({ name: 'fanout', subscribers: options.subscribers, posts: options.fanoutPosts, concurrency: options.concurrency, rate: undefined });
  }
  if (wanted('fanout-paced', options.fanoutPacedPosts)) {
    fanout.push({ name: 'fanout-paced', subscribers: options.subscribers, posts: options.fanoutPacedPosts, concurrency: options.concurrency, rate: options.fanoutRate });
  }
  if (fanout.length > 0) groups.push(fanout);
  if (wanted('single', options.posts)) {
    groups.push([{ name: 'single', subscribers: 1, posts: options.posts, concurrency: options.concurrency, rate: undefined }]);
  }
  return groups;
}

/** The plain pipeline's run: single's posts and concurrency, one subscriber. */
function plainScenario(options: Options): Scenario | undefined {
  if (!options.scenarios.has('plain')) return undefined;
  return { name: 'plain', subscribers: 1, posts: options.posts, concurrency: options.concurrency, rate: undefined, plain: true };
}

runBench({
  name: 'posts',
  usage: USAGE,
  values: ['posts', 'concurrency', 'fanout-posts', 'fanout-paced-posts', 'fanout-rate', 'subscribers', 'sequential-posts', 'warmup', 'scenarios', 'drain-idle-s', 'plain-batch', 'plain-loops'],
  timeoutSeconds: 600,
  databaseUrl: { why: 'for the server-side breakdown', required: false },
  sandbox: { latencyMs: 0, processingMs: 0 },
  // The plain pipeline calls the same sandbox process as the service; every run's statements are counted.
  stackShape: (options: Options) => ({ sandboxesApart: options.scenarios.has('plain'), countStatements: true }),
  read(values): Options {
    const scenarios = new Set((values.scenarios ?? SCENARIOS.join(',')).split(',').map((s) => s.trim()).filter(Boolean));
    for (const scenario of scenarios) {
      if (!SCENARIOS.includes(scenario)) throw new Error(`--scenarios: unknown scenario ${scenario}`);
    }
    return {
      posts: integerOption('posts', values.posts, 2000, 1),
      concurrency: integerOption('concurrency', values.concurrency, 64, 1),
      fanoutPosts: integerOption('fanout-posts', values['fanout-posts'], 200, 1),
      fanoutPacedPosts: integerOption('fanout-paced-posts', values['fanout-paced-posts'], 50, 0),
      fanoutRate: integerOption('fanout-rate', values['fanout-rate'], 5, 1),
      subscribers: integerOption('subscribers', values.subscribers, 1000, 1),
      sequentialPosts: integerOption('sequential-posts', values['sequential-posts'], 100, 0),
      warmup: integerOption('warmup', values.warmup, 20, 0),
      scenarios,
      drainIdleMs: integerOption('drain-idle-s', values['drain-idle-s'], 30, 1) * 1000,
      plainBatch: integerOption('plain-batch', values['plain-batch'], 8, 1, 1000),
      plainLoops: integerOption('plain-loops', values['plain-loops'], 2, 1, 64),
    };
  },
  start(options, signal) {
    const results: ScenarioResult[] = [];
    let plain: PlainPipeline | undefined;
    return {
      async measure({ stack, resetSandbox }: BenchEnvironment) {
        console.log(`  posting to ${stack.targets.length} location(s) of ${new Set(stack.targets.map((t) => t.accountId)).size} account(s)`);
        const bench = new Bench(stack, options, signal);
        for (const group of groupsOf(options)) {
          if (signal.aborted) break;
          try {
            await bench.runGroup(group, (result) => results.push(result));
          } catch (error) {
            if (signal.aborted) break;
            throw error;
          }
          // The sandbox keeps every post in memory: each group starts with an empty one.
          await resetSandbox();
        }
        const scenario = plainScenario(options);
        if (scenario && !signal.aborted) {
          if (stack.sandboxPids().length === 0) {
            log('  plain: skipped: it needs the stack the bench starts, with the alpha sandbox in a process of its own (no --url)');
            return;
          }
          const started = performance.now();
          plain = await startPlainPipeline(stack, { batch: options.plainBatch, loops: options.plainLoops, signal });
          log(
            `  plain: ${plain.url} (dist-dev/bench/support/plain-pipeline-server.js, its own process, up in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
              `batches of ${options.plainBatch}, ${options.plainLoops} worker loop(s); alpha sandbox ${stack.alphaUrl})`,
          );
          await bench.runPlain(scenario, plain, (result) => results.push(result));
        }
      },
      report(stack, aborted) {
        report(results, options, stack, aborted);
        const comparison = reportPlain(results);
        return { results: toJson(results), comparison };
      },
      async close() {
        await plain?.stop();
      },
      forceStop() {
        plain?.kill();
      },
    };
  },
});
