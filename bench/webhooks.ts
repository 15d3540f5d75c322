/**
 * bench/webhooks: webhook events delivered per second while posts are created at a paced rate, and the delay from an
 * event's commit to its arrival at a receiver, against the same events to a graphql-ws subscriber (the plain
 * baseline of the same run). A benchmark: it prints figures and never asserts. `npm run bench:webhooks -- --help`
 * lists the options; docs/benchmarks.md explains them.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { sleep } from './support/abort';
import { cpuSince, cpuSplit, processCpuSeconds, stackCpuNow, type CpuReading } from './support/cpu';
import { integerOption, runBench, type BenchEnvironment } from './support/harness';
import { createPostsPaced, type CreateRecord } from './support/posting';
import { graphql, type BenchStack } from './support/stack';
import { ms, summarize, table, type Summary } from './support/stats';
import { SubscriberPool, type PostUpdatedEvent } from './support/subscribers';
import type { Arrival, ReceiverCommand, ReceiverReply } from './support/webhook-receiver';

const USAGE = `  --seconds N          how long posts are created (default 30)
  --rate R             posts per second, on a fixed schedule (default 100): 2 events each (SENDING, LIVE)
  --warmup N           posts created and awaited before measuring, not measured (default 20)
  --drain-idle-s S     stop waiting for events after S seconds without one (default 30)
  --drain-max-s S      stop waiting for events S seconds after the last post was created (default 120)
  --endpoint-concurrency C
                       WEBHOOK_ENDPOINT_CONCURRENCY of the stack it starts (default: the service's, 4)
  --no-baseline        no graphql-ws subscriber beside the receiver
`;

interface Options {
  seconds: number;
  rate: number;
  warmup: number;
  drainIdleMs: number;
  drainMaxMs: number;
  endpointConcurrency: number | undefined;
  baseline: boolean;
}

/** What arrived of one phase's posts (their summary starts with `prefix`), at the receiver and at the subscriber. */
class PhaseRecorder {
  /** Every arrival of the phase, duplicates included, in arrival order. */
  readonly arrivals: Arrival[] = [];
  /** The first arrival of each event id. */
  readonly firstArrival = new Map<string, Arrival>();
  duplicates = 0;
  signatureFailures = 0;
  /** The LIVE event at the subscriber: arrival (wall clock) − updateTime, per post. */
  readonly subscriberLive = new Map<string, number>();
  lastEventAt = performance.now();

  constructor(readonly prefix: string) {}

  receive(arrival: Arrival): void {
    this.arrivals.push(arrival);
    this.lastEventAt = performance.now();
    if (!arrival.signatureValid) this.signatureFailures += 1;
    if (this.firstArrival.has(arrival.eventId)) this.duplicates += 1;
    else this.firstArrival.set(arrival.eventId, arrival);
  }

  subscriberEvent(event: PostUpdatedEvent, wallClock: number): void {
    if (event.state !== 'LIVE' || event.updateTime === null || this.subscriberLive.has(event.id)) return;
    this.lastEventAt = performance.now();
    this.subscriberLive.set(event.id, wallClock - Date.parse(event.updateTime));
  }
}

/** The receiver process (bench/support/webhook-receiver.ts) and the arrivals it reports. */
interface Receiver {
  url: string;
  pid: number | undefined;
  setSecret(secret: string): void;
  /** Arrivals whose post summary starts with the recorder's prefix go to it; the others are counted apart. */
  setRecorder(recorder: PhaseRecorder | undefined): void;
  /** Arrivals of no phase being recorded (a previous phase's late ones, pings). */
  foreign(): number;
  stop(): Promise<void>;
  kill(): void;
}

