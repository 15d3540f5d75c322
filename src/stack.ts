import path from 'node:path';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { ConfigError, type Config } from './config';
import { locateDatabase } from './db/locate-database';
import Fastify from 'fastify';
import { migrate, openDatabase, poolSnapshot } from './db/orm';
import { statementsApart } from './db/statements';
import { currentCallPriority } from './observability/origin';
import { Metrics } from './observability/metrics';
import { observeAll, ProviderHealthWindow } from './observability/provider-health';
import { logTracingProblems, stopTracing } from './observability/tracing';
import { registerMetricsRoute } from './http/metrics-route';
import { DEMO_FILE, demoFor, type DemoSeed } from './demo/demo.seed';
import { DemoPreparation } from './demo/demo.preparation';
import type { DemoProvider } from './demo/demo.provider';
import { createEventBus } from './events/create-event-bus';
import { bridgeEventsToSubscriptions } from './events/graphql-pubsub';
import { JobEngine } from './jobs/job-engine';
import { countWaitingJobs } from './jobs/waiting-jobs';
import { createLogger, type LoggerSetup } from './logger';
import { composition } from './modules';
import { createAlphaClient } from './providers/alpha/alpha.client';
import { createAlphaOAuthClient } from './providers/alpha/alpha.oauth';
import { createBetaClient } from './providers/beta/beta.client';
import { createBetaOAuthClient } from './providers/beta/beta.oauth';
import { baseUrlNow, type BaseUrl } from './providers/shared/http';
import { providerBudgetsOf } from './providers/shared/provider-budget';
import { postgresSlotStore } from './limits/provider-slots';
import { redisSlotStore } from './limits/redis-provider-slots';
import { restEventPresenter } from './rest/event-presenter';
import type { Runtime } from './runtime';
import { frontDoorLinks } from './home/front-door';
import { gatewaySchema } from './schema';
import { buildServer, type GatewayServer } from './server';
import { systemClock, type Clock } from './shared/clock';
import { createSecretBox, loadSecretKey } from './shared/secret-box';

export interface Stack {
  /** The HTTP base URL; undefined for a worker-only process. */
  url: string | undefined;
  runtime: Runtime;
  server: GatewayServer | undefined;
  demo: DemoSeed | undefined;
  log: FastifyBaseLogger;
  banner(): string;
  /**
   * Resolves when the demo this start prints is ready to use (its locations at the provider, its posts made and
   * settled: src/demo/demo.prepare.ts), or after a bounded wait, which the log explains; at once when this process
   * prepares no demo.
   */
  demoReady(): Promise<void>;
  /** Stops everything this process started, in the reverse order of starting; resolves when all has ended. */
  stop(): Promise<void>;
}

/**
 * Something its starter mounts on the server beside the product: in development and tests, the provider
 * simulators (sandboxes/, through dev/provider-sandboxes.ts). The product itself never names one.
 */
export interface ServerExtension {
  /** Registers its routes before the server listens. */
  register(app: FastifyInstance, context: { clock: Clock; dataDir: string }): Promise<void>;
  /** The providers it serves once the server listens at `serverUrl`; a provider URL in the configuration wins. */
  providerUrls(serverUrl: string): { alpha: string; beta: string };
  /** Once the server listens, before the workers start. */
  started?(context: { serverUrl: string; alphaUrl: string; demo: DemoSeed | undefined; log: FastifyBaseLogger }): Promise<void>;
  /** What answers as the providers, for the banner: `the sandbox`. */
  description: string;
  /** What the demo may ask of the providers it serves (at `alpha` and `beta`), when they can be told (src/demo/demo.provider.ts). */
  demoProvider?(urls: { alpha: string; beta: string }): DemoProvider;
}

export interface StackOptions {
  seedDemo?: boolean;
  /** The clock services, workers and a mounted extension read (tests hold or move it). */
  clock?: Clock;
  log?: LoggerSetup;
  /** Mounted on the server (not in ROLE=worker); it may serve the providers whose URLs are not configured. */
  extension?: ServerExtension;
  /** The dashboard's built bundle, for a stack run from the sources (tests); default beside the compiled server. */
  dashboardDir?: string;
}

/** How long the banner waits for the demo to be ready before it comes anyway (the preparation goes on). */
const DEMO_READY_WAIT_MS = 60_000;

/** One step of stopping: named for the log, run once. */
interface StopStep {
  name: string;
  run(): unknown;
}

/**
 * Runs the stop steps last-started first. Every step runs even if an earlier one failed (a failed step is logged
 * and reported at the end), so a problem in one part never leaves the others, or the database, running.
 */
