import { createHash } from 'node:crypto';
import { existsSync, promises as fs, realpathSync } from 'node:fs';
import path from 'node:path';
import { bin, type Binaries } from './embedded-binaries';
import { run, type RunAs } from './embedded-process';
import { DatabaseSetupError } from './embedded-setup-error';

/**
 * As root, PostgreSQL runs as the `postgres` user (it refuses root), which must be able to reach the binaries and
 * the cluster directory: see `docs/embedded-postgres.md` for what moves where when it cannot.
 */

/** Where root keeps what the `postgres` user must reach when the project itself is out of its reach. */
const SHARED_ROOT = '/var/lib/listings-gateway';

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The `postgres` user PostgreSQL runs as when we are root, created if the system has none (as embedded-postgres did). */
export async function postgresUser(): Promise<RunAs> {
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
export async function reachableBinaries(binaries: Binaries, user: RunAs, log: (message: string) => void): Promise<Binaries> {
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
 * `clusterDirOf` says where the cluster sits in a data directory, for the messages.
 */
export async function reachableDataDir(
  dataDir: string,
  user: RunAs,
  dataDirIsDefault: boolean,
  clusterDirOf: (dataDir: string) => string,
): Promise<{ dataDir: string; relocatedBecause?: string }> {
  const clusterDir = clusterDirOf(dataDir);
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
    throw unreachableDataDir((await firstBlocked(user, fallback)) ?? fallback, clusterDirOf(fallback));
  }
  return { dataDir: fallback, relocatedBecause: `the postgres user cannot enter ${blocked}` };
}