function startReceiver(signal: AbortSignal): Promise<Receiver> {
  const child: ChildProcess = fork(path.join(__dirname, 'support/webhook-receiver.js'), [], {
    // Exits with the benchmark, however it ends (its IPC channel closes).
    execArgv: ['--require', path.join(__dirname, 'support/exit-with-parent.js')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let recorder: PhaseRecorder | undefined;
  let foreign = 0;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const command = (message: ReceiverCommand) => {
    if (child.connected) child.send(message);
  };
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      kill();
      reject(new Error(`the webhook receiver ${why}`));
    };
    const timer = setTimeout(() => fail('did not listen within 15 s'), 15_000);
    signal.addEventListener('abort', () => fail('start was aborted'), { once: true });
    child.once('exit', (code, sig) => fail(`exited (${code ?? sig})`));
    child.on('message', (reply: ReceiverReply) => {
      if (reply.type === 'arrivals') {
        for (const arrival of reply.arrivals) {
          if (recorder && arrival.summary?.startsWith(recorder.prefix)) recorder.receive(arrival);
          else foreign += 1;
        }
        return;
      }
      settled = true;
      clearTimeout(timer);
      resolve({
        url: `http://127.0.0.1:${reply.port}/hooks`,
        pid: child.pid,
        setSecret: (secret) => command({ type: 'secret', secret }),
        setRecorder: (next) => {
          recorder = next;
        },
        foreign: () => foreign,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          command({ type: 'stop' });
          const killTimer = setTimeout(kill, 5_000);
          await exited;
          clearTimeout(killTimer);
        },
        kill,
      });
    });
  });
}

/** Server-side stamps of the run's deliveries, read from the database after it (this machine's clocks). */
interface DeliveryBreakdown {
  /** The commit stamp (as the figures take it) → the delivery row (the dispatcher's fan-out of the outbox). */
  stampToRow: Summary;
  /** The delivery row → its webhook-deliver job created (PENDING until the dispatcher gives it one of the endpoint's slots). */
  rowToJob: Summary;
  /** Job created (now() of the dispatcher round's transaction, which inserts it) → fetched by a worker: the rest of the round, and the queue. */
  jobToFetched: Summary;
  /** Job fetched → request sent (last_attempt_at − last_latency_ms: loading the row, signing). */
  fetchedToSent: Summary;
  /** Request sent → arrival at the receiver (the HTTP request on a new connection). */
  sentToArrival: Summary;
  /** The sender's own latency figure (last_latency_ms: sent → answer read). */
  attemptLatency: Summary;
  retried: number;
  statuses: Map<string, number>;
}

interface Result {
  complete: boolean;
  requested: number;
  created: number;
  createErrors: Map<string, number>;
  postingSeconds: number;
  createRatePerSecond: number | undefined;
  postLatency: Summary;
  eventsExpected: number;
  eventsReceived: number;
  deliveredPerSecond: number | undefined;
  /** Last POST answered → last event at the receiver: how far delivery trails creation at the end. */
  tailSeconds: number | undefined;
  delayAll: Summary;
  delaySending: Summary;
  delayLive: Summary;
  subscriberLive: Summary | undefined;
  duplicates: number;
  missing: number;
  outOfOrder: number;
  signatureFailures: number;
  otherStates: Map<string, number>;
  foreign: number;
  cpu: CpuReading;
  receiverCpu: number | undefined;
  wallSeconds: number;
  benchLoopDelayP99: number;
  breakdown: DeliveryBreakdown | undefined;
}

const ENDPOINT_MUTATION = `mutation BenchWebhookEndpoint($input: CreateWebhookEndpointInput!) {
  createWebhookEndpoint(input: $input) { secret endpoint { id } }
}`;

class Bench {
  private readonly runId = randomBytes(4).toString('hex');
  endpointId: string | undefined;
  receiver: Receiver | undefined;
  pool: SubscriberPool | undefined;

  constructor(
    private readonly stack: BenchStack,
    private readonly options: Options,
    private readonly signal: AbortSignal,
  ) {}

  private prefix(phase: string): string {
    return `bench ${this.runId} ${phase} `;
  }

  async setUp(): Promise<void> {
    this.receiver = await startReceiver(this.signal);
    const { createWebhookEndpoint } = await graphql<{ createWebhookEndpoint: { secret: string; endpoint: { id: string } } }>(
      this.stack.baseUrl,
      this.stack.token,
      ENDPOINT_MUTATION,
      { input: { url: this.receiver.url, eventTypes: ['POST_STATE_CHANGED'], description: `bench/webhooks ${this.runId}` } },
    );
    this.endpointId = createWebhookEndpoint.endpoint.id;
    this.receiver.setSecret(createWebhookEndpoint.secret);
    log(`  webhook endpoint ${this.endpointId} -> ${this.receiver.url} (receiver pid ${this.receiver.pid})`);
    if (this.options.baseline) {
      this.pool = new SubscriberPool({ wsUrl: `${this.stack.baseUrl.replace(/^http/, 'ws')}/graphql`, token: this.stack.token, count: 1, signal: this.signal });
      await this.pool.open();
    }
  }