async function runStopSteps(steps: StopStep[], log: FastifyBaseLogger): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps.splice(0).reverse()) {
    try {
      log.debug(`stopping: ${step.name}`);
      await step.run();
    } catch (error) {
      log.error({ err: error }, `stopping ${step.name} failed`);
      failures.push(error);
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, `${failures.length} parts did not stop cleanly`);
}

/** The setting that names each provider's base URL. */
const PROVIDER_URL_SETTINGS = { alpha: 'ALPHA_API_URL', beta: 'BETA_API_URL' } as const;

/**
 * A process that runs the workers needs every provider its queues call (`provider` in their definitions): set by
 * its URL, or mounted beside this process's server. Checked before anything starts, so a split deployment that
 * forgot one refuses to start, naming the setting, instead of failing each of those jobs later (docs/operations.md,
 * "Checked at start"). Whether the provider answers is not asked: a provider down for a moment is what the jobs'
 * retries are for, and must not keep the workers from starting.
 */
function refuseWorkersWithoutProviders(config: Config, extension: ServerExtension | undefined): void {
  if (config.role === 'api' || extension) return;
  const configured = { alpha: config.alphaApiUrl, beta: config.betaApiUrl };
  const missing = new Map<keyof typeof PROVIDER_URL_SETTINGS, string[]>();
  for (const queue of composition.queues) {
    if (queue.provider && !configured[queue.provider]) missing.set(queue.provider, [...(missing.get(queue.provider) ?? []), queue.name]);
  }
  if (missing.size === 0) return;
  const lines = [...missing].map(
    ([provider, queues]) => `  ${PROVIDER_URL_SETTINGS[provider]} is not set: the ${provider} provider's base URL, which the jobs of ${queues.join(', ')} call`,
  );
  const mounted =
    config.role === 'worker'
      ? 'a ROLE=worker process mounts no provider (the sandboxes `npm start` mounts answer on that server\'s port, e.g. BETA_API_URL=http://127.0.0.1:4000/sandbox/beta)'
      : 'no provider is mounted beside this server';
  throw new ConfigError(`Invalid configuration: this process runs the job workers (ROLE=${config.role}) and ${mounted}:\n${lines.join('\n')}`);
}

/**
 * Brings the service up: database (embedded or DATABASE_URL), migrations, event bus, job engine, then per ROLE the
 * HTTP server (api), the workers (worker), or both (all). The stop is the start reversed, one step at a time: the
 * order and why, docs/decisions.md, "Stopping".
 */
