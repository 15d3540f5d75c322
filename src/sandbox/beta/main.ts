import Fastify, { type FastifyServerOptions } from 'fastify';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { betaSandboxPlugin } from './beta-sandbox';

export interface BetaSandboxServer {
  /** http://host:port, without a trailing slash: the beta clients' baseUrl. */
  url: string;
  close(): Promise<void>;
}

/**
 * The beta sandbox on its own server, its routes at the root. Port 0 (the default here) picks a free one; the
 * command line defaults to 4020. `stateFile` keeps what the provider holds across a close and a new start, `seed`
 * (default true) starts it with the seeded companies; `logger` is Fastify's, off by default.
 */
export async function startBetaSandbox(
  options: {
    port?: number;
    host?: string;
    clock?: () => number;
    stateFile?: string;
    seed?: boolean;
    logger?: FastifyServerOptions['logger'];
  } = {},
): Promise<BetaSandboxServer> {
  const host = options.host ?? '127.0.0.1';
  const app = Fastify({ logger: options.logger ?? false });
  await app.register(betaSandboxPlugin, { clock: options.clock, stateFile: options.stateFile, seed: options.seed });
  await app.listen({ port: options.port ?? 0, host });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => app.close(),
  };
}

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4020),
  HOST: z.string().min(1).default('127.0.0.1'),
  STATE_FILE: z.string().min(1).optional(),
});

/**
 * `node dist/src/sandbox/beta/main.js`: PORT (default 4020), HOST (default 127.0.0.1) and STATE_FILE (optional: where
 * what the provider holds outlives the process) from the environment. The consent page is at /oauth/authorize.
 */
async function runFromCommandLine(): Promise<void> {
  const present = Object.fromEntries(
    Object.entries(process.env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const env = envSchema.safeParse(present);
  if (!env.success) {
    console.error(env.error.issues.map((issue) => `${String(issue.path[0])}: ${issue.message}`).join('\n'));
    process.exit(78);
  }
  // Warnings only: a state file set aside as unreadable must not go unnoticed.
  const sandbox = await startBetaSandbox({
    port: env.data.PORT,
    host: env.data.HOST,
    stateFile: env.data.STATE_FILE,
    logger: { level: 'warn' },
  });
  console.log(`Beta sandbox listening on ${sandbox.url} (controls under ${sandbox.url}/_control)`);
  const stop = () => {
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('Unclean stop:', error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  runFromCommandLine().catch((error: unknown) => {
    console.error('Beta sandbox failed to start:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
