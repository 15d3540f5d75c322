import {
  runSandboxFromCommandLine,
  startSandboxServer,
  type SandboxServer,
  type SandboxServerOptions,
} from '../shared/sandbox-server';
import { alphaSandboxPlugin } from './alpha-sandbox';

/** `url` is the alpha client's baseUrl. */
export type AlphaSandboxServer = SandboxServer;

/**
 * The alpha sandbox on its own server, its routes at the root. Port 0 (the default here) picks a free one; the
 * command line defaults to 4010. `stateFile` keeps what the provider holds across a close and a new start, `seed`
 * (default true) starts it with the seeded identities (see AlphaSandboxOptions); `logger` is Fastify's, off by default.
 */
export function startAlphaSandbox(options: SandboxServerOptions = {}): Promise<AlphaSandboxServer> {
  return startSandboxServer(alphaSandboxPlugin, options);
}

/**
 * `node dist/src/sandbox/alpha/main.js`: PORT (default 4010), HOST (default 127.0.0.1) and STATE_FILE (optional: where
 * what the provider holds outlives the process) from the environment. The consent page is at /oauth/authorize.
 */
if (require.main === module) {
  runSandboxFromCommandLine({ name: 'Alpha sandbox', settingsPrefix: 'ALPHA_SANDBOX', defaultPort: 4010, start: startAlphaSandbox });
}