export async function startStack(config: Config, options: StackOptions = {}): Promise<Stack> {
  const extension = config.role === 'worker' ? undefined : options.extension;
  refuseWorkersWithoutProviders(config, extension);
  const log = createLogger(config, options.log);
  const clock = options.clock ?? systemClock;
  const steps: StopStep[] = [];
  const stop = () => runStopSteps(steps, log);
  // Tracing was started by the entry, before this module loaded (src/main.ts); it stops last, so the spans of
  // everything else's stop are exported too. Nothing happens here when it is off (and in tests' in-process stacks).
  logTracingProblems(log);
  steps.push({ name: 'tracing (exporting the last spans)', run: () => stopTracing(log) });
  try {
    const location = await locateDatabase(config, (message) => log.debug({ postgres: message.trim() }, 'embedded PostgreSQL'));
    steps.push({ name: 'the embedded PostgreSQL', run: () => location.release() });
    const database = await openDatabase(location.url, { entities: composition.entities, clock, log });
    steps.push({ name: 'the database connections', run: () => database.close() });
    const applied = await migrate(database);
    // Read at each scrape, once the process has started (the budgets and the jobs are built below).
    const providers = () => ({ budgets: Object.values(providerBudgets).map((budget) => budget.reading()), pauses: jobs.pausedProviders() });
    // Counted in the database at each scrape (one grouped count over pg-boss's index of jobs not yet taken).
    const waitingJobs = () =>
      countWaitingJobs(statementsApart(database.orm.em), composition.queues).catch((error: unknown) => {
        log.warn({ err: error }, 'could not count the jobs waiting for their providers; lg_jobs_waiting is left out of this scrape');
        return undefined;
      });
    const metrics = config.metrics.mode === 'off' ? undefined : new Metrics({ pool: () => poolSnapshot(database), providers, waitingJobs });
    const providerHealth = new ProviderHealthWindow();
    const events = await createEventBus({ databaseUrl: location.url, redisUrl: config.redisUrl, log, metrics });
    steps.push({ name: 'the event bus', run: () => events.close() });
    const unbridge = bridgeEventsToSubscriptions(events);
    steps.push({ name: 'the subscription bridge', run: unbridge });
    const authentication = composition.authentication({ events, clock, cacheMs: config.tokenCacheSeconds * 1000 });
    steps.push({ name: 'the token cache', run: () => authentication.close() });
    // The providers' budgets and pauses, shared where the events are: Redis when it is set, else PostgreSQL.
    const redisSlots = config.redisUrl ? await redisSlotStore(config.redisUrl, log) : undefined;
    if (redisSlots) steps.push({ name: 'the provider budgets (Redis)', run: () => redisSlots.close() });
    const slots = redisSlots ?? postgresSlotStore(statementsApart(database.orm.em));
    const providerBudgets = providerBudgetsOf(config.budgets, slots, log, currentCallPriority);
    const jobs = await JobEngine.start({
      slots,
      databaseUrl: location.url,
      events,
      config: config.jobs,
      log,
      clock,
      metrics,
      ledger: statementsApart(database.orm.em),
      queues: composition.queues,
    });
    steps.push({ name: 'the jobs (waiting for running ones)', run: () => jobs.stop() });
    // A pause met here or heard of: this process's calls holding a slot before its end wait for new ones after it.
    jobs.onProviderPause((provider, untilMs) => providerBudgets[provider]?.pauseUntil(untilMs));
    const demo =
      options.seedDemo === false || config.role === 'worker'
        ? undefined
        : await demoFor(config, location.dataDir, database, config.role === 'api' ? jobs : undefined);

    // Where this server listens, once it does: a mounted provider's URLs and the default public URL derive from it.
    let serverUrl: string | undefined;
    const listening = (what: string) => {
      if (!serverUrl) throw new Error(`${what} is known once the server listens`);
      return serverUrl;
    };
    // Unset and nothing mounted: the calls of that provider fail, each saying which setting is missing.
    const mountedAt = (provider: 'alpha' | 'beta') => () => {
      if (!extension) throw new Error(`${provider === 'alpha' ? 'ALPHA_API_URL' : 'BETA_API_URL'} is not set and no provider is mounted`);
      return extension.providerUrls(listening(`the ${provider} provider's URL`))[provider];
    };
    const alphaBaseUrl: BaseUrl = config.alphaApiUrl ?? mountedAt('alpha');
    const betaBaseUrl: BaseUrl = config.betaApiUrl ?? mountedAt('beta');
    const configuredPublicUrl = config.publicUrl?.replace(/\/+$/, '');
    // For the banner and the mounted extension: with nothing set and nothing mounted, the banner says so.
    const alphaUrlNow = () => (config.alphaApiUrl || extension ? baseUrlNow(alphaBaseUrl) : 'not set (ALPHA_API_URL)');
    const timeoutMs = config.providerTimeoutMs;
    const runtime: Runtime = {
      config,
      database,
      events,
      jobs,
      clock,
      authentication,
      providerBudgets,
      alpha: createAlphaClient({ baseUrl: alphaBaseUrl, accessToken: () => config.alphaAccessToken, timeoutMs, budget: providerBudgets.alpha, observe: observeAll(metrics?.providerObserver('alpha'), providerHealth.observer('alpha')) }),
      alphaOAuth: createAlphaOAuthClient({
        baseUrl: config.alphaOAuthUrl ?? alphaBaseUrl,
        clientId: config.alphaClientId,
        clientSecret: config.alphaClientSecret,
        timeoutMs,
        observe: observeAll(metrics?.providerObserver('alpha-oauth'), providerHealth.observer('alpha-oauth')),
      }),
      // Beta calls always carry a company's token (from its consent): the client has no token of its own.
      beta: createBetaClient({ baseUrl: betaBaseUrl, accessToken: () => '', timeoutMs, budget: providerBudgets.beta, observe: observeAll(metrics?.providerObserver('beta'), providerHealth.observer('beta')) }),
      betaOAuth: createBetaOAuthClient({
        baseUrl: betaBaseUrl,
        clientId: config.betaClientId,
        clientSecret: config.betaClientSecret,
        timeoutMs,
        observe: observeAll(metrics?.providerObserver('beta-oauth'), providerHealth.observer('beta-oauth')),
      }),
      metrics,
      providerHealth,
      secrets: createSecretBox(await loadSecretKey(config.tokenEncryptionKey, location.dataDir)),
      publicUrl: () => configuredPublicUrl ?? listening('PUBLIC_URL (needed where this process does not serve HTTP)'),
      // Webhook bodies are GET /events items, presented by that route itself (docs/webhooks.md).
      presentEvents: restEventPresenter({ schema: gatewaySchema, runtime: () => runtime, log }),
    };

    let server: GatewayServer | undefined;
    let url: string | undefined;
    if (config.role !== 'worker') {
      server = await buildServer({
        runtime,
        log,
        demoToken: () => (config.isDevelopment ? demo?.token : undefined),
        dashboardDir: options.dashboardDir,
        mount: extension && ((app) => extension.register(app, { clock, dataDir: location.dataDir })),
      });
      steps.push({ name: 'the HTTP server', run: () => server!.close() });
      const address = await server.app.listen({ port: config.port, host: config.host });
      url = address.replace('[::1]', 'localhost');
      serverUrl = url;
      await extension?.started?.({ serverUrl: url, alphaUrl: alphaUrlNow(), demo, log });
    }
    if (metrics && config.metrics.mode === 'port') {
      // A listener of its own: the API's port may face the internet, this one need not.
      const metricsServer = Fastify({ loggerInstance: log });
      registerMetricsRoute(metricsServer, metrics, { token: config.metricsToken, loopbackOnly: false });
      steps.push({ name: 'the metrics listener', run: () => metricsServer.close() });
      await metricsServer.listen({ port: config.metrics.port, host: config.host });
    }
    if (config.role !== 'api') {
      const { modules } = composition;
      for (const module of modules) for (const worker of module.workers?.(runtime) ?? []) await jobs.work(worker);
      for (const module of modules) await module.catchUp?.(runtime);
      for (const module of modules) {
        for (const service of (await module.services?.(runtime, log)) ?? []) steps.push({ name: service.name, run: () => service.stop() });
      }
    }
    // Run in reverse: no job starts from now on; the running ones are waited for while the server (and the provider
    // sandboxes it mounts, which they may be calling) still answers; then the server drains; then pg-boss stops.
    steps.push({ name: 'the running jobs', run: () => jobs.drain() });
    steps.push({ name: 'taking new jobs', run: () => jobs.stopTaking() });
    // Demos are prepared where the workers run, outside production, when this start may seed one (tests say not).
    const demoPreparation =
      config.role !== 'api' && config.nodeEnv !== 'production' && options.seedDemo !== false
        ? await DemoPreparation.start(runtime, {
            provider: extension?.demoProvider?.({ alpha: alphaUrlNow(), beta: baseUrlNow(betaBaseUrl) }),
            log,
          })
        : undefined;
    if (demoPreparation) steps.push({ name: 'the demo preparation', run: () => demoPreparation.stop() });

    return {
      url,
      runtime,
      server,
      demo,
      log,
      banner: () => bannerText(config, url, location.description, demo, applied, alphaUrlNow(), extension?.description, location.dataDir),
      demoReady: async () => {
        if (demo && demoPreparation) await demoPreparation.ready(demo.organization_id, DEMO_READY_WAIT_MS);
      },
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined); // each part that failed to stop is logged; the start's own error is the one to report
    throw error;
  }
}

