import 'reflect-metadata';
import { ConfigError, loadConfig } from './config';
import { DatabaseSetupError } from './db/embedded';
import { startStack, type Stack } from './stack';

/** sysexits EX_CONFIG: the setup (environment, directories) must change before a start can work. */
const EXIT_CONFIG = 78;

/** `npm start`: configuration -> database -> migrations -> server; a clean stop on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
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
  stack = await startStack(config);
  console.log(stack.banner());
}

main().catch((error: unknown) => {
  // Problems the user must fix in the environment: one line, no stack trace.
  if (error instanceof ConfigError || error instanceof DatabaseSetupError) {
    console.error(error.message);
    process.exit(EXIT_CONFIG);
  }
  console.error('Listings Gateway failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
