import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ProviderCallObserver } from '../providers/shared/http';
import { PROVIDER_NAMES } from '../providers/shared/provider-error';

/**
 * The process's Prometheus metrics: one registry per running stack (two stacks in one process, as the tests run
 * them, never mix their counts), built once at start-up and handed to the parts that count (src/stack.ts). Names
 * follow Prometheus conventions (`lg_` prefix, base units, `_total` counters); every label has a bounded set of
 * values, never an id: routes are Fastify's templates, operations the schema's or the clients' own bounded names.
 * docs/operations.md lists every family.
 */

/** Request and job durations: 5 ms to 30 s. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Queue waits run longer (scheduled posts, retries with backoff): up to an hour. */
const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600];
/** Event delivery: sub-millisecond on one machine, seconds when a bus is struggling. */
const DELIVERY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/** At most this many distinct GraphQL operation names are labelled as sent; later ones count as `other`. */
export const MAX_OPERATION_NAMES = 200;
const OPERATION_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** The code label of an operation's first error (`none` when it had none). */
export function errorCodeLabel(error: { extensions?: Record<string, unknown> } | undefined): string {
  if (!error) return 'none';
  const code = error.extensions?.code;
  return typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR';
}

export type JobOutcome = 'completed' | 'retried' | 'waited' | 'failed' | 'dead_lettered';

/** What the database pool reports when scraped. */
export interface PoolSnapshot {
  inUse: number;
  idle: number;
  waiting: number;
}

/** How many jobs of each queue that calls a provider wait for it now (the whole deployment's), read at each scrape. */
export type WaitingJobs = { queue: string; provider: string; count: number }[];

/** What the providers' budgets and pauses are now, read at each scrape. */
export interface ProviderBudgetSnapshot {
  budgets: { provider: string; perSecond: number; waiting: number; granted: number; late: number }[];
  pauses: { provider: string; untilMs: number }[];
}

/** How often the event loop's delay is sampled (lg_nodejs_eventloop_lag_*). */
const EVENT_LOOP_SAMPLE_MS = 100;

export class Metrics {
  readonly registry = new Registry();
  private readonly operationNames = new Set<string>();