function bannerText(
  config: Config,
  url: string | undefined,
  databaseDescription: string,
  demo: DemoSeed | undefined,
  applied: string[],
  alphaUrl: string,
  mounted: string | undefined,
  dataDir: string,
): string {
  const database =
    `  Database: ${databaseDescription}` +
    (applied.length > 0 ? `; migrations applied now: ${applied.join(', ')}` : '; schema up to date');
  if (!url) {
    const traces = config.otlpEndpoint ? [`  Traces (OTLP): ${config.otlpEndpoint}`] : [];
    return ['', `Listings Gateway worker is up (ROLE=worker), alpha provider at ${alphaUrl}.`, ...traces, database].join('\n');
  }
  // The front door's links (GET / lists the same), aligned after the longest title.
  const column = (title: string) => `${title}:`.padEnd(51);
  const links = frontDoorLinks(config);
  const lines = [
    '',
    `Listings Gateway is up (ROLE=${config.role}).`,
    `  ${column('Front door (in a browser, or JSON)')} ${url}/`,
    ...links.map((link) => `  ${column(link.title)} ${url}${link.path}`),
    `  ${column('REST (the documented paths)')} ${url}/organization, …`,
    `  ${column('Alpha provider')} ${alphaUrl}${mounted && !config.alphaApiUrl ? ` (${mounted})` : ''}`,
    ...(config.otlpEndpoint ? [`  ${column('Traces (OTLP)')} ${config.otlpEndpoint}`] : []),
    database,
    '',
    'Tokens: `npm run cli -- org create --name "My org"` prints an organization and its token;',
    '        `npm run cli -- token create --org <id> [--account <id>]` prints another token.',
  ];
  if (demo) {
    lines.push(
      '',
      `Demo organization ${demo.organization_id}; its token (also in ${path.join(dataDir, DEMO_FILE)}):`,
      `  ${demo.token}`,
      `Try: curl -H "Authorization: Bearer ${demo.token}" ${url}/organization`,
    );
  }
  lines.push('', 'Stop with Ctrl-C (a second Ctrl-C stops at once).');
  return lines.join('\n');
}
