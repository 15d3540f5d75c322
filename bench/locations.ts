/**
 * bench/locations: the location update pipeline on a stack with a zero-latency sandbox. Update jobs per second
 * from PATCH /location/update to SUCCEEDED (a burst, one unfinished update per location, and a paced run), and
 * the commit-to-subscriber latency of `locationUpdateJobUpdated` with 1 and 1,000 graphql-ws subscribers at a paced
 * rate, against a plain `ws` broadcast of frames of the same size to as many sockets in the same run. A benchmark:
 * it prints figures and never asserts. `npm run bench:locations -- --help` lists the options; docs/benchmarks.md
 * explains them.
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { sleep } from './support/abort';
import { BroadcastClients, startBroadcastServer, type BroadcastServer } from './support/broadcast';
import type { FrameLayout, NextFrame } from './support/broadcast-server';
import { cpuNow, cpuSince, cpuSplit, stackCpuNow, type CpuReading } from './support/cpu';
import { FrameProbe } from './support/frame-probe';
import { decimalOption, integerOption, runBench, type BenchEnvironment } from './support/harness';
import { LOAD_USAGE, startCpuLoad, type CpuLoad } from './support/load';
import { awaitNoUnfinishedUpdates, patchLocation, seedLocations } from './support/locations';
import { countsSince, type CountingProxy, type WireCounts } from './support/pg-count-proxy';
import { PLAIN_USAGE, startPlainPipeline, type PlainPipeline } from './support/plain-pipeline';
import type { BenchStack } from './support/stack';
import { ms, Samples, summarize, table, type Summary } from './support/stats';
import { SubscriberPool, type NextHandler } from './support/subscribers';
import { printComparison, printShapes, printWire } from './support/wire-report';

const USAGE = `  --locations N        connected locations created for the run, in the demo's first account (default 50)
  --burst-updates K    updates per location in the burst, one after the other (default 10): N x K jobs, N in flight
  --paced-updates M    updates of the paced run (default 100; 0 skips it)
  --paced-rate R       updates per second of the paced run, on a fixed schedule (default 20)
  --fanout-updates M   updates of each subscriber run (default 50; 0 skips them)
  --fanout-rate R      updates per second of the subscriber runs (default 5)
  --subscribers S      graphql-ws subscribers of the fan-out run, and bare ws sockets of the baseline (default 1000)
  --rounds K           fan-out runs: baseline, then K times (service, baseline) (default 1)
  --no-plain           skip plain-burst: the plain pipeline (bench/support/plain-pipeline-server.ts) given the
                       burst's updates, compared with burst; with it the sandboxes run in processes of their own
${PLAIN_USAGE}${LOAD_USAGE.replace('the measured runs', 'the 1,000-subscriber runs')}`;

interface Options {
  locations: number;
  burstUpdates: number;
  pacedUpdates: number;
  pacedRate: number;
  fanoutUpdates: number;
  fanoutRate: number;
  subscribers: number;
  rounds: number;
  /** CPU-burning sibling processes during the runs against the plain broadcast (bench/support/load.ts). */
  load: number;
  plain: boolean;
  plainBatch: number;
  plainLoops: number;
}

// ---- events ------------------------------------------------------------------------------------------------

/** What each subscriber asks for: enough to attribute and time an event. */
const JOB_SUBSCRIPTION =
  'subscription BenchLocationUpdateJobUpdated { locationUpdateJobUpdated { id locationId status version createdAt startedAt finishedAt } }';

interface JobEvent {
  id: string;
  locationId: string;
  status: string;
  version: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED']);
/** Events of one job: QUEUED (the PATCH), RUNNING (the worker took it), SUCCEEDED. */
const EVENTS_PER_JOB = 3;

/** The service's stamp of the change an event carries, taken just before that change commits. */
function stampOf(event: JobEvent): string | null {
  return event.status === 'QUEUED' ? event.createdAt : event.status === 'RUNNING' ? event.startedAt : event.finishedAt;
}

/** The baseline's frames: a real SUCCEEDED frame, all three times stamped at the send, the tag in `locationId`. */
const JOB_FRAME_LAYOUT: FrameLayout = { field: 'locationUpdateJobUpdated', stamps: ['createdAt', 'startedAt', 'finishedAt'], tag: ['locationId'] };

/** Deliveries of one event (a job at one status) over all subscribers. */
interface EventDeliveries {
  job: string;
  status: string;
  latencies: number[];
  first: number;
  last: number;
}

/**
 * Every delivery of the events `accept` takes: latency = arrival (`Date.now()` in the `next` callback) − the
 * event's stamp, per (job, status), with first and last arrival (performance.now()). Which jobs belong to a run is
 * decided afterwards (their ids come with the PATCH answers, sometimes after their first event).
 */
/**
 * Refused because the location had an update of its own unfinished (409): one the stack started (with `--workers`
 * the demo's preparation runs in the worker process while the bench begins); the next location is tried instead.
 */
function isBusy(record: UpdateRecord): boolean {
  return record.status === 409;
}

class DeliveryRecorder {
  readonly events = new Map<string, EventDeliveries>();
  readonly perSubscriber: Uint32Array;
  received = 0;
  lastEventAt = performance.now();

  constructor(
    subscribers: number,
    private readonly accept: (event: JobEvent) => boolean,
  ) {
    this.perSubscriber = new Uint32Array(subscribers);
  }

  readonly handler: NextHandler = (subscriber, data, at, wallClock) => {
    const event = data.locationUpdateJobUpdated as JobEvent | undefined;
    if (!event || !this.accept(event)) return;
    this.received += 1;
    this.perSubscriber[subscriber]! += 1;
    this.lastEventAt = at;
    const stamp = stampOf(event);
    const key = `${event.id}:${event.status}`;
    let entry = this.events.get(key);
    if (!entry) this.events.set(key, (entry = { job: event.id, status: event.status, latencies: [], first: at, last: at }));
    entry.last = at;
    if (stamp !== null) entry.latencies.push(wallClock - Date.parse(stamp));
  };