  private record(recorder: PhaseRecorder | undefined): void {
    this.receiver!.setRecorder(recorder);
    this.pool?.setHandler(
      recorder &&
        ((_subscriber, data, at) => {
          const event = (data as { postUpdated?: PostUpdatedEvent }).postUpdated;
          // performance.timeOrigin + at: the same sub-millisecond wall clock as the receiver's.
          if (event?.params?.summary?.startsWith(recorder.prefix)) recorder.subscriberEvent(event, performance.timeOrigin + at);
        }),
    );
  }

  /** Until every expected event arrived, `idleMs` pass without one, or the run is aborted. */
  private async drain(recorder: PhaseRecorder, posts: number, idleMs: number, maxMs: number): Promise<boolean> {
    const done = () => recorder.firstArrival.size >= 2 * posts && (!this.pool || recorder.subscriberLive.size >= posts);
    const deadline = performance.now() + maxMs;
    while (!done()) {
      if (this.signal.aborted || performance.now() - recorder.lastEventAt > idleMs || performance.now() > deadline) return false;
      await sleep(20, this.signal);
    }
    return true;
  }

  /**
   * Posts created and awaited before measuring: the service's pools and JIT warm up, and the receiver and the
   * subscriber are known to get events (graphql-ws acknowledges no subscription).
   */
  async warmUp(): Promise<void> {
    const recorder = new PhaseRecorder(this.prefix('warmup'));
    this.record(recorder);
    const count = Math.max(1, this.options.warmup);
    const created = (await createPostsPaced(this.stack, { count, rate: Math.min(this.options.rate, 20), prefix: recorder.prefix, signal: this.signal })).filter((r) => r.id).length;
    if (created === 0) throw new Error('no warm-up post could be created');
    recorder.lastEventAt = performance.now();
    const arrived = await this.drain(recorder, created, 30_000, 60_000);
    this.record(undefined);
    if (this.signal.aborted) return;
    if (recorder.firstArrival.size === 0) {
      throw new Error('no webhook reached the receiver within 30 s: does the stack allow private targets (WEBHOOK_ALLOW_PRIVATE_TARGETS=on)?');
    }
    if (!arrived) log(`  warm-up: ${recorder.firstArrival.size}/${2 * created} events, ${recorder.subscriberLive.size}/${created} at the subscriber; measuring anyway`);
  }

  async measure(): Promise<Result> {
    const recorder = new PhaseRecorder(this.prefix('run'));
    this.record(recorder);
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const cpuBefore = stackCpuNow(this.stack);
    const receiverBefore = processCpuSeconds(this.receiver!.pid);
    const started = performance.now();
    const requested = Math.round(this.options.seconds * this.options.rate);

    const records = await createPostsPaced(this.stack, { count: requested, rate: this.options.rate, prefix: recorder.prefix, signal: this.signal });
    const created = records.filter((record) => record.id !== undefined);
    recorder.lastEventAt = Math.max(recorder.lastEventAt, performance.now());
    const complete = (await this.drain(recorder, created.length, this.options.drainIdleMs, this.options.drainMaxMs)) && !this.signal.aborted;

    const wallSeconds = (performance.now() - started) / 1000;
    const cpu = cpuSince(cpuBefore, stackCpuNow(this.stack));
    const receiverAfter = processCpuSeconds(this.receiver!.pid);
    loopDelay.disable();
    this.record(undefined);

    const result = figuresOf(recorder, records, created, complete);
    result.cpu = cpu;
    result.receiverCpu = receiverBefore === undefined || receiverAfter === undefined ? undefined : receiverAfter - receiverBefore;
    result.wallSeconds = wallSeconds;
    result.benchLoopDelayP99 = loopDelay.percentile(99) / 1e6;
    result.foreign = this.receiver!.foreign();
    if (this.stack.databaseUrl && this.endpointId && !this.signal.aborted) {
      try {
        result.breakdown = await readBreakdown(this.stack.databaseUrl, this.endpointId, recorder);
      } catch (error) {
        log(`  (no server-side breakdown: ${error instanceof Error ? error.message : String(error)})`);
      }
    }
    return result;
  }

