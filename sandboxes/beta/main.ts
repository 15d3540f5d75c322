import {
  runSandboxFromCommandLine,
  startSandboxServer,
  type SandboxServer,
  type SandboxServerOptions,
} from '../shared/sandbox-server';
import { betaSandboxPlugin } from './beta-sandbox';

/** `url` is the beta clients' baseUrl. */
export type BetaSandboxServer = SandboxServer;

/**
 * The beta sandbox on its own server, its routes at the root. Port 0 (the default here) picks a free one; the
 * command line defaults to 4020. `stateFile` keeps what the provider holds across a close and a new start, `seed`
 * (default true) starts it with the seeded companies; `logger` is Fastify's, off by default.
 */
export function startBetaSandbox(options: SandboxServerOptions = {}): Promise<BetaSandboxServer> {
  return startSandboxServer(betaSandboxPlugin, options);
}

/**
 * `node dist/src/sandbox/beta/main.js`: PORT (default 4020), HOST (default 127.0.0.1) and STATE_FILE (optional: where
 * what the provider holds outlives the process) from the environment. The consent page is at /oauth/authorize.
 */
if (require.main === module) {
  runSandboxFromCommandLine({ name: 'Beta sandbox', settingsPrefix: 'BETA_SANDBOX', defaultPort: 4020, start: startBetaSandbox });
}