  /** Latency figures over the deliveries of `jobs` (every job when undefined). */
  figures(jobs: Set<string> | undefined, subscribers: number) {
    const all = new Samples();
    const byStatus = new Map<string, Samples>();
    const spreads: number[] = [];
    let received = 0;
    for (const entry of this.events.values()) {
      if (jobs && !jobs.has(entry.job)) continue;
      let samples = byStatus.get(entry.status);
      if (!samples) byStatus.set(entry.status, (samples = new Samples()));
      for (const latency of entry.latencies) {
        all.push(latency);
        samples.push(latency);
      }
      received += entry.latencies.length;
      if (subscribers > 1 && entry.latencies.length === subscribers) spreads.push(entry.last - entry.first);
    }
    return {
      latency: summarize(all.values()),
      byStatus: Object.fromEntries([...byStatus].map(([status, samples]) => [status, summarize(samples.values())])) as Record<string, Summary>,
      spread: summarize(spreads),
      received,
      samples: Float64Array.from(all.values()),
    };
  }

  /** Deliveries of the events of `jobs` so far (cheap: one pass over the events, not the deliveries). */
  receivedOf(jobs: Set<string>): number {
    let received = 0;
    for (const entry of this.events.values()) if (jobs.has(entry.job)) received += entry.latencies.length;
    return received;
  }

  short(expected: number): number {
    let count = 0;
    for (const received of this.perSubscriber) if (received < expected) count += 1;
    return count;
  }
}

// ---- updates -----------------------------------------------------------------------------------------------

/** One PATCH /location/update as the client saw it, and how its job ended (from the monitor's events). */
interface UpdateRecord {
  index: number;
  locationId: string;
  /** performance.now() when sent / answered / the terminal event reached the monitor. */
  sentAt: number;
  answeredAt: number;
  terminalAt: number | undefined;
  /** Date.now() when sent: compared with the server's stamps. */
  sentWallClock: number;
  status: number;
  jobId: string | undefined;
  error: string | undefined;
  terminal: JobEvent | undefined;
}

class Aborted extends Error {}

/** Figures of a throughput run (burst or paced). */
interface PipelineResult {
  name: string;
  /** "N in flight" or "R/s". */
  load: string;
  requested: number;
  accepted: number;
  succeeded: number;
  failed: number;
  /** Terminal jobs ÷ (the last terminal event − the first PATCH sent). */
  jobsPerSecond: number | undefined;
  patchLatency: Summary;
  /** PATCH sent → SUCCEEDED event at the monitor. */
  patchToSucceeded: Summary;
  /** Server stamps: sent → createdAt, createdAt → startedAt, startedAt → finishedAt, finishedAt → monitor. */
  stages: { sentToCreated: Summary; queued: Summary; running: Summary; finishedToMonitor: Summary };
  /** The monitor's commit-to-subscriber latency over every event of the run's jobs. */
  commitToSubscriber: Summary;
  /** Paced: updates not sent because every location had an unfinished update. */
  skipped: number;
  errors: Record<string, number>;
  complete: boolean;
  cpu: CpuReading;
  wallSeconds: number;
  benchLoopP99: number;
  /** What the pipeline sent PostgreSQL during the run, counted on the wire (when counted). */
  wire: WireCounts | undefined;
}

/**
 * Where a throughput run's updates go: the service, or the plain pipeline; whose events end them (the monitor's,
 * or the plain pipeline's stream), and how its CPU and statements are read.
 */
interface UpdatePipeline {
  stack: BenchStack;
  recorder: DeliveryRecorder;
  cpu(): CpuReading;
  statements: CountingProxy | undefined;
}

/** Figures of a subscriber run, service or baseline. */
interface FanoutResult {
  name: string;
  kind: 'service' | 'baseline';
  subscribers: number;
  updates: number;
  rate: number;
  frameBytes: number | undefined;
  latency: Summary;
  byStatus: Record<string, Summary>;
  spread: Summary;
  received: number;
  expected: number;
  shortSubscribers: number;
  errors: Record<string, number>;
  complete: boolean;
  cpu: CpuReading;
  wallSeconds: number;
  benchLoopP99: number;
  samples: Float64Array;
}

function countErrors(records: UpdateRecord[]): Record<string, number> {
  const errors: Record<string, number> = {};
  for (const record of records) if (record.error) errors[record.error.slice(0, 160)] = (errors[record.error.slice(0, 160)] ?? 0) + 1;
  return errors;
}

class LocationsBench {
  private readonly runId = randomBytes(4).toString('hex');
  private readonly wsUrl: string;
  /** The bench's own locations; those with an unfinished update are busy. */
  private readonly idle: string[] = [];
  private readonly ours = new Set<string>();
  /** Terminal events seen by the monitor, by job id; and who waits for one. */
  private readonly terminal = new Map<string, { event: JobEvent; at: number }>();
  private readonly waiters = new Map<string, () => void>();
  /** The monitor: one subscriber, open for the whole run. Its deliveries are the 1-subscriber figures. */
  monitor: SubscriberPool | undefined;
  monitorRecorder: DeliveryRecorder | undefined;
  pool: SubscriberPool | undefined;
  poolRecorder: DeliveryRecorder | undefined;
  baselineServer: BroadcastServer | undefined;
  baselineClients: BroadcastClients | undefined;
  template: NextFrame | undefined;
  frameBytes: number | undefined;
  /** Median time from one event of a job to the next (the baseline spaces its three frames so). */
  eventGapMs = 5;
  private sequence = 0;

  constructor(
    private readonly stack: BenchStack,
    private readonly accountId: string,
    private readonly options: Options,
    private readonly signal: AbortSignal,
  ) {
    this.wsUrl = `${stack.baseUrl.replace(/^http/, 'ws')}/graphql`;
  }

  prefix(phase: string): string {
    return `bench ${this.runId} ${phase} `;
  }

  async createLocations(): Promise<void> {
    const ids = await seedLocations(this.stack, this.accountId, { count: this.options.locations, run: this.runId, extras: false, signal: this.signal });
    for (const id of ids) {
      this.idle.push(id);
      this.ours.add(id);
    }
  }

