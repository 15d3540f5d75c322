/**
 * bench/fanout: commit-to-subscriber latency of one subscription document shared by S graphql-ws subscribers (one
 * group of identical subscriptions) at a paced rate of posts, compared with a plain `ws` broadcast of frames of the
 * same size to the same number of sockets in the same run, with the CPU each spends per delivery; and the server's
 * memory per idle subscription. A benchmark: it prints figures and never asserts. `--help` lists the options;
 * docs/benchmarks.md explains them.
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { sleep } from './support/abort';
import { pendingPublishJobs } from './support/breakdown';
import { BroadcastClients, startBroadcastServer, type BroadcastServer } from './support/broadcast';
import { POST_FRAME_LAYOUT, type NextFrame } from './support/broadcast-server';
import { cpuNow, cpuSince, cpuSplit, stackCpuNow, type CpuReading } from './support/cpu';
import { FrameProbe } from './support/frame-probe';
import { decimalOption, integerOption, runBench, type BenchEnvironment } from './support/harness';
import { LOAD_USAGE, startCpuLoad, type CpuLoad } from './support/load';
import { readMemoryAfterGc, residentBytes, type MemoryReading } from './support/inspector';
import { createPostsPaced, type CreateRecord } from './support/posting';
import type { BenchStack } from './support/stack';
import { ms, summarize, table, type Summary } from './support/stats';
import { PhaseRecorder, SubscriberPool, SUBSCRIPTION, type PostUpdatedEvent } from './support/subscribers';

const USAGE = `  --subscribers S      graphql-ws subscribers, one socket each, all with the same subscription (default 1000);
                       the plain baseline connects as many bare ws sockets
  --posts N            posts per service run, and broadcast ticks per baseline run (default 50)
  --rate R             posts (ticks) per second, on a fixed schedule (default 5)
  --rounds K           measured runs: baseline, then K times (service, baseline) (default 1)
  --warmup N           posts (ticks) sent before measuring, not measured (default 5)
  --settle-s S         idle seconds before each memory reading (default 2)
  --no-inspector       do not start the server with --inspect: memory is then RSS only, without a forced GC
${LOAD_USAGE}`;

interface Options {
  subscribers: number;
  posts: number;
  rate: number;
  rounds: number;
  warmup: number;
  settleMs: number;
  inspector: boolean;
  /** CPU-burning sibling processes during the measured runs (bench/support/load.ts). */
  load: number;
}

/**
 * The issues' targets (memory per idle subscription: issue 19's 12 KB, was 20; the service's CPU per delivered event
 * at most twice the plain broadcast's per frame: issue 27). 1 KB = 1024 bytes.
 */
const TARGETS = { p95Ms: 50, ratio: 1.5, kbPerSubscription: 12, cpuRatio: 2 };
/** A run stops waiting for deliveries after this long without one. */
const DRAIN_IDLE_MS = 15_000;

type EventRecord = Parameters<PhaseRecorder['record']>[1];

/** A `next` frame of the post subscription. */
interface PostFrame {
  id: string;
  type: 'next';
  payload: { data: { postUpdated: PostUpdatedEvent } };
}

/** Per event (post id and version, or baseline frame) with a commit stamp: its first and last delivery. */
interface EventDeliveries {
  firstAt: number;
  lastAt: number;
  minLatency: number;
  maxLatency: number;
  count: number;
}

/** PhaseRecorder (every delivery's latency, per-subscriber counts), plus per-event first and last deliveries. */
class FanoutRecorder extends PhaseRecorder {
  readonly events = new Map<string, EventDeliveries>();

  override record(subscriber: number, event: EventRecord, at: number, wallClock: number): void {
    super.record(subscriber, event, at, wallClock);
    if (event.updateTime === null) return;
    const latency = wallClock - Date.parse(event.updateTime);
    const key = `${event.id}:${event.version}`;
    const entry = this.events.get(key);
    if (!entry) this.events.set(key, { firstAt: at, lastAt: at, minLatency: latency, maxLatency: latency, count: 1 });
    else {
      entry.lastAt = Math.max(entry.lastAt, at);
      entry.minLatency = Math.min(entry.minLatency, latency);
      entry.maxLatency = Math.max(entry.maxLatency, latency);
      entry.count += 1;
    }
  }
}