  async close(): Promise<void> {
    // On a running stack (--url) the endpoint would go on receiving its organization's events: it goes.
    if (this.endpointId) {
      await graphql(this.stack.baseUrl, this.stack.token, 'mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }', { id: this.endpointId }).catch((error: unknown) =>
        log(`  could not delete the webhook endpoint ${this.endpointId}: ${String(error)}`),
      );
    }
    await this.pool?.close();
    await this.receiver?.stop();
  }
}

/** The commit stamp of an event as the payload carries it: record.update_time after a change, else occurred_at. */
const stampOf = (arrival: Arrival) => arrival.updateTime ?? arrival.occurredAt;

function figuresOf(recorder: PhaseRecorder, records: CreateRecord[], created: CreateRecord[], complete: boolean): Result {
  const createErrors = new Map<string, number>();
  for (const record of records) {
    if (record.error) createErrors.set(record.error.slice(0, 160), (createErrors.get(record.error.slice(0, 160)) ?? 0) + 1);
  }
  const firstSent = Math.min(...records.map((r) => r.sentAt));
  const lastAnswer = Math.max(...created.map((r) => r.answeredAt));
  const delayAll: number[] = [];
  const delaySending: number[] = [];
  const delayLive: number[] = [];
  const otherStates = new Map<string, number>();
  const perPost = new Map<string, number>();
  let lastArrival = -Infinity;
  for (const arrival of recorder.firstArrival.values()) {
    lastArrival = Math.max(lastArrival, arrival.at);
    if (arrival.recordId) perPost.set(arrival.recordId, (perPost.get(arrival.recordId) ?? 0) + 1);
    const stamp = stampOf(arrival);
    if (stamp === undefined) continue;
    const delay = arrival.at - stamp;
    delayAll.push(delay);
    if (arrival.state === 'SENDING' && arrival.updateTime === undefined) delaySending.push(delay);
    else if (arrival.state === 'LIVE') delayLive.push(delay);
    else otherStates.set(arrival.state ?? '?', (otherStates.get(arrival.state ?? '?') ?? 0) + 1);
  }
  // Two per created post: SENDING at the create, LIVE when published (docs/activity-log.md).
  let missing = 0;
  for (const record of created) missing += Math.max(0, 2 - (perPost.get(record.id!) ?? 0));
  // Per record, in arrival order: an event arriving after one of a larger sequence is out of order.
  let outOfOrder = 0;
  const highest = new Map<string, bigint>();
  for (const arrival of [...recorder.firstArrival.values()].sort((a, b) => a.at - b.at)) {
    if (!arrival.recordId || arrival.sequence === undefined) continue;
    const sequence = BigInt(arrival.sequence);
    const before = highest.get(arrival.recordId);
    if (before !== undefined && sequence < before) outOfOrder += 1;
    else highest.set(arrival.recordId, sequence);
  }
  // performance.now() of the receiver's wall clock: the arrivals are wall-clock, the sends performance.now().
  const lastArrivalLocal = lastArrival - performance.timeOrigin;
  const postingSeconds = (lastAnswer - firstSent) / 1000;
  return {
    complete,
    requested: records.length,
    created: created.length,
    createErrors,
    postingSeconds,
    createRatePerSecond: created.length > 0 ? created.length / postingSeconds : undefined,
    postLatency: summarize(created.map((r) => r.answeredAt - r.sentAt)),
    eventsExpected: 2 * created.length,
    eventsReceived: recorder.firstArrival.size,
    deliveredPerSecond: recorder.firstArrival.size > 0 ? recorder.firstArrival.size / ((lastArrivalLocal - firstSent) / 1000) : undefined,
    tailSeconds: recorder.firstArrival.size > 0 ? (lastArrivalLocal - lastAnswer) / 1000 : undefined,
    delayAll: summarize(delayAll),
    delaySending: summarize(delaySending),
    delayLive: summarize(delayLive),
    subscriberLive: recorder.subscriberLive.size > 0 ? summarize([...recorder.subscriberLive.values()]) : undefined,
    duplicates: recorder.duplicates,
    missing,
    outOfOrder,
    signatureFailures: recorder.signatureFailures,
    otherStates,
    foreign: 0,
    cpu: { server: undefined, postgres: undefined, bench: 0 },
    receiverCpu: undefined,
    wallSeconds: 0,
    benchLoopDelayP99: 0,
    breakdown: undefined,
  };
}