  /** The monitor subscriber: terminal events wake the lane waiting for them; every delivery is recorded. */
  async openMonitor(): Promise<void> {
    const recorder = new DeliveryRecorder(1, (event) => this.ours.has(event.locationId));
    this.monitorRecorder = recorder;
    const monitor = new SubscriberPool({ wsUrl: this.wsUrl, token: this.stack.token, count: 1, signal: this.signal, query: JOB_SUBSCRIPTION });
    this.monitor = monitor;
    monitor.setHandler((subscriber, data, at, wallClock) => {
      recorder.handler(subscriber, data, at, wallClock);
      this.noteTerminal(data.locationUpdateJobUpdated as JobEvent | undefined, at);
    });
    await monitor.open();
    await this.awaitListening(recorder, 1);
  }

  /** A job's terminal event wakes the lane waiting for it. */
  private noteTerminal(event: JobEvent | undefined, at: number): void {
    if (event && TERMINAL.has(event.status) && this.ours.has(event.locationId) && !this.terminal.has(event.id)) {
      this.terminal.set(event.id, { event, at });
      const wake = this.waiters.get(event.id);
      this.waiters.delete(event.id);
      wake?.();
    }
  }

  private servicePipeline(): UpdatePipeline {
    return { stack: this.stack, recorder: this.monitorRecorder!, cpu: () => stackCpuNow(this.stack), statements: this.stack.statements };
  }

  /**
   * The plain pipeline's side: its event stream feeds a recorder of its own and ends the lanes' waits as the
   * monitor does for the service (its events have the subscription's fields). One update first: it is listening.
   */
  async plainPipeline(plain: PlainPipeline): Promise<UpdatePipeline> {
    const recorder = new DeliveryRecorder(1, (event) => this.ours.has(event.locationId));
    await plain.subscribe((event, at, wallClock) => {
      recorder.handler(0, { locationUpdateJobUpdated: event }, at, wallClock);
      this.noteTerminal(event as unknown as JobEvent, at);
    });
    const stack = plain.asStack(this.stack);
    const locationId = this.idle[0];
    const record = locationId === undefined ? undefined : await this.update(0, locationId, 'plain-ready', 10_000, stack);
    if (!record?.terminal) throw new Error(`the plain pipeline: an update did not end: ${record?.error ?? 'no idle location'}`);
    return { stack, recorder, cpu: () => cpuNow(plain.pid, this.stack.postmasterPid(), this.stack.sandboxPids()), statements: plain.statements };
  }

  private untilTerminal(jobId: string, timeoutMs: number): Promise<boolean> {
    if (this.terminal.has(jobId)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.signal.removeEventListener('abort', onAbort);
        this.waiters.delete(jobId);
        resolve(value);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.set(jobId, () => done(true));
    });
  }

  /** One update of an idle location: the PATCH, then (if accepted) until its terminal event or `timeoutMs`. */
  private async update(index: number, locationId: string, phase: string, timeoutMs = 30_000, stack = this.stack): Promise<UpdateRecord> {
    const record: UpdateRecord = {
      index,
      locationId,
      sentAt: performance.now(),
      answeredAt: 0,
      terminalAt: undefined,
      sentWallClock: Date.now(),
      status: 0,
      jobId: undefined,
      error: undefined,
      terminal: undefined,
    };
    try {
      const answer = await patchLocation(stack, this.accountId, locationId, { description: `${this.prefix(phase)}#${index} ${this.sequence++}` }, this.signal);
      record.answeredAt = performance.now();
      record.status = answer.status;
      record.jobId = answer.jobId;
      if (!answer.jobId) record.error = `HTTP ${answer.status} ${answer.text.slice(0, 200)}`;
    } catch (error) {
      record.answeredAt = performance.now();
      record.error = this.signal.aborted ? 'aborted' : error instanceof Error ? error.message : String(error);
    }
    if (record.jobId) {
      await this.untilTerminal(record.jobId, timeoutMs);
      const seen = this.terminal.get(record.jobId);
      if (seen) {
        record.terminal = seen.event;
        record.terminalAt = seen.at;
      } else if (!this.signal.aborted) record.error = `no terminal event within ${timeoutMs / 1000} s`;
    }
    return record;
  }

  /** Takes an idle location (undefined when every one has an unfinished update) and gives it back when done. */
  private async onIdleLocation(index: number, phase: string): Promise<UpdateRecord | undefined> {
    const locationId = this.idle.shift();
    if (!locationId) return undefined;
    try {
      return await this.update(index, locationId, phase);
    } finally {
      this.idle.push(locationId);
    }
  }

  /** graphql-ws does not acknowledge subscriptions: updates go until every subscriber of `recorder` got one's events. */
  private async awaitListening(recorder: DeliveryRecorder, subscribers: number): Promise<void> {
    for (let attempt = 1; attempt <= 20; attempt++) {
      const record = await this.onIdleLocation(attempt, 'ready');
      if (record && isBusy(record)) continue;
      if (!record?.jobId) throw new Error(`could not update a location: ${record?.error ?? 'none idle'}`);
      const deadline = performance.now() + 5_000;
      const delivered = () => {
        const entry = recorder.events.get(`${record.jobId}:SUCCEEDED`);
        return entry !== undefined && entry.latencies.length >= subscribers;
      };
      while (!delivered() && performance.now() < deadline && !this.signal.aborted) await sleep(20, this.signal);
      if (this.signal.aborted) throw new Aborted('aborted');
      if (delivered()) return;
    }
    throw new Error('subscribers did not all receive events after 20 attempts');
  }

  private async settle(): Promise<void> {
    await awaitNoUnfinishedUpdates(this.stack, this.accountId, this.signal, 60_000);
  }

