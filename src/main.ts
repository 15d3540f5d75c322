import 'reflect-metadata';
import { ConfigError, loadConfig, type Config } from './config';
import { startTracing } from './observability/tracing';
import type { ServerExtension, Stack } from './stack';

/** sysexits EX_CONFIG: the setup (environment, directories) must change before a start can work. */
const EXIT_CONFIG = 78;

/** What the starter mounts beside the product, loaded once tracing has started (it may load instrumented modules). */
export type ExtensionFor = (config: Config) => Promise<ServerExtension | undefined>;

/**
 * The service's process: configuration -> tracing -> database -> migrations -> server; a clean stop on
 * SIGINT, SIGTERM or SIGHUP. `extensionFor` is the development entry's (dev/main.ts, what `npm start` runs): what it mounts
 * beside the product. The stack's modules are loaded only after tracing has started: its instrumentations patch
 * http, Fastify, pg and graphql as they are required (nothing is loaded for it when tracing is off).
 */
async function main(extensionFor: ExtensionFor): Promise<void> {
  const config = loadConfig();
  await startTracing(config);
  const { startStack } = await import('./stack.js');
  const extension = await extensionFor(config);
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
  // Closing the terminal: Node's default for SIGHUP is to end at once, leaving the embedded PostgreSQL (a process
  // of its own, started detached) running and holding its port. It stops like a Ctrl-C instead.
  process.on('SIGHUP', onSignal);
  stack = await startStack(config, { extension });
  // The banner says the service is ready to use: the demo it prints is too (a bounded wait; the log says why not).
  await stack.demoReady();
  if (!stopping) console.log(stack.banner());
}

export function runService(extensionFor: ExtensionFor = async () => undefined): void {
  main(extensionFor).catch(async (error: unknown) => {
    // Loaded here, not above: it requires pg, which must load after tracing has started.
    const { DatabaseSetupError } = await import('./db/embedded.js');
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