interface RunResult {
  name: string;
  /** `alone`: the same posts seen by one subscriber, before the others open (what the posts cost without the fan-out). */
  kind: 'service' | 'alone' | 'baseline';
  subscribers: number;
  /** Posts created (service) or ticks broadcast (baseline). */
  posts: number;
  rate: number;
  frameBytes: number | undefined;
  complete: boolean;
  /** Every (subscriber, stamped event) delivery: arrival (Date.now()) − updateTime. */
  latency: Summary;
  /** Per stamped event: its first / last delivery's latency. */
  firstDelivery: Summary;
  lastDelivery: Summary;
  /** Per stamped event that every subscriber got: last arrival − first arrival (performance.now()). */
  spread: Summary;
  /** Stamped deliveries received / expected; missing = expected − received. */
  stampedReceived: number;
  stampedExpected: number;
  /** All deliveries of the run (service: SENDING and LIVE events) received / expected. */
  received: number;
  expected: number;
  shortSubscribers: number;
  createErrors: Record<string, number>;
  /** Baseline only: how long the broadcast server's send loop over every socket took, per frame. */
  sendLoop: Summary | undefined;
  /** CPU seconds: the service process (or the broadcast server), PostgreSQL, the benchmark, the provider sandboxes. */
  cpu: CpuReading;
  /** Baseline only: the service's CPU seconds meanwhile, posting nothing with its S subscribers open (its background work). */
  serviceIdleCpu: number | undefined;
  /**
   * `alone` only: the service's CPU seconds per second before its posts, its one subscriber open: the background to
   * take off its posts (the baseline runs' is measured with S subscribers, whose keep-alive an `alone` run has not).
   */
  aloneIdlePerSecond?: number;
  wallSeconds: number;
  benchLoopDelayP99: number;
  /** Raw latencies, kept to pool the runs of one kind (not written to JSON). */
  samples: Float64Array;
}

interface MemoryFigures {
  method: string;
  subscriptions: number;
  before: MemoryReading | undefined;
  after: MemoryReading | undefined;
  rssBefore: number | undefined;
  rssAfter: number | undefined;
  /** (heapUsed + external) after − before, per subscription, bytes. */
  heapPerSubscription: number | undefined;
  rssPerSubscription: number | undefined;
  error: string | undefined;
  /** The plain baseline's server: the same per bare ws socket, after gc() (--expose-gc). */
  baselineHeapPerSocket: number | undefined;
  baselineRssPerSocket: number | undefined;
}

class Aborted extends Error {}

function log(line: string): void {
  console.log(line);
}

function concat(arrays: Float64Array[]): Float64Array {
  const out = new Float64Array(arrays.reduce((n, a) => n + a.length, 0));
  let offset = 0;
  for (const array of arrays) {
    out.set(array, offset);
    offset += array.length;
  }
  return out;
}

/** What a run's recorder saw, in figures. */
function figuresOf(recorder: FanoutRecorder, subscribers: number) {
  const first: number[] = [];
  const last: number[] = [];
  const spread: number[] = [];
  for (const event of recorder.events.values()) {
    first.push(event.minLatency);
    last.push(event.maxLatency);
    if (event.count === subscribers && subscribers > 1) spread.push(event.lastAt - event.firstAt);
  }
  const samples = Float64Array.from(recorder.commitToSubscriber.values());
  return {
    latency: summarize(samples),
    firstDelivery: summarize(first),
    lastDelivery: summarize(last),
    spread: summarize(spread),
    stampedReceived: samples.length,
    samples,
  };
}

class FanoutBench {
  private readonly runId = randomBytes(4).toString('hex');
  private readonly wsUrl: string;
  pool: SubscriberPool | undefined;
  baselineServer: BroadcastServer | undefined;
  baselineClients: BroadcastClients | undefined;
  /** The service's LIVE frame as the probe received it, and its size with a measured run's summary. */
  template: NextFrame | undefined;
  frameBytes: number | undefined;
  readonly memory: MemoryFigures;

  private readonly inspectorPort: number | undefined;

  constructor(
    private readonly stack: BenchStack,
    private readonly options: Options,
    private readonly signal: AbortSignal,
  ) {
    this.inspectorPort = stack.inspectorPort;
    this.wsUrl = `${stack.baseUrl.replace(/^http/, 'ws')}/graphql`;
    this.memory = {
      method: stack.inspectorPort
        ? 'server process.memoryUsage() after two forced full GCs (V8 inspector HeapProfiler.collectGarbage); RSS from /proc'
        : stack.serverPid
          ? 'RSS from /proc only (no inspector: no forced GC)'
          : 'not measured (server pid unknown: --url)',
      subscriptions: options.subscribers,
      before: undefined,
      after: undefined,
      rssBefore: undefined,
      rssAfter: undefined,
      heapPerSubscription: undefined,
      rssPerSubscription: undefined,
      error: undefined,
      baselineHeapPerSocket: undefined,
      baselineRssPerSocket: undefined,
    };
  }

  private prefix(phase: string): string {
    return `bench ${this.runId} ${phase} `;
  }