  private pipelineResult(
    name: string,
    load: string,
    records: UpdateRecord[],
    skipped: number,
    started: number,
    before: { cpu: CpuReading; wire: WireCounts | undefined },
    loop: ReturnType<typeof monitorEventLoopDelay>,
    pipeline: UpdatePipeline,
    wireAfter: WireCounts | undefined,
  ): PipelineResult {
    const accepted = records.filter((r) => r.jobId);
    const done = accepted.filter((r) => r.terminal);
    const succeeded = done.filter((r) => r.terminal!.status === 'SUCCEEDED');
    const firstSent = Math.min(...records.map((r) => r.sentAt));
    const lastTerminal = Math.max(...done.map((r) => r.terminalAt!));
    const stamp = (value: string | null) => (value === null ? undefined : Date.parse(value));
    const stage = (pick: (r: UpdateRecord) => number | undefined) => summarize(succeeded.map(pick).filter((v): v is number => v !== undefined));
    const jobs = new Set(accepted.map((r) => r.jobId!));
    return {
      name,
      load,
      requested: records.length + skipped,
      accepted: accepted.length,
      succeeded: succeeded.length,
      failed: done.length - succeeded.length,
      jobsPerSecond: done.length > 0 ? done.length / ((lastTerminal - firstSent) / 1000) : undefined,
      patchLatency: summarize(records.filter((r) => r.status > 0).map((r) => r.answeredAt - r.sentAt)),
      patchToSucceeded: summarize(succeeded.map((r) => r.terminalAt! - r.sentAt)),
      stages: {
        sentToCreated: stage((r) => Date.parse(r.terminal!.createdAt) - r.sentWallClock),
        queued: stage((r) => (stamp(r.terminal!.startedAt) ?? NaN) - Date.parse(r.terminal!.createdAt)),
        running: stage((r) => (stamp(r.terminal!.finishedAt) ?? NaN) - (stamp(r.terminal!.startedAt) ?? NaN)),
        finishedToMonitor: summarize(
          succeeded.flatMap((r) => pipeline.recorder.events.get(`${r.jobId}:SUCCEEDED`)?.latencies ?? []),
        ),
      },
      commitToSubscriber: pipeline.recorder.figures(jobs, 1).latency,
      skipped,
      errors: countErrors(records),
      complete: done.length === accepted.length && !this.signal.aborted,
      cpu: cpuSince(before.cpu, pipeline.cpu()),
      wallSeconds: (performance.now() - started) / 1000,
      benchLoopP99: loop.percentile(99) / 1e6,
      wire: before.wire && wireAfter ? countsSince(before.wire, wireAfter) : undefined,
    };
  }

  /** CPU and wire counts now, before a run. */
  private async reading(pipeline: UpdatePipeline): Promise<{ cpu: CpuReading; wire: WireCounts | undefined }> {
    const wire = await pipeline.statements?.counts();
    return { cpu: pipeline.cpu(), wire };
  }

  /**
   * Every location gets `perLocation` updates, one after the other: as many in flight as there are locations. To
   * the service, or to the plain pipeline (`pipeline`, named `name`).
   */
  async burst(perLocation: number, name = 'burst', pipeline = this.servicePipeline()): Promise<PipelineResult> {
    if (pipeline.stack === this.stack) await this.settle();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const before = await this.reading(pipeline);
    const started = performance.now();
    const records: UpdateRecord[] = [];
    const locations = [...this.idle];
    await Promise.all(
      locations.map(async (locationId, lane) => {
        for (let k = 0; k < perLocation && !this.signal.aborted; k++) {
          const record = await this.update(lane * perLocation + k, locationId, name, 30_000, pipeline.stack);
          records.push(record);
          // A refused or unfinished update leaves the location busy: its lane stops.
          if (!record.terminal) break;
        }
      }),
    );
    const wireAfter = await pipeline.statements?.counts();
    loop.disable();
    return this.pipelineResult(name, `${locations.length} in flight`, records, 0, started, before, loop, pipeline, wireAfter);
  }

  /**
   * `count` updates on a fixed schedule of `rate` per second (an open loop: a slow answer does not delay the next
   * request), each to an idle location; when none is idle, the update is skipped and counted.
   */
  async paced(name: string, count: number, rate: number): Promise<{ records: UpdateRecord[]; skipped: number; started: number }> {
    const records: UpdateRecord[] = [];
    const pending: Promise<void>[] = [];
    let skipped = 0;
    const started = performance.now();
    for (let index = 0; index < count && !this.signal.aborted; index++) {
      await sleep(started + (index * 1000) / rate - performance.now(), this.signal);
      if (this.signal.aborted) break;
      const run = this.onIdleLocation(index, name).then((record) => {
        if (record) records.push(record);
        else skipped += 1;
      });
      pending.push(run);
    }
    await Promise.all(pending);
    return { records, skipped, started };
  }

  async pacedRun(count: number, rate: number): Promise<PipelineResult> {
    await this.settle();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const pipeline = this.servicePipeline();
    const before = await this.reading(pipeline);
    const { records, skipped, started } = await this.paced('paced', count, rate);
    const wireAfter = await pipeline.statements?.counts();
    loop.disable();
    return this.pipelineResult('paced', `${rate}/s`, records, skipped, started, before, loop, pipeline, wireAfter);
  }

  /**
   * Warms up and keeps one SUCCEEDED frame as the service sends it (a hand-made graphql-ws subscriber): the
   * baseline's frames are built after it.
   */
  async captureFrame(): Promise<void> {
    const probe = await FrameProbe.open({ wsUrl: this.wsUrl, token: this.stack.token, query: JOB_SUBSCRIPTION });
    try {
      for (let attempt = 0; attempt < 20 && !this.template; attempt++) {
        const record = await this.onIdleLocation(attempt, 'frame');
        if (record && isBusy(record)) continue;
        if (!record?.jobId) throw new Error(`could not update a location: ${record?.error ?? 'none idle'}`);
        const deadline = performance.now() + 5_000;
        while (!this.template && performance.now() < deadline && !this.signal.aborted) {
          const frame = probe.frames.find((text) => {
            const event = (JSON.parse(text) as NextFrame).payload.data.locationUpdateJobUpdated as unknown as JobEvent | undefined;
            return event !== undefined && event.id === record.jobId && event.status === 'SUCCEEDED';
          });
          if (frame) {
            this.template = JSON.parse(frame) as NextFrame;
            this.frameBytes = Buffer.byteLength(frame);
          } else await sleep(20, this.signal);
        }
        if (this.signal.aborted) throw new Aborted('aborted');
      }
      if (!this.template) throw new Error('the frame probe saw no SUCCEEDED event');
      console.log(`  a SUCCEEDED frame of the service: ${this.frameBytes} bytes`);
    } finally {
      probe.close();
    }
  }

