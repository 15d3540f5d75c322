import 'reflect-metadata';
import { ConfigError, loadConfig, type Config } from './config';
import { DatabaseSetupError } from './db/embedded';
import { startStack, type ServerExtension, type Stack } from './stack';

/** sysexits EX_CONFIG: the setup (environment, directories) must change before a start can work. */
const EXIT_CONFIG = 78;

/**
 * The service's process: configuration -> database -> migrations -> server; a clean stop on SIGINT/SIGTERM.
 * `extensionFor` is the development entry's (dev/main.ts, what `npm start` runs): what it mounts beside the product.
 */
async function main(extensionFor: (config: Config) => ServerExtension | undefined): Promise<void> {
  const config = loadConfig();
  const extension = extensionFor(config);
  let stack: Stack | undefined;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      // The second Ctrl-C: the user does not want to wait. Jobs left running are retried after the next start,
      // and a PostgreSQL left running is adopted by it.
      console.error(`\n${signal} again: stopping at once.`);
      process.exit(130);
    }
    stopping = true;
    if (!stack) {
      // Still starting: nothing to drain yet (a PostgreSQL already started is adopted by the next start).
      process.exit(130);
    }
    console.log(`\n${signal}: stopping (Ctrl-C again to stop at once)…`);
    stack.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        stack!.log.error({ err: error }, 'unclean stop');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  stack = await startStack(config, { extension });
  console.log(stack.banner());
}

export function runService(extensionFor: (config: Config) => ServerExtension | undefined = () => undefined): void {
  main(extensionFor).catch((error: unknown) => {
    // Problems the user must fix in the environment: one line, no stack trace.
    if (error instanceof ConfigError || error instanceof DatabaseSetupError) {
      console.error(error.message);
      process.exit(EXIT_CONFIG);
    }
    console.error('Listings Gateway failed to start:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
}

/** `node dist/src/main.js`: the production start, the product alone. */
if (require.main === module) runService();
