import Fastify, { type FastifyPluginAsync, type FastifyServerOptions } from 'fastify';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { projectQuotaLimitSchema, type ProjectQuotaLimits } from './project-quota';

/** The options every sandbox plugin takes (see AlphaSandboxOptions, BetaSandboxOptions). */
export interface SandboxPluginOptions {
  /** Milliseconds since the epoch; drives every date and expiry the sandbox shows. Default Date.now. */
  clock?: () => number;
  /**
   * A JSON file what the provider holds outlives the process in: read at registration (missing: a fresh start;
   * unreadable: a warning, then a fresh start), written when the Fastify instance closes. Absent: memory only.
   */
  stateFile?: string;
  /** Start with (and reset to) the sandbox's seeded data. Default true. */
  seed?: boolean;
  /** The per-project quota it starts with, and a reset returns to (see ProjectQuotaLimits). Default unlimited. */
  quota?: Partial<ProjectQuotaLimits>;
}

export interface SandboxServerOptions extends SandboxPluginOptions {
  port?: number;
  host?: string;
  logger?: FastifyServerOptions['logger'];
}

export interface SandboxServer {
  /** http://host:port, without a trailing slash: the provider clients' baseUrl. */
  url: string;
  close(): Promise<void>;
}

/**
 * A sandbox plugin on its own server, its routes at the root. Port 0 (the default here) picks a free one; `logger`
 * is Fastify's, off by default.
 */
export async function startSandboxServer(
  plugin: FastifyPluginAsync<SandboxPluginOptions>,
  options: SandboxServerOptions,
): Promise<SandboxServer> {
  const host = options.host ?? '127.0.0.1';
  // A close ends every connection, a client's spare one too: a simulator has no request worth draining.
  const app = Fastify({ logger: options.logger ?? false, forceCloseConnections: true });
  await app.register(plugin, { clock: options.clock, stateFile: options.stateFile, seed: options.seed, quota: options.quota });
  await app.listen({ port: options.port ?? 0, host });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => app.close(),
  };
}

/**
 * A sandbox's command line: PORT (default `defaultPort`), HOST (default 127.0.0.1), STATE_FILE (optional: where
 * what the provider holds outlives the process) and `<settingsPrefix>_QUOTA_PER_SECOND` / `_QUOTA_PER_MINUTE`
 * (optional: the per-project quota) from the environment. A bad value stops it with exit code 78.
 */
export function runSandboxFromCommandLine(sandbox: {
  /** Starts its lines: `Alpha sandbox`. */
  name: string;
  defaultPort: number;
  /** Names the sandbox's own settings: `ALPHA_SANDBOX` reads ALPHA_SANDBOX_QUOTA_PER_SECOND. */
  settingsPrefix: string;
  start(options: SandboxServerOptions): Promise<SandboxServer>;
}): void {
  run(sandbox).catch((error: unknown) => {
    console.error(`${sandbox.name} failed to start:`, error instanceof Error ? error.message : error);
    process.exit(1);
  });
}

/**
 * A sandbox's per-project quota from `<settingsPrefix>_QUOTA_PER_SECOND` and `_QUOTA_PER_MINUTE` in `env` (unset:
 * no limit), or the problems with their values: read alike by a sandbox's own process and by the development
 * server that mounts both sandboxes (`npm start`).
 */
export function sandboxQuotaFromEnv(settingsPrefix: string, env: NodeJS.ProcessEnv): { quota: ProjectQuotaLimits } | { problems: { name: string; message: string }[] } {
  const perSecond = `${settingsPrefix}_QUOTA_PER_SECOND`;
  const perMinute = `${settingsPrefix}_QUOTA_PER_MINUTE`;
  const quotaLimit = z.coerce.number().pipe(projectQuotaLimitSchema).optional();
  // Named by the sandbox, so a schema of its own: its keys are known only at run time.
  const quotaSchema = z.partialRecord(z.enum([perSecond, perMinute]), quotaLimit);
  const given = Object.fromEntries(Object.entries(env).filter(([name, value]) => (name === perSecond || name === perMinute) && value !== undefined && value !== ''));
  const quota = quotaSchema.safeParse(given);
  if (!quota.success) return { problems: quota.error.issues.map((issue) => ({ name: String(issue.path[0]), message: issue.message })) };
  return { quota: { quotaPerSecond: quota.data[perSecond] ?? null, quotaPerMinute: quota.data[perMinute] ?? null } };
}

async function run(sandbox: Parameters<typeof runSandboxFromCommandLine>[0]): Promise<void> {
  const envSchema = z.object({
    PORT: z.coerce.number().int().min(0).max(65535).default(sandbox.defaultPort),
    HOST: z.string().min(1).default('127.0.0.1'),
    STATE_FILE: z.string().min(1).optional(),
  });
  const present = Object.fromEntries(
    Object.entries(process.env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const env = envSchema.safeParse(present);
  const quota = sandboxQuotaFromEnv(sandbox.settingsPrefix, process.env);
  if (!env.success || 'problems' in quota) {
    const problems = [...(env.error?.issues ?? []).map((issue) => `${String(issue.path[0])}: ${issue.message}`), ...('problems' in quota ? quota.problems.map(({ name, message }) => `${name}: ${message}`) : [])];
    console.error(problems.join('\n'));
    process.exit(78);
  }
  // Warnings only: a state file set aside as unreadable must not go unnoticed.
  const server = await sandbox.start({
    port: env.data.PORT,
    host: env.data.HOST,
    stateFile: env.data.STATE_FILE,
    quota: quota.quota,
    logger: { level: 'warn' },
  });
  console.log(`${sandbox.name} listening on ${server.url} (controls under ${server.url}/_control)`);
  const stop = () => {
    server.close().then(
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