  /** A paced run of updates seen by `recorder`'s subscribers. */
  async serviceRun(name: string, pool: SubscriberPool, recorder: DeliveryRecorder, count: number): Promise<FanoutResult> {
    await this.settle();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const cpuBefore = stackCpuNow(this.stack);
    let records: UpdateRecord[] = [];
    let complete = false;
    const started = performance.now();
    try {
      ({ records } = await this.paced(name, count, this.options.fanoutRate));
      const jobs = new Set(records.flatMap((r) => (r.jobId ? [r.jobId] : [])));
      const expected = jobs.size * EVENTS_PER_JOB * pool.size;
      recorder.lastEventAt = Math.max(recorder.lastEventAt, performance.now());
      complete = (await this.drain(recorder, () => recorder.receivedOf(jobs) >= expected)) && !this.signal.aborted;
    } finally {
      loop.disable();
    }
    const jobs = new Set(records.flatMap((r) => (r.jobId ? [r.jobId] : [])));
    const figures = recorder.figures(jobs, pool.size);
    // The gap between a job's events, for the baseline's spacing of its three frames.
    const gaps = records.flatMap((r) =>
      r.terminal?.startedAt && r.terminal.finishedAt ? [(Date.parse(r.terminal.finishedAt) - Date.parse(r.terminal.createdAt)) / 2] : [],
    );
    const gap = summarize(gaps).p50;
    if (gap !== undefined) this.eventGapMs = Math.max(1, gap);
    return {
      name,
      kind: 'service',
      subscribers: pool.size,
      updates: jobs.size,
      rate: this.options.fanoutRate,
      frameBytes: this.frameBytes,
      latency: figures.latency,
      byStatus: figures.byStatus,
      spread: figures.spread,
      received: figures.received,
      expected: jobs.size * EVENTS_PER_JOB * pool.size,
      shortSubscribers: this.shortOf(recorder, jobs, pool.size),
      errors: countErrors(records),
      complete,
      cpu: cpuSince(cpuBefore, stackCpuNow(this.stack)),
      wallSeconds: (performance.now() - started) / 1000,
      benchLoopP99: loop.percentile(99) / 1e6,
      samples: figures.samples,
    };
  }

  /** Subscribers that missed an event of `jobs`. */
  private shortOf(recorder: DeliveryRecorder, jobs: Set<string>, subscribers: number): number {
    let missing = 0;
    for (const entry of recorder.events.values()) if (jobs.has(entry.job)) missing = Math.max(missing, subscribers - entry.latencies.length);
    return missing;
  }

  private async drain(recorder: DeliveryRecorder, condition: () => boolean, idleMs = 15_000): Promise<boolean> {
    while (!condition()) {
      if (this.signal.aborted) return false;
      if (performance.now() - recorder.lastEventAt > idleMs) return false;
      await sleep(20, this.signal);
    }
    return true;
  }

  /** The S graphql-ws subscribers of the fan-out run, known to be listening. */
  async openPool(): Promise<void> {
    const recorder = new DeliveryRecorder(this.options.subscribers, (event) => this.ours.has(event.locationId));
    this.poolRecorder = recorder;
    const pool = new SubscriberPool({ wsUrl: this.wsUrl, token: this.stack.token, count: this.options.subscribers, signal: this.signal, query: JOB_SUBSCRIPTION });
    this.pool = pool;
    pool.setHandler(recorder.handler);
    const opened = performance.now();
    await pool.open();
    console.log(`  ${pool.size} graphql-ws subscriber(s) connected in ${((performance.now() - opened) / 1000).toFixed(1)} s`);
    await this.awaitListening(recorder, pool.size);
  }

  async openBaseline(): Promise<void> {
    const server = await startBroadcastServer(this.signal);
    this.baselineServer = server;
    const clients = new BroadcastClients({ url: `ws://127.0.0.1:${server.port}`, count: this.options.subscribers, signal: this.signal });
    this.baselineClients = clients;
    const opened = performance.now();
    await clients.connect();
    console.log(`  ${clients.size} bare ws client(s) of the baseline connected in ${((performance.now() - opened) / 1000).toFixed(1)} s`);
  }

  /** The plain broadcast: per update, three frames the size of the service's, `eventGapMs` apart, to S sockets. */
  async baselineRun(name: string, ticks: number): Promise<FanoutResult> {
    const server = this.baselineServer!;
    const clients = this.baselineClients!;
    const prefix = this.prefix(name);
    const recorder = new DeliveryRecorder(clients.size, (event) => event.locationId.startsWith(prefix));
    clients.setHandler(recorder.handler);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const cpuBefore = cpuNow(server.pid, undefined);
    const started = performance.now();
    let frames = ticks * EVENTS_PER_JOB;
    let complete = false;
    try {
      try {
        const done = await server.run({
          ticks,
          rate: this.options.fanoutRate,
          framesPerTick: EVENTS_PER_JOB,
          gapMs: this.eventGapMs,
          template: this.template!,
          layout: JOB_FRAME_LAYOUT,
          frameBytes: this.frameBytes!,
          prefix,
        });
        frames = done.frames;
        recorder.lastEventAt = Math.max(recorder.lastEventAt, performance.now());
        complete = (await this.drain(recorder, () => recorder.received >= frames * clients.size)) && !this.signal.aborted;
      } catch (error) {
        if (!this.signal.aborted) throw error;
      }
    } finally {
      clients.setHandler(undefined);
      loop.disable();
    }
    const figures = recorder.figures(undefined, clients.size);
    return {
      name,
      kind: 'baseline',
      subscribers: clients.size,
      updates: ticks,
      rate: this.options.fanoutRate,
      frameBytes: this.frameBytes,
      latency: figures.latency,
      byStatus: {},
      spread: figures.spread,
      received: figures.received,
      expected: frames * clients.size,
      shortSubscribers: recorder.short(frames),
      errors: {},
      complete,
      cpu: cpuSince(cpuBefore, cpuNow(server.pid, undefined)),
      wallSeconds: (performance.now() - started) / 1000,
      benchLoopP99: loop.percentile(99) / 1e6,
      samples: figures.samples,
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.monitor?.close(), this.pool?.close(), this.baselineClients?.close()]);
    await this.baselineServer?.stop().catch(() => undefined);
  }
}

