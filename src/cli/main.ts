/** The bootstrap CLI (no token exists before it): its commands and what they print, README.md, "The CLI". */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConfigError, loadConfig, type Config } from '../config';
import { locateDatabase } from '../db/locate-database';
import { DatabaseSetupError } from '../db/embedded';
import { migrate, openDatabase, type Database } from '../db/orm';
import { statementsApart } from '../db/statements';
import { seedDemo } from '../demo/demo.seed';
import { DomainError } from '../errors/domain-error';
import { createEventBus } from '../events/create-event-bus';
import { JobEngine } from '../jobs/job-engine';
import { createLogger } from '../logger';
import { systemClock } from '../shared/clock';
import { createOrganization, createToken } from '../auth/bootstrap';
import { composition } from '../modules';

const USAGE = `Usage:
  npm run cli -- org create --name <name> [--beta-api] [--citations-api]
  npm run cli -- token create --org <organization id> [--account <account id>]
  npm run cli -- demo`;

class UsageError extends Error {}

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

async function main(argv: string[]): Promise<number> {
  const name = argv[0] === 'demo' ? 'demo' : argv.slice(0, 2).join(' ');
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
    if (error instanceof UsageError || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      console.error(`${(error as Error).message}\n${USAGE}`);
      process.exit(2);
    }
    // Problems of the environment, as `npm start` reports them: one line, exit 78 (EX_CONFIG).
    if (error instanceof ConfigError || error instanceof DatabaseSetupError) {
      console.error(error.message);
      process.exit(78);
    }
    console.error(error instanceof DomainError ? error.message : error);
    process.exit(1);
  },
);