  private async readServerMemory(): Promise<{ reading: MemoryReading | undefined; rss: number | undefined }> {
    await sleep(this.options.settleMs, this.signal);
    let reading: MemoryReading | undefined;
    if (this.inspectorPort !== undefined) {
      try {
        reading = await readMemoryAfterGc(this.inspectorPort);
      } catch (error) {
        this.memory.error ??= `inspector: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    return { reading, rss: residentBytes(this.stack.serverPid) };
  }

  /**
   * Warms the service up (JIT, pools) with a few posts seen by one hand-made subscriber (and a few throwaway
   * ones), and keeps one of the LIVE frames it received: the baseline's frames are built after it.
   */
  async warmUpAndCaptureFrame(): Promise<void> {
    const probe = await FrameProbe.open({ wsUrl: this.wsUrl, token: this.stack.token, query: SUBSCRIPTION });
    try {
      const prefix = this.prefix('frame');
      const liveFrames = () =>
        probe.frames.filter((frame) => {
          const event = (JSON.parse(frame) as PostFrame).payload.data.postUpdated;
          return event.state === 'LIVE' && event.params.summary?.startsWith(prefix);
        });
      // The subscription is not acknowledged: posts go until one is seen LIVE.
      for (let attempt = 0; attempt < 20 && liveFrames().length === 0; attempt++) {
        const [record] = await createPostsPaced(this.stack, { count: 1, rate: 1, prefix: `${prefix}${attempt}`, signal: this.signal });
        if (!record?.id) throw new Error(`could not create a post: ${record?.error ?? 'aborted'}`);
        const deadline = performance.now() + 5_000;
        while (liveFrames().length === 0 && performance.now() < deadline && !this.signal.aborted) await sleep(20, this.signal);
        if (this.signal.aborted) throw new Aborted('aborted');
      }
      const frame = liveFrames()[0];
      if (!frame) throw new Error('the frame probe saw no LIVE event');
      if (this.options.warmup > 0) {
        // A few throwaway subscribers too, so that the code of subscribing and of the fan-out is compiled before
        // the first memory reading (it would count as memory of the subscriptions otherwise).
        const warm = new SubscriberPool({ wsUrl: this.wsUrl, token: this.stack.token, count: Math.min(50, this.options.subscribers), signal: this.signal });
        try {
          await warm.open();
          const records = await createPostsPaced(this.stack, { count: this.options.warmup, rate: this.options.rate, prefix: this.prefix('warmup'), signal: this.signal });
          const ids = new Set(records.flatMap((r) => (r.id ? [r.id] : [])));
          const deadline = performance.now() + 15_000;
          const seen = () => probe.frames.filter((f) => f.includes('"LIVE"') && f.includes(this.prefix('warmup'))).length;
          while (seen() < ids.size && performance.now() < deadline && !this.signal.aborted) await sleep(20, this.signal);
        } finally {
          await warm.close();
        }
      }
      this.template = JSON.parse(frame) as NextFrame;
      // The frame of a measured run differs only by its summary (and stamps of the same length).
      const measured = JSON.parse(frame) as PostFrame;
      measured.payload.data.postUpdated.params.summary = `${this.prefix('service-1')}#${Math.floor(this.options.posts / 2)}`;
      this.frameBytes = Buffer.byteLength(JSON.stringify(measured));
      log(`  a LIVE frame of the service: ${Buffer.byteLength(frame)} bytes as received; ${this.frameBytes} bytes with a measured run's summary`);
    } finally {
      probe.close();
    }
  }

  /** Opens the S subscribers; memory is read before and after, both idle. */
  async openSubscribers(): Promise<void> {
    const before = await this.readServerMemory();
    this.memory.before = before.reading;
    this.memory.rssBefore = before.rss;
    const pool = new SubscriberPool({ wsUrl: this.wsUrl, token: this.stack.token, count: this.options.subscribers, signal: this.signal });
    this.pool = pool;
    const opened = performance.now();
    await pool.open();
    log(`  ${pool.size} graphql-ws subscriber(s) connected in ${((performance.now() - opened) / 1000).toFixed(1)} s`);
    await this.awaitListening(pool);
    const after = await this.readServerMemory();
    this.memory.after = after.reading;
    this.memory.rssAfter = after.rss;
    const S = this.options.subscribers;
    if (before.reading && after.reading) {
      const retained = (m: MemoryReading) => m.heapUsed + m.external;
      this.memory.heapPerSubscription = (retained(after.reading) - retained(before.reading)) / S;
    }
    if (before.rss !== undefined && after.rss !== undefined) this.memory.rssPerSubscription = (after.rss - before.rss) / S;
    log(
      `  server memory per idle subscription: heap+external ${kb(this.memory.heapPerSubscription)} KB, RSS ${kb(this.memory.rssPerSubscription)} KB` +
        (this.memory.error ? ` (${this.memory.error})` : ''),
    );
    if (this.options.warmup > 0) await this.serviceRun('warmup-fanout', this.options.warmup);
  }

  /** graphql-ws does not acknowledge subscriptions: posts are created until every subscriber got an event. */
  private async awaitListening(pool: SubscriberPool): Promise<void> {
    for (let attempt = 1; attempt <= 20; attempt++) {
      const recorder = new FanoutRecorder(this.prefix(`ready-${attempt}`), pool.size);
      pool.setRecorder(recorder);
      const [created] = await createPostsPaced(this.stack, { count: 1, rate: 1, prefix: recorder.prefix, signal: this.signal });
      if (!created?.id) throw new Error(`could not create a post: ${created?.error ?? 'aborted'}`);
      recorder.lastEventAt = performance.now();
      const ok = await this.drain(recorder, () => recorder.short(1) === 0 && recorder.probeTerminal.size === 1, 5_000);
      pool.setRecorder(undefined);
      if (ok) return;
      if (this.signal.aborted) throw new Aborted('aborted');
    }
    throw new Error('subscribers did not all receive events after 20 attempts');
  }

  private async drain(recorder: PhaseRecorder, condition: () => boolean, idleMs: number): Promise<boolean> {
    while (!condition()) {
      if (this.signal.aborted) return false;
      if (performance.now() - recorder.lastEventAt > idleMs) return false;
      await sleep(20, this.signal);
    }
    return true;
  }

  /** Until the previous run's publish jobs are done (when the database is known), so runs stay apart. */
  private async settlePublishJobs(maxMs = 60_000): Promise<void> {
    if (!this.stack.databaseUrl) return;
    const deadline = performance.now() + maxMs;
    let pending = await pendingPublishJobs(this.stack.databaseUrl);
    while (pending > 0 && performance.now() < deadline && !this.signal.aborted) {
      await sleep(250, this.signal);
      pending = await pendingPublishJobs(this.stack.databaseUrl);
    }
    if (pending > 0) log(`  ${pending} publish job(s) still pending: the next run shares the worker with them`);
  }

  /**
   * The posts of a measured run seen by one subscriber alone, before the S others open: the service's CPU per post
   * without the fan-out, which the report takes off the service runs' CPU to show what the fan-out itself costs.
   */
  async aloneRun(name: string, posts: number): Promise<RunResult> {
    const alone = new SubscriberPool({ wsUrl: this.wsUrl, token: this.stack.token, count: 1, signal: this.signal });
    try {
      await alone.open();
      await this.awaitListening(alone);
      await this.settlePublishJobs();
      const idleBefore = stackCpuNow(this.stack);
      const idleStarted = performance.now();
      await sleep(this.options.settleMs, this.signal);
      const idleCpu = cpuSince(idleBefore, stackCpuNow(this.stack)).server;
      const idleSeconds = (performance.now() - idleStarted) / 1000;
      const result = await this.serviceRun(name, posts, alone, 'alone');
      return idleCpu === undefined ? result : { ...result, aloneIdlePerSecond: idleCpu / idleSeconds };
    } finally {
      await alone.close();
    }
  }

  async serviceRun(name: string, posts: number, pool = this.pool!, kind: 'service' | 'alone' = 'service'): Promise<RunResult> {
    await this.settlePublishJobs();
    if (this.signal.aborted) throw new Aborted('aborted');
    const recorder = new FanoutRecorder(this.prefix(name), pool.size);
    pool.setRecorder(recorder);
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const cpuBefore = stackCpuNow(this.stack);
    const started = performance.now();
    let records: CreateRecord[] = [];
    let complete = false;
    let created = 0;
    try {
      records = await createPostsPaced(this.stack, { count: posts, rate: this.options.rate, prefix: recorder.prefix, signal: this.signal });
      created = records.filter((r) => r.id).length;
      recorder.lastEventAt = Math.max(recorder.lastEventAt, performance.now());
      complete =
        (await this.drain(recorder, () => recorder.probeTerminal.size >= created && recorder.received >= 2 * created * pool.size, DRAIN_IDLE_MS)) &&
        !this.signal.aborted;
    } finally {
      pool.setRecorder(undefined);
      loopDelay.disable();
    }
    const wallSeconds = (performance.now() - started) / 1000;
    const cpu = cpuSince(cpuBefore, stackCpuNow(this.stack));
    const createErrors: Record<string, number> = {};
    for (const record of records) if (record.error) createErrors[record.error.slice(0, 160)] = (createErrors[record.error.slice(0, 160)] ?? 0) + 1;
    return {
      name,
      kind,
      subscribers: pool.size,
      posts: created,
      rate: this.options.rate,
      frameBytes: this.frameBytes,
      complete,
      ...figuresOf(recorder, pool.size),
      // One stamped event per post: the change to LIVE (SENDING, at the create, has no updateTime).
      stampedExpected: created * pool.size,
      received: recorder.received,
      expected: 2 * created * pool.size,
      shortSubscribers: recorder.short(2 * created),
      createErrors,
      sendLoop: undefined,
      cpu,
      serviceIdleCpu: undefined,
      wallSeconds,
      benchLoopDelayP99: loopDelay.percentile(99) / 1e6,
    };
  }

  /** Starts the broadcast server and connects S bare ws clients; its memory per socket is read as the service's. */
  async openBaseline(): Promise<void> {
    const server = await startBroadcastServer(this.signal);
    this.baselineServer = server;
    await sleep(this.options.settleMs, this.signal);
    const before = await server.memory();
    const rssBefore = residentBytes(server.pid);
    const clients = new BroadcastClients({ url: `ws://127.0.0.1:${server.port}`, count: this.options.subscribers, signal: this.signal });
    this.baselineClients = clients;
    const opened = performance.now();
    await clients.connect();
    log(`  ${clients.size} bare ws client(s) of the baseline connected in ${((performance.now() - opened) / 1000).toFixed(1)} s`);
    await sleep(this.options.settleMs, this.signal);
    const after = await server.memory();
    const rssAfter = residentBytes(server.pid);
    const retained = (m: NodeJS.MemoryUsage) => m.heapUsed + m.external;
    this.memory.baselineHeapPerSocket = (retained(after.usage) - retained(before.usage)) / this.options.subscribers;
    if (rssBefore !== undefined && rssAfter !== undefined) this.memory.baselineRssPerSocket = (rssAfter - rssBefore) / this.options.subscribers;
    if (this.options.warmup > 0) await this.baselineRun('warmup-baseline', this.options.warmup);
  }

  async baselineRun(name: string, ticks: number): Promise<RunResult> {
    const server = this.baselineServer!;
    const clients = this.baselineClients!;
    const recorder = new FanoutRecorder(this.prefix(name), clients.size);
    clients.setRecorder(recorder);
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const cpuBefore = cpuNow(server.pid, undefined);
    const serviceBefore = stackCpuNow(this.stack);
    const started = performance.now();
    // The service sends two frames per post (SENDING at the create, LIVE once published): so does the baseline,
    // the second half a period after the first, both the size of the service's LIVE frame and both stamped.
    const framesPerTick = 2;
    let done: Awaited<ReturnType<BroadcastServer['run']>> | undefined;
    let complete = false;
    try {
      try {
        done = await server.run({
          ticks,
          rate: this.options.rate,
          framesPerTick,
          gapMs: 500 / this.options.rate,
          template: this.template!,
          layout: POST_FRAME_LAYOUT,
          frameBytes: this.frameBytes!,
          prefix: recorder.prefix,
        });
      } catch (error) {
        // Stopped (time limit, Ctrl-C): what arrived so far is reported, as an incomplete run.
        if (!this.signal.aborted) throw error;
        return this.baselineResult(name, recorder, ticks, framesPerTick, undefined, false, started, [cpuBefore, serviceBefore], loopDelay);
      }
      recorder.lastEventAt = Math.max(recorder.lastEventAt, performance.now());
      const expected = done.frames * clients.size;
      complete = (await this.drain(recorder, () => recorder.received >= expected, DRAIN_IDLE_MS)) && !this.signal.aborted;
    } finally {
      clients.setRecorder(undefined);
      loopDelay.disable();
    }
    return this.baselineResult(name, recorder, ticks, framesPerTick, done, complete, started, [cpuBefore, serviceBefore], loopDelay);
  }

  private baselineResult(
    name: string,
    recorder: FanoutRecorder,
    ticks: number,
    framesPerTick: number,
    done: Awaited<ReturnType<BroadcastServer['run']>> | undefined,
    complete: boolean,
    started: number,
    [cpuBefore, serviceBefore]: [CpuReading, CpuReading],
    loopDelay: ReturnType<typeof monitorEventLoopDelay>,
  ): RunResult {
    const server = this.baselineServer!;
    const clients = this.baselineClients!;
    const wallSeconds = (performance.now() - started) / 1000;
    const cpu = cpuSince(cpuBefore, cpuNow(server.pid, undefined));
    const serviceIdleCpu = cpuSince(serviceBefore, stackCpuNow(this.stack)).server;
    const expected = (done?.frames ?? ticks * framesPerTick) * clients.size;
    return {
      name,
      kind: 'baseline',
      subscribers: clients.size,
      posts: ticks,
      rate: this.options.rate,
      frameBytes: done?.frameBytes,
      complete,
      ...figuresOf(recorder, clients.size),
      stampedExpected: expected,
      received: recorder.received,
      expected,
      shortSubscribers: recorder.short(done?.frames ?? ticks * framesPerTick),
      createErrors: {},
      sendLoop: done ? summarize(done.sendLoopMs) : undefined,
      cpu,
      serviceIdleCpu,
      wallSeconds,
      benchLoopDelayP99: loopDelay.percentile(99) / 1e6,
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([
      this.pool?.close(),
      this.baselineClients?.close(),
    ]);
    await this.baselineServer?.stop().catch(() => undefined);
  }
}

function kb(bytes: number | undefined): string {
  return bytes === undefined ? 'n/a' : (bytes / 1024).toFixed(1);
}

/** Server CPU µs per delivery of the runs of one kind together (undefined when their CPU is unknown). */
function cpuPerDelivery(runs: RunResult[]): number | undefined {
  const received = runs.reduce((n, r) => n + r.received, 0);
  if (received === 0 || runs.some((r) => r.cpu.server === undefined)) return undefined;
  return (runs.reduce((n, r) => n + r.cpu.server!, 0) * 1e6) / received;
}

/**
 * The service's CPU per delivery against the plain broadcast's per frame (pooled, and each service run against its
 * neighbouring baseline runs), and what it is made of: the service's background work (its CPU per second while it
 * posts nothing, during the baseline runs, over the service runs' time), the posts themselves (the `alone` run's
 * CPU per post less its own background, read with its one subscriber, spread over the deliveries of each post), and
 * the rest, the fan-out's own.
 */
function cpuFigures(results: RunResult[]) {
  const service = results.filter((r) => r.kind === 'service');
  const serviceUs = cpuPerDelivery(service);
  const baselineUs = cpuPerDelivery(results.filter((r) => r.kind === 'baseline'));
  const perRun: number[] = [];
  results.forEach((s, index) => {
    const us = s.kind === 'service' ? cpuPerDelivery([s]) : undefined;
    if (us === undefined) return;
    for (const b of [results[index - 1], results[index + 1]]) {
      const plain = b?.kind === 'baseline' ? cpuPerDelivery([b]) : undefined;
      if (plain) perRun.push(us / plain);
    }
  });
  const idleRuns = results.filter((r) => r.kind === 'baseline' && r.serviceIdleCpu !== undefined);
  const idleWall = idleRuns.reduce((n, r) => n + r.wallSeconds, 0);
  /** The service's CPU seconds per second of doing nothing but keeping its subscribers (and polling for jobs). */
  const idlePerSecond = idleWall > 0 ? idleRuns.reduce((n, r) => n + r.serviceIdleCpu!, 0) / idleWall : undefined;
  const received = service.reduce((n, r) => n + r.received, 0);
  const backgroundUs =
    idlePerSecond !== undefined && received > 0 ? (idlePerSecond * 1e6 * service.reduce((n, r) => n + r.wallSeconds, 0)) / received : undefined;
  const alone = results.find((r) => r.kind === 'alone' && r.complete && r.cpu.server !== undefined && r.posts > 0);
  const aloneIdle = alone?.aloneIdlePerSecond ?? idlePerSecond;
  const alonePerPostMs = alone && aloneIdle !== undefined ? ((alone.cpu.server! - aloneIdle * alone.wallSeconds) * 1e3) / alone.posts : undefined;
  const postsUs =
    alonePerPostMs !== undefined && received > 0 ? (alonePerPostMs * 1e3 * service.reduce((n, r) => n + r.posts, 0)) / received : undefined;
  const fanOutUs = serviceUs !== undefined && postsUs !== undefined && backgroundUs !== undefined ? serviceUs - postsUs - backgroundUs : undefined;
  return {
    serviceUs,
    baselineUs,
    ratio: serviceUs !== undefined && baselineUs ? serviceUs / baselineUs : undefined,
    perRunRatios: perRun,
    idleMsPerSecond: idlePerSecond === undefined ? undefined : idlePerSecond * 1e3,
    aloneIdleMsPerSecond: aloneIdle === undefined ? undefined : aloneIdle * 1e3,
    backgroundUs,
    alonePerPostMs,
    postsUs,
    fanOutUs,
    fanOutRatio: fanOutUs !== undefined && baselineUs ? fanOutUs / baselineUs : undefined,
  };
}

function pooled(results: RunResult[], kind: RunResult['kind']): Summary {
  return summarize(concat(results.filter((r) => r.kind === kind && r.samples.length > 0).map((r) => r.samples)));
}

function report(results: RunResult[], bench: FanoutBench | undefined, stack: BenchStack | undefined, options: Options, aborted: string | undefined, loadCpuSeconds: number | undefined) {
  console.log('');
  if (options.load > 0) {
    console.log(`Loaded: ${options.load} CPU-burning sibling process(es) during the measured runs (--load), ${ms(loadCpuSeconds, 1)} CPU s used by them`);
  }
  console.log('Figures (ms; latency = arrival at a subscriber (Date.now()) - the event\'s updateTime, over every delivery of a stamped event)');
  const rows = [['run', 'kind', 'subs', 'N', 'rate', 'frame B', 'p50', 'p95', 'p99', 'max', 'stamped recv/expected', 'missing', 'done']];
  for (const r of results) {
    rows.push([
      r.name,
      r.kind === 'baseline' ? 'plain ws' : 'graphql-ws',
      String(r.subscribers),
      String(r.posts),
      `${r.rate}/s`,
      r.frameBytes === undefined ? 'n/a' : String(r.frameBytes),
      ms(r.latency.p50),
      ms(r.latency.p95),
      ms(r.latency.p99),
      ms(r.latency.max),
      `${r.stampedReceived}/${r.stampedExpected}`,
      String(Math.max(0, r.stampedExpected - r.stampedReceived)),
      r.complete ? 'yes' : 'NO',
    ]);
  }
  console.log(table(rows));

  console.log('');
  console.log('Details (per event: first / last delivery latency; spread = last arrival - first arrival)');
  const sandboxesApart = results.some((r) => r.cpu.sandboxes !== undefined);
  const details = [
    ['run', 'first p50/p95', 'last p50/p95', 'spread p50/p95', 'all recv/expected', 'send loop p50/max', `CPU s srv/pg/bench${sandboxesApart ? '/sandboxes' : ''}`, 'CPU us/delivery', 'wall s', 'bench loop p99'],
  ];
  for (const r of results) {
    const pair = (s: Summary) => `${ms(s.p50)}/${ms(s.p95)}`;
    const perDelivery = r.cpu.server !== undefined && r.received > 0 ? ms((r.cpu.server * 1e6) / r.received, 0) : 'n/a';
    details.push([
      r.name,
      pair(r.firstDelivery),
      pair(r.lastDelivery),
      pair(r.spread),
      `${r.received}/${r.expected}`,
      r.sendLoop ? `${ms(r.sendLoop.p50)}/${ms(r.sendLoop.max)}` : '-',
      cpuSplit(r.cpu, (seconds) => (seconds === undefined ? '-' : ms(seconds, 2))),
      perDelivery,
      ms(r.wallSeconds),
      ms(r.benchLoopDelayP99),
    ]);
  }
  console.log(table(details));
  console.log(
    '  CPU srv: the service process for service runs, the broadcast server for baseline runs; us/delivery = that CPU / deliveries' +
      (sandboxesApart ? '; the provider sandboxes run in processes of their own, their CPU is not the service\'s' : ''),
  );

  const memory = bench?.memory;
  console.log('');
  console.log(`Memory (${memory?.method ?? 'not measured'}; 1 KB = 1024 bytes)`);
  if (memory) {
    const mb = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : (bytes / 1048576).toFixed(1));
    const rows2 = [['reading', 'heapUsed MB', 'external MB', 'RSS MB']];
    rows2.push(['before the subscribers', mb(memory.before?.heapUsed), mb(memory.before?.external), mb(memory.rssBefore)]);
    rows2.push([`with ${memory.subscriptions} idle subscriptions`, mb(memory.after?.heapUsed), mb(memory.after?.external), mb(memory.rssAfter)]);
    console.log(table(rows2));
    console.log(`  per idle subscription: heapUsed+external ${kb(memory.heapPerSubscription)} KB, RSS ${kb(memory.rssPerSubscription)} KB`);
    console.log(`  per idle bare ws socket (baseline server, after gc()): heapUsed+external ${kb(memory.baselineHeapPerSocket)} KB, RSS ${kb(memory.baselineRssPerSocket)} KB`);
    if (memory.error) console.log(`  (${memory.error})`);
  }

  const problems: string[] = [];
  for (const r of results) {
    for (const [error, count] of Object.entries(r.createErrors)) problems.push(`${r.name}: ${count} create(s) failed: ${error}`);
    if (r.shortSubscribers > 0) problems.push(`${r.name}: ${r.shortSubscribers} subscriber(s) did not receive every event${r.complete ? '' : ' (the run stopped before they could arrive)'}`);
  }
  for (const error of [...(bench?.pool?.errors ?? []), ...(bench?.baselineClients?.errors ?? [])].slice(0, 5)) problems.push(error);
  const warnings = stack?.serverWarnings() ?? [];
  if (warnings.length > 0) problems.push(`the server logged ${warnings.length} warning line(s); first: ${warnings[0]!.slice(0, 300)}`);
  if (problems.length > 0) {
    console.log('');
    console.log('Problems');
    for (const problem of problems) console.log(`  - ${problem}`);
  }

  const service = pooled(results, 'service');
  const baseline = pooled(results, 'baseline');
  const ratio = service.p95 !== undefined && baseline.p95 ? service.p95 / baseline.p95 : undefined;
  // Each service run against the baseline runs just before and after it: the interleaving's point.
  const perRun: number[] = [];
  results.forEach((s, index) => {
    if (s.kind !== 'service' || s.latency.p95 === undefined) return;
    for (const b of [results[index - 1], results[index + 1]]) if (b?.kind === 'baseline' && b.latency.p95) perRun.push(s.latency.p95 / b.latency.p95);
  });
  const incomplete = results.some((r) => !r.complete) ? ' (a run was incomplete)' : '';
  const verdict = (value: number | undefined, ok: (v: number) => boolean) => (value === undefined ? 'not measured' : ok(value) ? 'met' : 'MISSED');
  console.log('');
  console.log('Targets');
  console.log(
    `  p95 commit-to-subscriber <= ${TARGETS.p95Ms} ms at ${options.subscribers} subscribers, ${options.rate} posts/s: ` +
      `${ms(service.p95)} ms (service runs pooled, ${service.count} deliveries) -> ${verdict(service.p95, (v) => v <= TARGETS.p95Ms)}${incomplete}`,
  );
  console.log(
    `  p95 <= ${TARGETS.ratio} x a plain ws broadcast: ${ms(service.p95)} / ${ms(baseline.p95)} ms = ${ms(ratio, 2)}` +
      (perRun.length > 1 ? ` (each service run / its neighbouring baseline runs: ${ms(Math.min(...perRun), 2)}..${ms(Math.max(...perRun), 2)})` : '') +
      ` -> ${verdict(ratio, (v) => v <= TARGETS.ratio)}${incomplete}`,
  );
  const cpu = cpuFigures(results);
  const us = (value: number | undefined) => ms(value, 1);
  console.log(
    `  server CPU per delivery <= ${TARGETS.cpuRatio} x a plain ws broadcast's per frame: ${us(cpu.serviceUs)} / ${us(cpu.baselineUs)} us = ${ms(cpu.ratio, 2)}` +
      (cpu.perRunRatios.length > 1 ? ` (each service run / its neighbouring baseline runs: ${ms(Math.min(...cpu.perRunRatios), 2)}..${ms(Math.max(...cpu.perRunRatios), 2)})` : '') +
      ` -> ${verdict(cpu.ratio, (v) => v <= TARGETS.cpuRatio)}${incomplete}`,
  );
  console.log(
    `    of which background ${us(cpu.backgroundUs)} us (the service's CPU while posting nothing: ${ms(cpu.idleMsPerSecond, 1)} ms/s), ` +
      `the posts themselves ${us(cpu.postsUs)} us (service-alone: ${ms(cpu.alonePerPostMs, 2)} ms per post beyond its background, ${ms(cpu.aloneIdleMsPerSecond, 1)} ms/s with one subscriber) ` +
      `and the fan-out ${us(cpu.fanOutUs)} us (${ms(cpu.fanOutRatio, 2)} x the plain broadcast)`,
  );
  const perSub = memory?.heapPerSubscription ?? memory?.rssPerSubscription;
  const which = memory?.heapPerSubscription !== undefined ? 'heapUsed+external after GC' : 'RSS';
  console.log(
    `  memory per idle subscription <= ${TARGETS.kbPerSubscription} KB: ${kb(perSub)} KB (${which}; RSS ${kb(memory?.rssPerSubscription)} KB) -> ` +
      verdict(perSub, (v) => v <= TARGETS.kbPerSubscription * 1024),
  );
  if (aborted) {
    console.log('');
    console.log(`Stopped early: ${aborted}. The figures above are what was measured until then.`);
  }
  return { service, baseline, ratio, perRunRatios: perRun, cpu };
}

runBench({
  name: 'fanout',
  usage: USAGE,
  values: ['subscribers', 'posts', 'rate', 'rounds', 'warmup', 'settle-s', 'load'],
  flags: ['no-inspector'],
  timeoutSeconds: 300,
  databaseUrl: { why: 'to wait for publish jobs between runs', required: false },
  sandbox: { latencyMs: 0, processingMs: 0 },
  // The provider sandbox stands in for the provider, not the service: apart, its CPU is not counted as the service's.
  stackShape: () => ({ sandboxesApart: true }),
  // The inspector (loopback only) is how the server's GC is forced for the memory reading.
  inspector: (options: Options) => options.inspector,
  read: (values, common): Options => ({
    subscribers: integerOption('subscribers', values.subscribers, 1000, 1),
    posts: integerOption('posts', values.posts, 50, 1),
    rate: decimalOption('rate', values.rate, 5, 0.1),
    rounds: integerOption('rounds', values.rounds, 1, 1),
    warmup: integerOption('warmup', values.warmup, 5, 0),
    settleMs: decimalOption('settle-s', values['settle-s'], 2, 0) * 1000,
    inspector: !values['no-inspector'] && !common.url,
    load: integerOption('load', values.load, 0, 0, 16),
  }),
  start(options, signal) {
    let bench: FanoutBench | undefined;
    let load: CpuLoad | undefined;
    let loadCpuSeconds: number | undefined;
    const results: RunResult[] = [];
    const stopLoad = async () => {
      loadCpuSeconds = load?.cpuSeconds() ?? loadCpuSeconds;
      await load?.stop();
      load = undefined;
    };
    return {
      async measure({ stack }: BenchEnvironment) {
        console.log(`  ${options.subscribers} subscribers, ${options.posts} posts per run at ${options.rate}/s, ${options.rounds} round(s)`);
        const fanout = new FanoutBench(stack, options, signal);
        bench = fanout;
        await fanout.warmUpAndCaptureFrame();
        log(`  service-alone: ${options.posts} posts at ${options.rate}/s, one subscriber…`);
        results.push(await fanout.aloneRun('service-alone', options.posts));
        await fanout.openSubscribers();
        await fanout.openBaseline();
        const run = async (name: string, kind: RunResult['kind']) => {
          if (signal.aborted) throw new Aborted('aborted');
          log(`  ${name}: ${options.posts} ${kind === 'service' ? 'posts' : 'ticks'} at ${options.rate}/s…`);
          const result = kind === 'service' ? await fanout.serviceRun(name, options.posts) : await fanout.baselineRun(name, options.posts);
          results.push(result);
          if (signal.aborted) throw new Aborted('aborted');
          log(`    p50 ${ms(result.latency.p50)} ms, p95 ${ms(result.latency.p95)} ms, ${result.stampedReceived}/${result.stampedExpected} deliveries`);
        };
        if (options.load > 0) {
          load = startCpuLoad(options.load);
          log(`  --load ${options.load}: ${options.load} CPU-burning sibling process(es) run until the last measured run ends`);
        }
        try {
          // Interleaved, so that noise of the shared machine shows as a difference between runs of one kind.
          await run('plain-1', 'baseline');
          for (let round = 1; round <= options.rounds; round++) {
            await run(`service-${round}`, 'service');
            await run(`plain-${round + 1}`, 'baseline');
          }
        } finally {
          await stopLoad();
        }
      },
      report(stack, aborted) {
        const pooledFigures = report(results, bench, stack, options, aborted, loadCpuSeconds);
        return { runs: results.map((run) => ({ ...run, samples: undefined })), pooled: pooledFigures, memory: bench?.memory, targets: TARGETS };
      },
      async close() {
        await stopLoad();
        if (!bench) return;
        const started = performance.now();
        await bench.close();
        console.log(`sockets closed, broadcast server stopped (${((performance.now() - started) / 1000).toFixed(1)} s)`);
      },
    };
  },
});