const BREAKDOWN_QUERY = `
  with jobs as (
    select data->>'deliveryId' as delivery_id, created_on, started_on from pgboss.job where name = 'webhook-deliver'
    union all
    select data->>'deliveryId', created_on, started_on from pgboss.archive where name = 'webhook-deliver'
  )
  select d.event_id::text as event_id, d.status, d.attempts, d.last_latency_ms,
         extract(epoch from d.created_at) * 1000 as created_at,
         extract(epoch from d.last_attempt_at) * 1000 as last_attempt_at,
         extract(epoch from min(j.created_on)) * 1000 as job_created_on,
         extract(epoch from min(j.started_on)) * 1000 as started_on
    from webhook_delivery d left join jobs j on j.delivery_id = d.id::text
   where d.endpoint_id = $1 and not d.redelivery
   group by d.id`;

interface BreakdownRow {
  event_id: string;
  status: string;
  attempts: number;
  last_latency_ms: number | null;
  created_at: string;
  last_attempt_at: string | null;
  job_created_on: string | null;
  started_on: string | null;
}

async function readBreakdown(databaseUrl: string, endpointId: string, recorder: PhaseRecorder): Promise<DeliveryBreakdown> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'lg-bench' });
  await client.connect();
  let rows: BreakdownRow[];
  try {
    rows = (await client.query<BreakdownRow>(BREAKDOWN_QUERY, [endpointId])).rows;
  } finally {
    await client.end();
  }
  const stampToRow: number[] = [];
  const rowToJob: number[] = [];
  const jobToFetched: number[] = [];
  const fetchedToSent: number[] = [];
  const sentToArrival: number[] = [];
  const attemptLatency: number[] = [];
  const statuses = new Map<string, number>();
  let retried = 0;
  for (const row of rows) {
    // Every delivery of the endpoint (the warm-up's too): what is still open shows the backlog left.
    statuses.set(row.status, (statuses.get(row.status) ?? 0) + 1);
    const arrival = recorder.firstArrival.get(row.event_id);
    if (!arrival) continue;
    if (row.attempts > 1) retried += 1;
    const createdAt = Number(row.created_at);
    const stamp = stampOf(arrival);
    if (stamp !== undefined) stampToRow.push(createdAt - stamp);
    const startedOn = row.started_on === null ? undefined : Number(row.started_on);
    const jobCreatedOn = row.job_created_on === null ? undefined : Number(row.job_created_on);
    if (jobCreatedOn !== undefined) rowToJob.push(jobCreatedOn - createdAt);
    if (jobCreatedOn !== undefined && startedOn !== undefined) jobToFetched.push(startedOn - jobCreatedOn);
    if (row.last_latency_ms !== null) attemptLatency.push(row.last_latency_ms);
    // last_attempt_at is taken once the answer is read; the send was its latency before (whole milliseconds).
    if (row.last_attempt_at !== null && row.last_latency_ms !== null && row.attempts === 1) {
      const sent = Number(row.last_attempt_at) - row.last_latency_ms;
      if (startedOn !== undefined) fetchedToSent.push(sent - startedOn);
      sentToArrival.push(arrival.at - sent);
    }
  }
  return {
    stampToRow: summarize(stampToRow),
    rowToJob: summarize(rowToJob),
    jobToFetched: summarize(jobToFetched),
    fetchedToSent: summarize(fetchedToSent),
    sentToArrival: summarize(sentToArrival),
    attemptLatency: summarize(attemptLatency),
    retried,
    statuses,
  };
}

