import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { http } from './support/http';
import { freePort } from './support/ports';
import { ROOT, runCli, startServerProcess, type ServerProcess } from './support/process';

/**
 * The embedded PostgreSQL where it is hardest: as root (it then runs as the `postgres` user) in a clone under a
 * directory nobody else may enter (mode 0700, like /root or `mktemp -d`), and stopped the ways a person stops
 * it. The machine and CI run as root, as the reporter did.
 */
const UP = /GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/;
const started: ServerProcess[] = [];
const cleanups: (() => void)[] = [];

afterAll(async () => {
  for (const server of started) {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await server.exited();
    }
  }
  for (const cleanup of cleanups.reverse()) cleanup();
});

/** pino lines at error or fatal, and anything that looks like a crash. */
function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => /"level":(50|60)/.test(line) || /^\s+at /.test(line) || /Unhandled|EACCES/.test(line));
}

/** A copy of the built project (hard links: quick) inside a fresh 0700 directory, as a clone under /root would be. */
function projectUnderPrivateDirectory(): { privateDir: string; project: string } {
  const privateDir = mkdtempSync(path.join(tmpdir(), 'lg-private-'));
  expect(statSync(privateDir).mode & 0o777).toBe(0o700);
  const project = path.join(privateDir, 'listings-gateway');
  execFileSync('mkdir', [project]);
  execFileSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(project, 'node_modules')]);
  execFileSync('cp', ['-r', path.join(ROOT, 'dist'), path.join(ROOT, 'package.json'), project]);
  cleanups.push(() => rmSync(privateDir, { recursive: true, force: true }));
  return { privateDir, project };
}

describe('as root, in a clone under a 0700 directory', () => {
  it('npm start works: PostgreSQL runs as postgres from reachable copies, the CLI joins it, and it stops cleanly', async () => {
    expect(process.getuid?.()).toBe(0);
    const { project } = projectUnderPrivateDirectory();
    const env = { NODE_ENV: 'development', PORT: '0', EMBEDDED_PG_PORT: String(await freePort()) };
    const server = startServerProcess(env, { root: project });
    started.push(server);
    const [, url] = await server.waitFor(UP, 120000);
    const [, token] = await server.waitFor(/its token \(also in .*demo\.json\):\n\s+(lgo_\S+)/);
    const [, clusterDir] = await server.waitFor(/embedded PostgreSQL under (\/var\/lib\/listings-gateway\/data-[0-9a-f]{12}\/pg) \(moved from \.data: the postgres user cannot enter \S+ \(mode 0700\)\)/);
    cleanups.push(() => rmSync(path.dirname(clusterDir!), { recursive: true, force: true }));

    expect((await http(url!, 'GET', '/healthz')).status).toBe(200);
    expect((await http(url!, 'GET', '/organization', { token })).status).toBe(200);
    // The CLI, run in the same project, finds the same cluster and joins it.
    const demo = await runCli(['demo'], { NODE_ENV: 'development' }, { root: project });
    expect(demo.stderr).toBe('');
    expect(demo.code).toBe(0);
    const organization = await http(url!, 'GET', '/organization', { token: JSON.parse(demo.stdout).token });
    expect(organization.status).toBe(200);

    server.child.kill('SIGTERM');
    expect(await server.exited()).toBe(0);
    expect(errorLines(server.output())).toEqual([]);
    expect(existsSync(path.join(clusterDir!, 'postmaster.pid'))).toBe(false);
  }, 240000);

  it('an explicit DATA_DIR the postgres user cannot reach stops at once with one line naming the path and the choices', async () => {
    const { privateDir, project } = projectUnderPrivateDirectory();
    const server = startServerProcess({ DATA_DIR: path.join(project, '.data'), PORT: '0', EMBEDDED_PG_PORT: String(await freePort()) }, { root: project });
    started.push(server);
    expect(await server.exited()).toBe(78);
    const lines = server.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`cannot enter ${privateDir} (mode 0700)`);
    expect(lines[0]).toContain(path.join(project, '.data', 'pg'));
    expect(lines[0]).toMatch(/Set DATA_DIR to a directory it can reach, run as a non-root user, or set DATABASE_URL\.$/);
  }, 120000);
});

describe('stopping the embedded PostgreSQL', () => {
  function dataDirectory(): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'lg-stop-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  it('Ctrl-C in a terminal (SIGINT to the whole process group) stops everything cleanly, PostgreSQL last', async () => {
    const dataDir = dataDirectory();
    const env = { DATA_DIR: dataDir, NODE_ENV: 'development', PORT: '0', EMBEDDED_PG_PORT: String(await freePort()) };
    const server = startServerProcess(env, { detached: true });
    started.push(server);
    const [, url] = await server.waitFor(UP, 120000);
    const [, token] = await server.waitFor(/its token \(also in .*demo\.json\):\n\s+(lgo_\S+)/);
    expect((await http(url!, 'GET', '/organization', { token })).status).toBe(200);
    // What a terminal does: the signal goes to every process of the foreground group.
    process.kill(-server.child.pid!, 'SIGINT');
    expect(await server.exited()).toBe(0);
    expect(errorLines(server.output())).toEqual([]);
    expect(server.output()).not.toContain('again: stopping at once');
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 180000);

  it('a start whose owner was killed leaves PostgreSQL running; the next start adopts it and stops it', async () => {
    const dataDir = dataDirectory();
    const env = { DATA_DIR: dataDir, PORT: '0', EMBEDDED_PG_PORT: String(await freePort()) };
    const first = startServerProcess(env);
    started.push(first);
    await first.waitFor(UP, 120000);
    first.child.kill('SIGKILL');
    await first.exited();
    // pg_ctl detached it: the killed owner left it serving.
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(true);

    const second = startServerProcess(env);
    started.push(second);
    await second.waitFor(UP, 120000);
    expect(second.output()).not.toContain('joined');
    second.child.kill('SIGTERM');
    expect(await second.exited()).toBe(0);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 180000);
});
