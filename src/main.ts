import 'reflect-metadata';
import { ConfigError, loadConfig } from './config';
import { startStack } from './stack';

/** `npm start`: configuration -> database -> migrations -> server; a clean stop on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78);
    }
    throw error;
  }
  const stack = await startStack(config);
  console.log(stack.banner());

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping…`);
    try {
      await stack.stop();
      process.exit(0);
    } catch (error) {
      console.error('Unclean stop:', error);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error('Listings Gateway failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