function log(line: string): void {
  console.log(line);
}

const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || b <= 0 ? 'n/a' : `${(a / b).toFixed(1)}x`);

function report(result: Result | undefined, options: Options, stack: BenchStack | undefined, aborted: string | undefined): void {
  console.log('');
  if (!result) {
    console.log('Nothing was measured.');
  } else {
    const r = result;
    console.log(
      `Figures (${r.created} posts at ${options.rate}/s for ${options.seconds} s; ms unless stated; delay = arrival − the payload's commit stamp: ` +
        'record.update_time after a change (LIVE), the event\'s occurred_at at a creation (SENDING))',
    );
    const delayRow = (name: string, events: string, perSecond: string, s: Summary | undefined): string[] => [
      name,
      events,
      perSecond,
      ms(s?.p50),
      ms(s?.p95),
      ms(s?.p99),
      ms(s?.max),
    ];
    const rows = [['path', 'events recv/expected', 'delivered/s', 'p50', 'p95', 'p99', 'max']];
    rows.push(delayRow('webhook, all events', `${r.eventsReceived}/${r.eventsExpected}`, ms(r.deliveredPerSecond, 0), r.delayAll));
    rows.push(delayRow('webhook, SENDING (occurred_at)', String(r.delaySending.count), '-', r.delaySending));
    rows.push(delayRow('webhook, LIVE (update_time)', String(r.delayLive.count), '-', r.delayLive));
    if (r.subscriberLive) {
      rows.push(delayRow('graphql-ws, LIVE (updateTime)', `${r.subscriberLive.count}/${r.created}`, '-', r.subscriberLive));
      const l = r.delayLive;
      const s = r.subscriberLive;
      rows.push(['webhook ÷ graphql-ws, LIVE', '', '', ratio(l.p50, s.p50), ratio(l.p95, s.p95), ratio(l.p99, s.p99), ratio(l.max, s.max)]);
    }
    console.log(table(rows));
    console.log(`  offered: ${ms(r.createRatePerSecond ? 2 * r.createRatePerSecond : undefined, 0)} events/s (2 per post created); done: ${r.complete ? 'yes' : 'NO'}`);

    console.log('');
    console.log('Delivery');
    console.log(
      table([
        ['duplicates', 'missing', 'out of order', 'signature failures', 'other states', 'foreign arrivals'],
        [
          String(r.duplicates),
          String(r.missing),
          String(r.outOfOrder),
          String(r.signatureFailures),
          r.otherStates.size ? [...r.otherStates].map(([state, count]) => `${state} ${count}`).join(', ') : '0',
          String(r.foreign),
        ],
      ]),
    );

    console.log('');
    console.log('Details');
    const cpuHeader = r.cpu.sandboxes !== undefined ? 'CPU s service/pg/bench/sandboxes' : 'CPU s server/pg/bench';
    console.log(
      table([
        ['posts', 'creates/s', 'POST p50', 'POST p95', 'tail s', cpuHeader, 'CPU s receiver', 'wall s', 'bench loop p99'],
        [
          r.created === r.requested ? String(r.created) : `${r.created}/${r.requested}`,
          ms(r.createRatePerSecond, 0),
          ms(r.postLatency.p50),
          ms(r.postLatency.p95),
          ms(r.tailSeconds),
          cpuSplit(r.cpu, ms),
          ms(r.receiverCpu),
          ms(r.wallSeconds),
          ms(r.benchLoopDelayP99),
        ],
      ]),
    );

    if (r.breakdown) {
      const b = r.breakdown;
      const triple = (s: Summary) => `${ms(s.p50)}/${ms(s.p95)}/${ms(s.max)}`;
      console.log('');
      console.log('Where the delay goes (server stamps from the database; p50/p95/max ms; first attempts only for the last two stages)');
      console.log(
        table([
          ['stamp->delivery row', 'row->job (slot)', 'job->fetched', 'fetched->sent', 'sent->arrival', 'attempt latency', 'retried', 'statuses (all of the endpoint)'],
          [
            triple(b.stampToRow),
            triple(b.rowToJob),
            triple(b.jobToFetched),
            triple(b.fetchedToSent),
            triple(b.sentToArrival),
            triple(b.attemptLatency),
            String(b.retried),
            [...b.statuses].map(([status, count]) => `${status} ${count}`).join(', '),
          ],
        ]),
      );
    }

    const problems: string[] = [];
    for (const [error, count] of r.createErrors) problems.push(`${count} create(s) failed: ${error}`);
    if (!r.complete) problems.push(`not every event arrived: ${r.eventsReceived}/${r.eventsExpected}${aborted ? ' (the run was stopped)' : ` (none for ${options.drainIdleMs / 1000} s, or ${options.drainMaxMs / 1000} s after the last post)`}`);
    const warnings = stack?.serverWarnings() ?? [];
    if (warnings.length > 0) problems.push(`the server logged ${warnings.length} warning line(s); first: ${warnings[0]!.slice(0, 300)}`);
    if (problems.length > 0) {
      console.log('');
      console.log('Problems');
      for (const problem of problems) console.log(`  - ${problem}`);
    }
  }
  if (aborted) {
    console.log('');
    console.log(`Stopped early: ${aborted}. The figures above are what was measured until then.`);
  }
}