// ---- report ------------------------------------------------------------------------------------------------

function pooled(results: FanoutResult[], kind: FanoutResult['kind'], subscribers: number): Summary {
  const arrays = results.filter((r) => r.kind === kind && r.subscribers === subscribers && r.samples.length > 0).map((r) => r.samples);
  const out = new Float64Array(arrays.reduce((n, a) => n + a.length, 0));
  let offset = 0;
  for (const array of arrays) {
    out.set(array, offset);
    offset += array.length;
  }
  return summarize(out);
}

function report(pipeline: PipelineResult[], fanout: FanoutResult[], bench: LocationsBench | undefined, stack: BenchStack | undefined, options: Options, aborted: string | undefined) {
  const pair = (s: Summary) => `${ms(s.p50)}/${ms(s.p95)}`;
  const cpu = (c: CpuReading) => cpuSplit(c, (seconds) => ms(seconds, 2));
  if (pipeline.length > 0) {
    console.log('');
    console.log('Update jobs (ms; p2S = PATCH sent -> the SUCCEEDED event at the monitor subscriber)');
    console.log(
      table([
        ['run', 'load', 'jobs', 'jobs/s', 'PATCH p50', 'PATCH p95', 'p2S p50', 'p2S p95', 'p2S max', 'c2S p50/p95/p99 (1 sub)', 'skipped', 'done'],
        ...pipeline.map((r) => [
          r.name,
          r.load,
          r.accepted === r.requested ? String(r.accepted) : `${r.accepted}/${r.requested}`,
          ms(r.jobsPerSecond, 1),
          ms(r.patchLatency.p50),
          ms(r.patchLatency.p95),
          ms(r.patchToSucceeded.p50),
          ms(r.patchToSucceeded.p95),
          ms(r.patchToSucceeded.max),
          `${ms(r.commitToSubscriber.p50)}/${ms(r.commitToSubscriber.p95)}/${ms(r.commitToSubscriber.p99)}`,
          String(r.skipped),
          r.complete ? 'yes' : 'NO',
        ]),
      ]),
    );
    console.log('');
    console.log('Where PATCH-to-SUCCEEDED goes (server stamps of each SUCCEEDED job; p50/p95 ms)');
    console.log(
      table([
        ['run', 'sent->createdAt', 'createdAt->startedAt (queue)', 'startedAt->finishedAt (provider, apply)', 'finishedAt->monitor', 'SUCCEEDED/FAILED', pipeline.some((r) => r.cpu.sandboxes !== undefined) ? 'CPU s service/pg/bench/sandboxes' : 'CPU s server/pg/bench', 'server CPU ms/job', 'wall s', 'bench loop p99'],
        ...pipeline.map((r) => [
          r.name,
          pair(r.stages.sentToCreated),
          pair(r.stages.queued),
          pair(r.stages.running),
          pair(r.stages.finishedToMonitor),
          `${r.succeeded}/${r.failed}`,
          cpu(r.cpu),
          r.cpu.server !== undefined && r.succeeded > 0 ? ms((r.cpu.server * 1000) / r.succeeded, 1) : 'n/a',
          ms(r.wallSeconds),
          ms(r.benchLoopP99),
        ]),
      ]),
    );
  }
  const single = fanout.find((r) => r.kind === 'service' && r.subscribers === 1);
  const oneUpdateCpu = single?.cpu.server !== undefined && single.updates > 0 ? single.cpu.server / single.updates : undefined;
  if (fanout.length > 0) {
    console.log('');
    console.log("Subscribers (ms; latency = arrival (Date.now()) - the event's stamp: createdAt for QUEUED, startedAt for RUNNING, finishedAt for SUCCEEDED)");
    console.log(
      table([
        ['run', 'kind', 'subs', 'N', 'rate', 'frame B', 'p50', 'p95', 'p99', 'max', 'recv/expected', 'done'],
        ...fanout.map((r) => [
          r.name,
          r.kind === 'service' ? 'graphql-ws' : 'plain ws',
          String(r.subscribers),
          String(r.updates),
          `${r.rate}/s`,
          r.frameBytes === undefined ? 'n/a' : String(r.frameBytes),
          ms(r.latency.p50),
          ms(r.latency.p95),
          ms(r.latency.p99),
          ms(r.latency.max),
          `${r.received}/${r.expected}`,
          r.complete ? 'yes' : 'NO',
        ]),
      ]),
    );
    console.log('');
    console.log('Details (p95 by event; spread = last arrival - first arrival of an event every subscriber got, p50/p95)');
    console.log(
      table([
        ['run', 'QUEUED p95', 'RUNNING p95', 'SUCCEEDED p95', 'spread', 'CPU s srv/pg/bench', 'CPU us/delivery', 'fan-out us/delivery', 'wall s', 'bench loop p99'],
        ...fanout.map((r) => {
          const status = (name: string) => (r.kind === 'baseline' ? '-' : ms(r.byStatus[name]?.p95));
          // The service's CPU beyond what the same updates cost with one subscriber: what the fan-out costs.
          const fanOut =
            r.kind === 'service' && r.subscribers > 1 && oneUpdateCpu !== undefined && r.cpu.server !== undefined
              ? ms(((r.cpu.server - oneUpdateCpu * r.updates) * 1e6) / Math.max(1, r.received - r.updates * EVENTS_PER_JOB), 0)
              : r.kind === 'baseline' && r.cpu.server !== undefined && r.received > 0
                ? ms((r.cpu.server * 1e6) / r.received, 0)
                : '-';
          return [
            r.name,
            status('QUEUED'),
            status('RUNNING'),
            status('SUCCEEDED'),
            r.subscribers > 1 ? pair(r.spread) : '-',
            `${ms(r.cpu.server, 2)}/${r.kind === 'service' ? ms(r.cpu.postgres, 2) : '-'}/${ms(r.cpu.bench, 2)}`,
            r.cpu.server !== undefined && r.received > 0 ? ms((r.cpu.server * 1e6) / r.received, 0) : 'n/a',
            fanOut,
            ms(r.wallSeconds),
            ms(r.benchLoopP99),
          ];
        }),
      ]),
    );
    console.log('  CPU srv: the service for graphql-ws runs, the broadcast server for plain runs; us/delivery = that CPU / deliveries (for the');
    console.log('  service it includes the updates themselves); fan-out us/delivery: the service CPU beyond fanout-1\'s per update, per extra delivery');
  }

  const problems: string[] = [];
  for (const r of [...pipeline, ...fanout]) {
    for (const [error, count] of Object.entries(r.errors)) problems.push(`${r.name}: ${count} update(s): ${error}`);
  }
  for (const r of pipeline) if (r.failed > 0) problems.push(`${r.name}: ${r.failed} job(s) FAILED`);
  for (const r of fanout) if (r.shortSubscribers > 0) problems.push(`${r.name}: up to ${r.shortSubscribers} subscriber(s) missed an event${r.complete ? '' : ' (the run stopped before they could arrive)'}`);
  for (const error of [...(bench?.monitor?.errors ?? []), ...(bench?.pool?.errors ?? []), ...(bench?.baselineClients?.errors ?? [])].slice(0, 5)) problems.push(error);
  const warnings = stack?.serverWarnings() ?? [];
  if (warnings.length > 0) problems.push(`the server logged ${warnings.length} warning line(s); first: ${warnings[0]!.slice(0, 300)}`);
  if (problems.length > 0) {
    console.log('');
    console.log('Problems');
    for (const problem of problems) console.log(`  - ${problem}`);
  }

  const service = pooled(fanout, 'service', options.subscribers);
  const baseline = pooled(fanout, 'baseline', options.subscribers);
  const ratio = service.p95 !== undefined && baseline.p95 ? service.p95 / baseline.p95 : undefined;
  const one = fanout.find((r) => r.kind === 'service' && r.subscribers === 1);
  console.log('');
  console.log('Targets: none are set for location updates; the figures, and the ratio to the plain broadcast');
  const burst = pipeline.find((r) => r.name === 'burst');
  if (burst) console.log(`  update jobs/s (burst, ${burst.load}): ${ms(burst.jobsPerSecond, 1)}; PATCH-to-SUCCEEDED p50/p95 ${pair(burst.patchToSucceeded)} ms`);
  const paced = pipeline.find((r) => r.name === 'paced');
  if (paced) console.log(`  paced ${paced.load}: PATCH-to-SUCCEEDED p50/p95 ${pair(paced.patchToSucceeded)} ms, ${paced.skipped} skipped (no idle location)`);
  if (one) console.log(`  commit-to-subscriber, 1 subscriber at ${one.rate}/s: p50/p95/p99 ${ms(one.latency.p50)}/${ms(one.latency.p95)}/${ms(one.latency.p99)} ms`);
  if (service.count > 0) {
    console.log(
      `  commit-to-subscriber, ${options.subscribers} subscribers at ${options.fanoutRate}/s: p50/p95/p99 ${ms(service.p50)}/${ms(service.p95)}/${ms(service.p99)} ms; ` +
        `plain ws broadcast ${ms(baseline.p50)}/${ms(baseline.p95)}/${ms(baseline.p99)} ms; ratio of p95s ${ms(ratio, 2)}`,
    );
  }
  if (aborted) console.log(`\nStopped early: ${aborted}. The figures above are what was measured until then.`);
  return { service, baseline, ratio };
}

