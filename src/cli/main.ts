/** The bootstrap CLI (no token exists before it): its commands and what they print, README.md, "The CLI". */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConfigError, loadConfig, type Config } from '../config';
import { locateDatabase } from '../db/locate-database';
import { DatabaseSetupError } from '../db/embedded';
import { migrate, openDatabase, type Database } from '../db/orm';
import { postgresSlotStore } from '../limits/provider-slots';
import { statementsApart } from '../db/statements';
import { seedDemo } from '../demo/demo.seed';
import { DomainError } from '../errors/domain-error';
import { createEventBus } from '../events/create-event-bus';
import { JobEngine } from '../jobs/job-engine';
import { createLogger } from '../logger';
import { systemClock } from '../shared/clock';
import { createOrganization, createToken } from '../auth/bootstrap';
import { composition } from '../modules';
import { allEventTypes, eventTypeNamed } from '../activity/activity.enums';
import { CommandFailed, UsageError } from './cli-errors';
import { listen } from './listen';
import { graphqlRequest, serviceOf } from './service';

const USAGE = `Usage:
  npm run cli -- org create --name <name> [--beta-api] [--citations-api]
  npm run cli -- token create --org <organization id> [--account <account id>]
  npm run cli -- demo
  npm run cli -- webhooks listen --forward-to <url> [--events <type>,…] [--secret <whsec_…>] [--token <organization token>] [--url <service url>]
  npm run cli -- webhooks trigger <event type> [--token <organization token>] [--url <service url>]`;

/** What a command may use: the database (its own entity manager), and the settings for what else it starts. */
interface CommandContext {
  em: EntityManager;
  database: Database;
  databaseUrl: string;
  config: Config;
}

type Command = (context: CommandContext, args: string[]) => Promise<unknown>;

/** The CLI's log lines go to stderr (stdout is its JSON), warnings and worse unless LOG_LEVEL asks for fewer. */
function cliLogger(config: Config) {
  const quieter = ['fatal', 'error', 'silent'].includes(config.logLevel);
  return createLogger({ ...config, logLevel: quieter ? config.logLevel : 'warn' }, { destination: process.stderr });
}

/**
 * Runs `work` with a job engine that only enqueues (this process runs no workers), on the event bus the server
 * uses: jobs enqueued in a transaction wake the workers of every running server when it commits. Without a server
 * they wait in the queue and run at its next start.
 */
async function withJobEngine<T>(context: CommandContext, work: (jobs: JobEngine) => Promise<T>): Promise<T> {
  const log = cliLogger(context.config);
  const events = await createEventBus({ databaseUrl: context.databaseUrl, redisUrl: context.config.redisUrl, log });
  try {
    const jobs = await JobEngine.start({
      databaseUrl: context.databaseUrl,
      events,
      config: context.config.jobs,
      queues: composition.queues,
      log,
      clock: systemClock,
      ledger: statementsApart(context.database.orm.em),
      // It runs no jobs: no pause is met here, and the ones kept are read from the database.
      slots: postgresSlotStore(statementsApart(context.database.orm.em)),
    });
    try {
      return await work(jobs);
    } finally {
      await jobs.stop();
    }
  } finally {
    await events.close();
  }
}

const commands: Record<string, Command> = {
  'org create': async ({ em }, args) => {
    const { values } = parseArgs({
      args,
      options: { name: { type: 'string' }, 'beta-api': { type: 'boolean' }, 'citations-api': { type: 'boolean' } },
      strict: true,
    });
    if (!values.name) throw new UsageError('org create needs --name');
    const { organization, token } = await createOrganization(em, {
      name: values.name,
      betaApi: values['beta-api'] ?? false,
      citationsApi: values['citations-api'] ?? false,
    });
    return { organization_id: organization.id, token };
  },
  'token create': async ({ em }, args) => {
    const { values } = parseArgs({ args, options: { org: { type: 'string' }, account: { type: 'string' } }, strict: true });
    if (!values.org) throw new UsageError('token create needs --org');
    return createToken(em, { organizationId: values.org, accountId: values.account });
  },
  demo: async (context, args) => {
    parseArgs({ args, options: {}, strict: true });
    // Its jobs (the locations' publishes, the import) are queued with it: a running server takes them at once.
    return withJobEngine(context, (jobs) => seedDemo(context.em, { jobs }));
  },
};