function toJson(result: Result | undefined): unknown {
  if (!result) return undefined;
  return {
    ...result,
    createErrors: Object.fromEntries(result.createErrors),
    otherStates: Object.fromEntries(result.otherStates),
    breakdown: result.breakdown && { ...result.breakdown, statuses: Object.fromEntries(result.breakdown.statuses) },
  };
}

runBench({
  name: 'webhooks',
  usage: USAGE,
  values: ['seconds', 'rate', 'warmup', 'drain-idle-s', 'drain-max-s', 'endpoint-concurrency'],
  flags: ['no-baseline'],
  timeoutSeconds: 600,
  databaseUrl: { why: 'for the server-side breakdown', required: false },
  sandbox: { latencyMs: 0, processingMs: 0 },
  // The receiver is on 127.0.0.1: a loopback target is refused unless private targets are allowed.
  stackEnv: (options: Options): Record<string, string> => ({
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
    ...(options.endpointConcurrency === undefined ? {} : { WEBHOOK_ENDPOINT_CONCURRENCY: String(options.endpointConcurrency) }),
  }),
  read(values, common): Options {
    const endpointConcurrency = values['endpoint-concurrency'] === undefined ? undefined : integerOption('endpoint-concurrency', values['endpoint-concurrency'], 4, 1, 16);
    if (endpointConcurrency !== undefined && common.url) throw new Error('--endpoint-concurrency works only on the stack the bench starts (no --url)');
    return {
      seconds: integerOption('seconds', values.seconds, 30, 1),
      rate: integerOption('rate', values.rate, 100, 1),
      warmup: integerOption('warmup', values.warmup, 20, 0),
      drainIdleMs: integerOption('drain-idle-s', values['drain-idle-s'], 30, 1) * 1000,
      drainMaxMs: integerOption('drain-max-s', values['drain-max-s'], 120, 1) * 1000,
      endpointConcurrency,
      baseline: !values['no-baseline'],
    };
  },
  start(options, signal) {
    // Every request in flight listens to the run's signal: up to the schedule's backlog of them at once.
    setMaxListeners(0, signal);
    let result: Result | undefined;
    let bench: Bench | undefined;
    return {
      async measure({ stack }: BenchEnvironment) {
        console.log(`  posting to ${stack.targets.length} location(s), ${options.rate} posts/s for ${options.seconds} s; receiver in its own process${options.baseline ? '; 1 graphql-ws subscriber' : ''}`);
        bench = new Bench(stack, options, signal);
        await bench.setUp();
        await bench.warmUp();
        if (signal.aborted) return;
        log(`  measuring ${options.seconds * options.rate} posts…`);
        result = await bench.measure();
      },
      report(stack, aborted) {
        report(result, options, stack, aborted);
        return { result: toJson(result) };
      },
      close: async () => {
        await bench?.close();
      },
      forceStop: () => bench?.receiver?.kill(),
    };
  },
});