  readonly httpRequests = new Counter({
    name: 'lg_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'lg_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being sent, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly graphqlOperations = new Counter({
    name: 'lg_graphql_operations_total',
    help: 'GraphQL operations run, by operation name, type, transport (http, rest, websocket, sse) and first error code (none when it succeeded)',
    labelNames: ['operation', 'type', 'transport', 'error_code'] as const,
    registers: [this.registry],
  });
  readonly graphqlDuration = new Histogram({
    name: 'lg_graphql_operation_duration_seconds',
    help: 'Time to run a GraphQL operation (parse to result; for a subscription, its setup), by operation name, type and transport',
    labelNames: ['operation', 'type', 'transport'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly jobsCreated = new Counter({ name: 'lg_jobs_created_total', help: 'Jobs enqueued, by queue', labelNames: ['queue'] as const, registers: [this.registry] });
  readonly jobsEnded = new Counter({
    name: 'lg_job_attempts_total',
    help: 'Job attempts ended, by queue and outcome: completed, retried (failed, to be tried again), waited (the provider asked to come back later: no attempt spent), failed (failed for good), dead_lettered (settled from the dead-letter queue)',
    labelNames: ['queue', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly jobsActive = new Gauge({ name: 'lg_jobs_active', help: 'Jobs running now in this process, by queue', labelNames: ['queue'] as const, registers: [this.registry] });
  readonly jobWait = new Histogram({
    name: 'lg_job_wait_seconds',
    help: 'Time a job waited from when it could start (created, or its start time) to when a worker took it, by queue',
    labelNames: ['queue'] as const,
    buckets: WAIT_BUCKETS,
    registers: [this.registry],
  });
  readonly jobRun = new Histogram({
    name: 'lg_job_run_seconds',
    help: 'Time a job attempt ran, by queue',
    labelNames: ['queue'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly webhookDeliveriesCreated = new Counter({
    name: 'lg_webhook_deliveries_created_total',
    help: 'Webhook deliveries made from recorded events (one per event and endpoint wanting it)',
    registers: [this.registry],
  });
  readonly webhookAttempts = new Counter({
    name: 'lg_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome: succeeded (2xx), retried (to be sent again), given_up (failed for a day)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookLatency = new Histogram({
    name: 'lg_webhook_attempt_seconds',
    help: 'Time from sending a webhook request to its answer (or its failure)',
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly webhookBacklog = new Gauge({
    name: 'lg_webhook_backlog',
    help: 'Webhook deliveries not ended yet (PENDING or SENDING), as the dispatcher last counted them',
    registers: [this.registry],
  });

  readonly providerCalls = new Counter({
    name: 'lg_provider_requests_total',
    help: 'Calls to the providers, by provider, operation (method and path template) and status (the HTTP status, or timeout, network, cancelled)',
    labelNames: ['provider', 'operation', 'status'] as const,
    registers: [this.registry],
  });
  readonly providerDuration = new Histogram({
    name: 'lg_provider_request_duration_seconds',
    help: 'Time of a call to a provider, answer body included, by provider and operation',
    labelNames: ['provider', 'operation'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly websocketSockets = new Gauge({ name: 'lg_websocket_sockets', help: 'graphql-ws sockets open now', registers: [this.registry] });
  readonly subscriptions = new Gauge({
    name: 'lg_graphql_subscriptions',
    help: 'GraphQL subscriptions running now, by root field',
    labelNames: ['field'] as const,
    registers: [this.registry],
  });
  readonly fanoutDelay = new Histogram({
    name: 'lg_subscription_fanout_delay_seconds',
    help: "Time from a change's event being published (just after its commit) to its delivery to a subscription group, by topic",
    labelNames: ['topic'] as const,
    buckets: DELIVERY_BUCKETS,
    registers: [this.registry],
  });

  readonly eventBusReconnects = new Counter({
    name: 'lg_event_bus_reconnects_total',
    help: 'Event bus connections re-opened after a loss, by backend',
    labelNames: ['backend'] as const,
    registers: [this.registry],
  });
  readonly eventBusLag = new Histogram({
    name: 'lg_event_bus_lag_seconds',
    help: 'Time from an event being published (in any process) to its arrival in this process, by backend',
    labelNames: ['backend'] as const,
    buckets: DELIVERY_BUCKETS,
    registers: [this.registry],
  });

  readonly providerPauses = new Counter({
    name: 'lg_provider_pauses_total',
    help: "Pauses of a provider met by this process: a 429 naming the provider's project quota, by provider",
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  readonly rateLimitRefusals = new Counter({
    name: 'lg_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit, quota or open-work limit, by limit',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  constructor(options: { pool?: () => PoolSnapshot | undefined; providers?: () => ProviderBudgetSnapshot; waitingJobs?: () => Promise<WaitingJobs | undefined> } = {}) {
    const { pool, providers, waitingJobs } = options;
    // The providers' budgets as this process sees them (docs/operations.md, "Provider budgets").
    new Gauge({
      name: 'lg_provider_budget_requests_per_second',
      help: 'The request budget of each provider (the whole deployment together), by provider; absent: no budget',
      labelNames: ['provider'] as const,
      registers: [this.registry],
      collect() {
        for (const budget of providers?.().budgets ?? []) this.set({ provider: budget.provider }, budget.perSecond);
      },
    });
    new Gauge({
      name: 'lg_provider_budget_waiting_calls',
      help: "This process's calls waiting for a slot of their provider's budget now, by provider",
      labelNames: ['provider'] as const,
      registers: [this.registry],
      collect() {
        for (const budget of providers?.().budgets ?? []) this.set({ provider: budget.provider }, budget.waiting);
      },
    });
    new Counter({
      name: 'lg_provider_budget_calls_total',
      help: "This process's calls given a slot of their provider's budget, by provider",
      labelNames: ['provider'] as const,
      registers: [this.registry],
      collect() {
        // The budgets count their own calls: the counter shows their totals.
        this.reset();
        for (const budget of providers?.().budgets ?? []) this.inc({ provider: budget.provider }, budget.granted);
      },
    });
    new Counter({
      name: 'lg_provider_budget_late_slots_total',
      help: "This process's budget slots given up because their call could not start in time (a busy process), by provider",
      labelNames: ['provider'] as const,
      registers: [this.registry],
      collect() {
        // Each one is a slot of the deployment's budget no call used: a busy process drains below its budget.
        this.reset();
        for (const budget of providers?.().budgets ?? []) this.inc({ provider: budget.provider }, budget.late);
      },
    });
    new Gauge({
      name: 'lg_provider_paused_seconds',
      help: 'Seconds until a paused provider may be called again (0: not paused), by provider',
      labelNames: ['provider'] as const,
      registers: [this.registry],
      collect() {
        const now = Date.now();
        const paused = new Map((providers?.().pauses ?? []).map((pause) => [pause.provider, pause.untilMs]));
        for (const provider of PROVIDER_NAMES) this.set({ provider }, Math.max(0, ((paused.get(provider) ?? now) - now) / 1000));
      },
    });
    new Gauge({
      name: 'lg_jobs_waiting',
      help: "Jobs waiting for their provider now (a 429 or the provider's pause put them back in their queue), by queue and the provider it calls: the whole deployment's, counted in the database at each scrape",
      labelNames: ['queue', 'provider'] as const,
      registers: [this.registry],
      async collect() {
        // Not counted (the database did not answer; the reader logged it): no samples rather than stale ones.
        this.reset();
        for (const row of (await waitingJobs?.()) ?? []) this.set({ queue: row.queue, provider: row.provider }, row.count);
      },
    });
    new Gauge({
      name: 'lg_db_pool_connections',
      help: "The ORM's database connections, by state: in_use, idle, waiting (requests waiting for a connection)",
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const now = pool?.();
        if (!now) return;
        this.set({ state: 'in_use' }, now.inUse);
        this.set({ state: 'idle' }, now.idle);
        this.set({ state: 'waiting' }, now.waiting);
      },
    });
    // The event loop's delay sampled every 100 ms, not prom-client's 10: each sample is a wake-up of the process, and
    // 100 a second were most of an idle process's CPU (docs/benchmarks.md, "Seventh slice"). Each sample still
    // measures how late its timer fired, so a blocked loop shows as before.
    collectDefaultMetrics({ register: this.registry, prefix: 'lg_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /** The label for a GraphQL operation's name: the client's when it is a plain name and one of the first MAX_OPERATION_NAMES. */
  operationLabel(name: string | null | undefined): string {
    if (!name) return 'anonymous';
    if (!OPERATION_NAME.test(name)) return 'other';
    if (this.operationNames.has(name)) return name;
    if (this.operationNames.size >= MAX_OPERATION_NAMES) return 'other';
    this.operationNames.add(name);
    return name;
  }

  /** One GraphQL operation run: `started` is its performance.now() at the start. */
  countOperation(run: { name: string | null | undefined; type: string; transport: 'http' | 'rest' | 'websocket' | 'sse'; errorCode: string; started: number }): void {
    const operation = this.operationLabel(run.name);
    this.graphqlOperations.inc({ operation, type: run.type, transport: run.transport, error_code: run.errorCode });
    this.graphqlDuration.observe({ operation, type: run.type, transport: run.transport }, (performance.now() - run.started) / 1000);
  }

  /** What a provider's client reports of each call (src/providers/shared/http.ts). */
  providerObserver(provider: string): ProviderCallObserver {
    return ({ operation, status, seconds }) => {
      this.providerCalls.inc({ provider, operation, status });
      this.providerDuration.observe({ provider, operation }, seconds);
    };
  }

  countJob(queue: string, outcome: JobOutcome): void {
    this.jobsEnded.inc({ queue, outcome });
  }
}