/** The event types as REST writes them, each the GraphQL key its name has; a name not among them is a usage error. */
function eventTypeKeys(names: readonly string[]): string[] {
  return names.map((name) => {
    const type = eventTypeNamed(name);
    if (!type) throw new UsageError(`${name} is not an event type; the types: ${allEventTypes().map((known) => known.name).join(', ')}`);
    return type.key;
  });
}

const serviceOptions = { token: { type: 'string' }, url: { type: 'string' } } as const;

/** Commands that talk to the running service as a client (its API), not to the database. */
const apiCommands: Record<string, (config: Config, args: string[]) => Promise<number>> = {
  'webhooks listen': async (config, args) => {
    const { values } = parseArgs({
      args,
      options: { ...serviceOptions, 'forward-to': { type: 'string' }, events: { type: 'string' }, secret: { type: 'string' } },
      strict: true,
    });
    const forwardTo = values['forward-to'];
    if (!forwardTo || !URL.canParse(forwardTo) || !/^https?:$/.test(new URL(forwardTo).protocol)) {
      throw new UsageError('webhooks listen needs --forward-to <http:// or https:// URL>, where your receiver listens');
    }
    const names = values.events?.split(',').map((name) => name.trim()).filter(Boolean) ?? [];
    const types = names.length ? eventTypeKeys(names) : null;
    const service = serviceOf(config, values);
    const stop = new AbortController();
    // Ctrl-C, a closed terminal or a kill: the stream ends, the request under way is abandoned.
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => stop.abort());
    return listen(
      service,
      {
        forwardTo,
        types,
        typesLabel: names.length ? `${names.join(', ')} events` : 'every event',
        secret: values.secret,
        timeoutMs: config.webhooks.timeoutMs,
        out: (line) => process.stdout.write(`${line}\n`),
        err: (line) => process.stderr.write(`${line}\n`),
      },
      stop.signal,
    );
  },
  'webhooks trigger': async (config, args) => {
    const { values, positionals } = parseArgs({ args, options: serviceOptions, allowPositionals: true, strict: true });
    if (positionals.length !== 1) throw new UsageError('webhooks trigger needs one event type, e.g. post.state_changed');
    const [type] = eventTypeKeys(positionals);
    const data = await graphqlRequest<{ triggerTestEvent: { webhookBody: string } }>(
      serviceOf(config, values),
      'mutation WebhooksTrigger($type: EventType!) { triggerTestEvent(type: $type) { webhookBody } }',
      { type },
    );
    // The event as GET /events lists it, and as deliveries carry it.
    process.stdout.write(`${JSON.stringify(JSON.parse(data.triggerTestEvent.webhookBody), null, 2)}\n`);
    return 0;
  },
};

async function main(argv: string[]): Promise<number> {
  const name = argv[0] === 'demo' ? 'demo' : argv.slice(0, 2).join(' ');
  const apiCommand = apiCommands[name];
  if (apiCommand) return apiCommand(loadConfig(), argv.slice(2));
  const command = commands[name];
  if (!command) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  const location = await locateDatabase(config);
  try {
    const database = await openDatabase(location.url, { entities: composition.entities });
    try {
      await migrate(database);
      const context = { em: database.orm.em.fork(), database, databaseUrl: location.url, config };
      const result = await command(context, argv.slice(name.split(' ').length));
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return 0;
    } finally {
      await database.close();
    }
  } finally {
    await location.release();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const code = (error as { code?: string }).code;
    if (error instanceof UsageError || code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' || code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      console.error(`${(error as Error).message}\n${USAGE}`);
      process.exit(2);
    }
    // Problems of the environment, as `npm start` reports them: one line, exit 78 (EX_CONFIG).
    if (error instanceof ConfigError || error instanceof DatabaseSetupError) {
      console.error(error.message);
      process.exit(78);
    }
    console.error(error instanceof DomainError || error instanceof CommandFailed ? error.message : error);
    process.exit(1);
  },
);