/** Statements and CPU per job of every throughput run, and the service's burst against the plain pipeline's. */
function reportPlain(pipeline: PipelineResult[]): Record<string, unknown> | undefined {
  const runOf = (r: PipelineResult) => ({ name: r.name, units: r.succeeded, wire: r.wire, cpu: r.cpu });
  printWire('job', pipeline.map(runOf));
  const burst = pipeline.find((r) => r.name === 'burst');
  const plain = pipeline.find((r) => r.name === 'plain-burst');
  if (burst) printShapes('The service (burst)', 'job', runOf(burst), 25);
  if (plain) printShapes('The plain pipeline (plain-burst)', 'job', runOf(plain), 8);
  if (!burst || !plain) return undefined;
  const compared = (r: PipelineResult) => ({ ...runOf(r), perSecond: r.jobsPerSecond, latency: r.patchToSucceeded });
  return printComparison('job', 'PATCH-to-SUCCEEDED', compared(burst), compared(plain));
}

runBench({
  name: 'locations',
  usage: USAGE,
  values: ['locations', 'burst-updates', 'paced-updates', 'paced-rate', 'fanout-updates', 'fanout-rate', 'subscribers', 'rounds', 'load', 'plain-batch', 'plain-loops'],
  flags: ['no-plain'],
  timeoutSeconds: 300,
  // A provider that answers at once and takes any number of edits: every millisecond measured is the gateway's.
  sandbox: { latencyMs: 0, processingMs: 0, locationEditsPerMinute: 1_000_000 },
  // The plain pipeline calls the same sandbox process as the service; every run's statements are counted.
  stackShape: (options: Options) => ({ sandboxesApart: options.plain && options.burstUpdates > 0, countStatements: true }),
  read: (values): Options => ({
    locations: integerOption('locations', values.locations, 50, 1),
    burstUpdates: integerOption('burst-updates', values['burst-updates'], 10, 0),
    pacedUpdates: integerOption('paced-updates', values['paced-updates'], 100, 0),
    pacedRate: decimalOption('paced-rate', values['paced-rate'], 20, 0.1),
    fanoutUpdates: integerOption('fanout-updates', values['fanout-updates'], 50, 0),
    fanoutRate: decimalOption('fanout-rate', values['fanout-rate'], 5, 0.1),
    subscribers: integerOption('subscribers', values.subscribers, 1000, 1),
    rounds: integerOption('rounds', values.rounds, 1, 1),
    load: integerOption('load', values.load, 0, 0, 16),
    plain: !values['no-plain'],
    plainBatch: integerOption('plain-batch', values['plain-batch'], 8, 1, 1000),
    plainLoops: integerOption('plain-loops', values['plain-loops'], 2, 1, 64),
  }),
  start(options, signal) {
    let bench: LocationsBench | undefined;
    let plain: PlainPipeline | undefined;
    const pipeline: PipelineResult[] = [];
    const fanout: FanoutResult[] = [];
    let load: CpuLoad | undefined;
    let loadCpuSeconds: number | undefined;
    const stopLoad = async () => {
      loadCpuSeconds = load?.cpuSeconds() ?? loadCpuSeconds;
      await load?.stop();
      load = undefined;
    };
    return {
      async measure({ stack }: BenchEnvironment) {
        const accountId = stack.targets[0]?.accountId;
        if (!accountId) throw new Error('the organization has no account connected to the alpha provider');
        const locations = new LocationsBench(stack, accountId, options, signal);
        bench = locations;
        const created = performance.now();
        await locations.createLocations();
        console.log(`  ${options.locations} location(s) created in account ${accountId} (POST /location) and connected in ${((performance.now() - created) / 1000).toFixed(1)} s`);
        await locations.openMonitor();
        await locations.captureFrame();

        const stop = () => {
          if (signal.aborted) throw new Aborted('aborted');
        };
        if (options.burstUpdates > 0) {
          console.log(`  burst: ${options.locations} x ${options.burstUpdates} updates, one unfinished per location…`);
          pipeline.push(await locations.burst(options.burstUpdates));
          stop();
          if (options.plain && stack.sandboxPids().length === 0) {
            console.log('  plain-burst: skipped: it needs the stack the bench starts, with the alpha sandbox in a process of its own (no --url)');
          } else if (options.plain) {
            const started = performance.now();
            plain = await startPlainPipeline(stack, { batch: options.plainBatch, loops: options.plainLoops, signal });
            const plainPipeline = await locations.plainPipeline(plain);
            console.log(
              `  plain: ${plain.url} (dist-dev/bench/support/plain-pipeline-server.js, its own process, up in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
                `batches of ${options.plainBatch}, ${options.plainLoops} worker loop(s); alpha sandbox ${stack.alphaUrl})`,
            );
            console.log(`  plain-burst: ${options.locations} x ${options.burstUpdates} updates to the plain pipeline, one unfinished per location…`);
            pipeline.push(await locations.burst(options.burstUpdates, 'plain-burst', plainPipeline));
            // Its idle polls must not count in the service's runs that follow.
            await plain.stop();
            plain = undefined;
            stop();
          }
        }
        if (options.pacedUpdates > 0) {
          console.log(`  paced: ${options.pacedUpdates} updates at ${options.pacedRate}/s…`);
          pipeline.push(await locations.pacedRun(options.pacedUpdates, options.pacedRate));
          stop();
        }
        if (options.fanoutUpdates > 0) {
          console.log(`  fanout-1: ${options.fanoutUpdates} updates at ${options.fanoutRate}/s, 1 subscriber…`);
          fanout.push(await locations.serviceRun('fanout-1', locations.monitor!, locations.monitorRecorder!, options.fanoutUpdates));
          stop();
          await locations.openPool();
          await locations.openBaseline();
          const run = async (name: string, kind: FanoutResult['kind']) => {
            stop();
            console.log(`  ${name}: ${options.fanoutUpdates} ${kind === 'service' ? 'updates' : 'ticks of 3 frames'} at ${options.fanoutRate}/s, ${options.subscribers} subscribers…`);
            const result = kind === 'service' ? await locations.serviceRun(name, locations.pool!, locations.poolRecorder!, options.fanoutUpdates) : await locations.baselineRun(name, options.fanoutUpdates);
            fanout.push(result);
            console.log(`    p50 ${ms(result.latency.p50)} ms, p95 ${ms(result.latency.p95)} ms, ${result.received}/${result.expected} deliveries`);
          };
          if (options.load > 0) {
            load = startCpuLoad(options.load);
            console.log(`  --load ${options.load}: ${options.load} CPU-burning sibling process(es) run until the last of these runs ends`);
          }
          try {
            // Interleaved, so that noise of the shared machine shows as a difference between runs of one kind.
            await run('plain-1', 'baseline');
            for (let round = 1; round <= options.rounds; round++) {
              await run(`fanout-${options.subscribers}${options.rounds > 1 ? `-${round}` : ''}`, 'service');
              await run(`plain-${round + 1}`, 'baseline');
            }
          } finally {
            await stopLoad();
          }
        }
      },
      report(stack, aborted) {
        if (options.load > 0) {
          console.log(`\nLoaded: ${options.load} CPU-burning sibling process(es) during the runs against the plain broadcast (--load), ${ms(loadCpuSeconds, 1)} CPU s used by them`);
        }
        const figures = report(pipeline, fanout, bench, stack, options, aborted);
        const comparison = reportPlain(pipeline);
        return { pipeline, fanout: fanout.map((run) => ({ ...run, samples: undefined })), pooled: figures, comparison };
      },
      forceStop() {
        plain?.kill();
      },
      async close() {
        await stopLoad();
        await plain?.stop();
        if (!bench) return;
        await bench.close();
        console.log('sockets closed, broadcast server stopped');
      },
    };
  },
});
