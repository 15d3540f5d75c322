import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { http } from './support/http';
import { freePort } from './support/ports';
import { childEnv, ROOT, startServerProcess } from './support/process';
import { createTestDatabase } from './support/stack';

const UP = /GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/;

/** What `npm start` does after building: the whole stack in one process, as a user runs it. */
describe('npm start', () => {
  it('stops with a message naming the variable when the configuration is bad', async () => {
    for (const [name, value] of [['PORT', 'abc'], ['LOG_LEVEL', 'loud'], ['DATABASE_URL', 'mysql://x']]) {
      const server = startServerProcess({ [name!]: value! });
      expect(await server.exited()).toBe(78);
      expect(server.output()).toContain('Invalid configuration');
      expect(server.output()).toContain(`${name}="${value}"`);
    }
  });

  it('brings up the embedded PostgreSQL, seeds the demo once, serves, stops cleanly and keeps the data', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-start-'));
    const env = {
      DATA_DIR: dataDir,
      PORT: '0',
      NODE_ENV: 'development',
      EMBEDDED_PG_PORT: String(await freePort()),
    };
    try {
      const first = startServerProcess(env);
      const [, url] = await first.waitFor(/GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/, 90000);
      const [, token] = await first.waitFor(/its token \(also in .*demo\.json\):\n\s+(lgo_\S+)/);
      expect(first.output()).toContain('migrations applied now: Migration');

      expect((await http(url!, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
      expect((await http(url!, 'GET', '/readyz')).body).toEqual({ status: 'ready' });
      const organization = await http(url!, 'GET', '/organization', { token });
      expect(organization.status).toBe(200);
      expect(organization.body.payload.accounts).toHaveLength(2);
      const demoFile = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
      expect(demoFile.token).toBe(token);

      first.child.kill('SIGINT');
      expect(await first.exited()).toBe(0);
      // PostgreSQL removes its pid file only on a clean shutdown.
      expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);

      const second = startServerProcess(env);
      const [, url2] = await second.waitFor(/GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/, 60000);
      expect(second.output()).toContain('schema up to date');
      expect(second.output()).toContain(token);
      const again = await http(url2!, 'GET', '/organization', { token });
      expect(again.body.payload.id).toBe(organization.body.payload.id);
      second.child.kill('SIGTERM');
      expect(await second.exited()).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180000);
});

/** Every process below `pid` (children, grandchildren), newest last. */
function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid=']).toString().trim().split('\n').map((row) => row.trim().split(/\s+/).map(Number));
  const below = (parent: number): number[] => rows.filter(([, ppid]) => ppid === parent).flatMap(([child]) => [child!, ...below(child!)]);
  return below(pid);
}

describe('logs', () => {
  it('are readable lines on a terminal in development, one per request at debug; JSON lines when piped', async () => {
    const database = await createTestDatabase();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-tty-'));
    // `script` gives the server a real terminal (a pseudo-terminal) as its stdout.
    const terminal = spawn('script', ['-qfec', `${process.execPath} dist/src/main.js`, '/dev/null'], {
      cwd: ROOT,
      env: childEnv({ DATABASE_URL: database.url, DATA_DIR: dataDir, NODE_ENV: 'development', LOG_LEVEL: 'debug', PORT: '0' }),
    });
    let output = '';
    const seen = new Set<() => void>();
    terminal.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      seen.forEach((check) => check());
    });
    const exited = new Promise((resolve) => terminal.on('exit', resolve));
    const waitFor = (pattern: RegExp) =>
      new Promise<RegExpMatchArray>((resolve) => {
        const check = () => {
          const match = pattern.exec(output);
          if (match) {
            seen.delete(check);
            resolve(match);
          }
        };
        seen.add(check);
        check();
      });
    try {
      const [, url] = await waitFor(UP);
      expect((await http(url!, 'GET', '/healthz')).status).toBe(200);
      const [line] = await waitFor(/^.*GET \/healthz 200.*$/m);
      expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] .*DEBUG.*: .*GET \/healthz 200 \d+ ms/);
      expect(output).not.toMatch(/^\{"level"/m);
    } finally {
      for (const pid of descendants(terminal.pid!).reverse()) process.kill(pid, 'SIGTERM');
      await exited;
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    // The same server with its output piped (every other test): one JSON object a line.
    const piped = startServerProcess({ DATABASE_URL: (await createTestDatabase().then((db) => ((pipedDb = db), db))).url, NODE_ENV: 'development', LOG_LEVEL: 'info', PORT: '0' });
    await piped.waitFor(UP);
    expect(piped.output()).toMatch(/^\{"level":30,.*"msg":"Server listening at http/m);
    piped.child.kill('SIGTERM');
    expect(await piped.exited()).toBe(0);
    await pipedDb?.drop();
  }, 120000);
});

let pipedDb: { drop(): Promise<void> } | undefined;
