import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from './config';
import { locateDatabase } from './db/connect';
import { migrate, openDatabase, type Database } from './db/orm';
import { seedDemo, type DemoSeed } from './demo/demo.seed';
import { createEventBus } from './events/create-event-bus';
import { bridgeEventsToSubscriptions } from './events/graphql-pubsub';
import { JobEngine } from './jobs/job-engine';
import { createLogger } from './logger';
import { Organization } from './organization/organization.entity';
import { registerPostWorkers } from './post/post.worker';
import { createAlphaClient } from './providers/alpha/alpha.client';
import type { Runtime } from './runtime';
import { buildServer, type GatewayServer } from './server';

export interface Stack {
  /** The HTTP base URL; undefined for a worker-only process. */
  url: string | undefined;
  runtime: Runtime;
  server: GatewayServer | undefined;
  demo: DemoSeed | undefined;
  banner(): string;
  stop(): Promise<void>;
}

const DEMO_FILE = 'demo.json';

/**
 * The demo organization is seeded into a brand-new database (one with no organization) outside production,
 * and its tokens kept in DATA_DIR/demo.json (owner-only) so every start can print them again.
 */
async function demoFor(config: Config, database: Database): Promise<DemoSeed | undefined> {
  const file = path.resolve(config.dataDir, DEMO_FILE);
  const em = database.orm.em.fork() as EntityManager;
  if ((await em.count(Organization, {})) === 0 && config.nodeEnv !== 'production') {
    const demo = await seedDemo(em);
    await fs.mkdir(config.dataDir, { recursive: true });
    await fs.writeFile(file, JSON.stringify(demo, null, 2), { mode: 0o600 });
    return demo;
  }
  if (!existsSync(file)) return undefined;
  const demo = JSON.parse(await fs.readFile(file, 'utf8')) as DemoSeed;
  // The file may belong to another database (DATABASE_URL changed): only trust it if its organization is here.
  return (await em.count(Organization, { id: demo.organization_id })) > 0 ? demo : undefined;
}

/**
 * Brings the service up: database (embedded or DATABASE_URL), migrations, event bus, job engine, then per
 * ROLE the HTTP server (api), the workers (worker), or both (all). Stops in the reverse order.
 */
export async function startStack(config: Config, options: { seedDemo?: boolean } = {}): Promise<Stack> {
  if (config.role === 'worker' && !config.alphaApiUrl) {
    throw new Error('ROLE=worker needs ALPHA_API_URL (the sandbox is mounted by the API process)');
  }
  const log = createLogger(config);
  const location = await locateDatabase(config);
  const database = await openDatabase(location.url);
  const cleanups: (() => Promise<unknown>)[] = [() => location.release(), () => database.close()];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    const applied = await migrate(database);
    const demo = options.seedDemo === false || config.role === 'worker' ? undefined : await demoFor(config, database);
    const events = await createEventBus({ databaseUrl: location.url, redisUrl: config.redisUrl, log });
    cleanups.push(() => events.close());
    const unbridge = bridgeEventsToSubscriptions(events);
    cleanups.push(async () => unbridge());
    const jobs = await JobEngine.start({ databaseUrl: location.url, events, config: config.jobs, log });
    cleanups.push(() => jobs.stop());

    let alphaBaseUrl = config.alphaApiUrl;
    const runtime: Runtime = {
      config,
      database,
      events,
      jobs,
      alpha: createAlphaClient({
        // Resolved per call: without ALPHA_API_URL the sandbox of this very server answers, once it listens.
        baseUrl: config.alphaApiUrl ?? 'http://127.0.0.1:0/sandbox/alpha',
        accessToken: () => config.alphaAccessToken,
      }),
    };

    let server: GatewayServer | undefined;
    let url: string | undefined;
    if (config.role !== 'worker') {
      server = await buildServer({ runtime, log, ideToken: () => (config.isDevelopment ? demo?.token : undefined) });
      cleanups.push(() => server!.close());
      const address = await server.app.listen({ port: config.port, host: config.host });
      url = address.replace('[::1]', 'localhost');
      alphaBaseUrl ??= `${url}/sandbox/alpha`;
      runtime.alpha = createAlphaClient({ baseUrl: alphaBaseUrl, accessToken: () => config.alphaAccessToken });
    }
    if (config.role !== 'api') await registerPostWorkers(runtime);

    return {
      url,
      runtime,
      server,
      demo,
      banner: () => bannerText(config, url, location.embedded, demo, applied, alphaBaseUrl),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function bannerText(
  config: Config,
  url: string | undefined,
  embedded: boolean,
  demo: DemoSeed | undefined,
  applied: string[],
  alphaBaseUrl: string | undefined,
): string {
  const database =
    `  Database: ${embedded ? `embedded PostgreSQL under ${path.resolve(config.dataDir, 'pg')}` : 'DATABASE_URL'}` +
    (applied.length > 0 ? `; migrations applied now: ${applied.join(', ')}` : '; schema up to date');
  if (!url) {
    return ['', `Listings Gateway worker is up (ROLE=worker), alpha provider at ${alphaBaseUrl}.`, database].join('\n');
  }
  const lines = [
    '',
    `Listings Gateway is up (ROLE=${config.role}).`,
    `  GraphQL (HTTP, WebSocket and the IDE in a browser): ${url}/graphql`,
    `  REST (the documented paths):                         ${url}/   e.g. ${url}/organization`,
    `  OpenAPI of the REST paths:                           ${url}/openapi.json`,
    `  Health:                                              ${url}/healthz   ${url}/readyz`,
    `  Alpha provider:                                      ${alphaBaseUrl}${config.sandbox && !config.alphaApiUrl ? ' (the sandbox)' : ''}`,
    database,
    '',
    'Tokens: `npm run cli -- org create --name "My org"` prints an organization and its token;',
    '        `npm run cli -- token create --org <id> [--account <id>]` prints another token.',
  ];
  if (demo) {
    lines.push(
      '',
      `Demo organization ${demo.organization_id}; its token (also in ${path.join(config.dataDir, DEMO_FILE)}):`,
      `  ${demo.token}`,
      `Try: curl -H "Authorization: Bearer ${demo.token}" ${url}/organization`,
    );
  }
  return lines.join('\n');
}
