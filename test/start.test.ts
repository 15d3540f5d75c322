import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { http } from './support/http';
import { freePort } from './support/ports';
import { childEnv, entryScript, errorLines, ROOT, startServerProcess, type ServerProcess } from './support/process';
import { createTestDatabase } from './support/stack';

const UP = /GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/;

/** The log lines (pino's JSON) at warn (40) or above in a process's output. */
const warningsIn = (output: string): string[] => output.split('\n').filter((line) => /^\{"level":([4-9]\d)\b/.test(line));

/** Whether nothing listens on the port (a listener of ours can take it). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** What `npm start` does after building: the whole stack in one process, as a user runs it. */
describe('npm start', () => {
  it('stops with a message naming the variable when the configuration is bad', async () => {
    // The mounted sandboxes' settings too (in development `npm start` mounts them).
    for (const [name, value] of [['PORT', 'abc'], ['LOG_LEVEL', 'loud'], ['DATABASE_URL', 'mysql://x'], ['ALPHA_SANDBOX_QUOTA_PER_SECOND', 'lots']]) {
      const server = startServerProcess({ NODE_ENV: 'development', [name!]: value! });
      expect(await server.exited()).toBe(78);
      expect(server.output()).toContain('Invalid configuration');
      expect(server.output()).toContain(`${name}="${value}"`);
    }
  });

  it('refuses to run workers without a provider their queues call, naming the setting', async () => {
    // The README's split deployment as it was: a worker given the alpha provider only.
    const worker = startServerProcess({ NODE_ENV: 'development', ROLE: 'worker', ALPHA_API_URL: 'http://127.0.0.1:4000/sandbox/alpha' });
    expect(await worker.exited()).toBe(78);
    expect(worker.output()).toContain('BETA_API_URL is not set');
    expect(worker.output()).toContain('beta-brand-sync');
    expect(worker.output()).not.toContain('ALPHA_API_URL is not set');
    // The product alone, nothing mounted beside it: both are named, each once.
    const production = startServerProcess({ NODE_ENV: 'production', TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }, { entry: 'production' });
    expect(await production.exited()).toBe(78);
    expect(production.output().match(/(ALPHA|BETA)_API_URL is not set/g)).toEqual(['ALPHA_API_URL is not set', 'BETA_API_URL is not set']);
    expect(errorLines(production.output())).toEqual([]);
  });

  it('brings up the embedded PostgreSQL, seeds the demo once, serves, stops cleanly (also on SIGHUP) and keeps the data', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-start-'));
    const pgPort = await freePort();
    const env = {
      DATA_DIR: dataDir,
      PORT: '0',
      NODE_ENV: 'development',
      EMBEDDED_PG_PORT: String(pgPort),
      // What a first start logs at its default level: a warning or an error there means something is wrong.
      LOG_LEVEL: 'info',
      // The mounted sandbox takes its quota as its own process does (never reached by the demo's few calls).
      ALPHA_SANDBOX_QUOTA_PER_MINUTE: '1000',
    };
    const servers: ServerProcess[] = [];
    try {
      const first = startServerProcess(env);
      servers.push(first);
      const [, url] = await first.waitFor(/GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/, 90000);
      const [, token] = await first.waitFor(/its token \(also in .*demo\.json\):\n\s+(lgo_\S+)/);
      expect(first.output()).toContain('migrations applied now: Migration');
      // The demo's two deliberate refusals (a post, a location update) are one info line each, and nothing warns.
      await first.waitFor(/job refused at the provider, as its origin expected[\s\S]*job refused at the provider, as its origin expected/);
      expect(warningsIn(first.output())).toEqual([]);
      expect(errorLines(first.output())).toEqual([]);

      expect((await http(url!, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
      expect((await http(url!, 'GET', '/readyz')).body).toEqual({ status: 'ready' });
      expect((await http(url!, 'GET', '/sandbox/alpha/_control/state')).body.config).toMatchObject({ quotaPerSecond: null, quotaPerMinute: 1000 });
      const organization = await http(url!, 'GET', '/organization', { token });
      expect(organization.status).toBe(200);
      expect(organization.body.payload.accounts).toHaveLength(3); // two of the demo's own, and Alice's bakeries imported from the sandbox
      const demoFile = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
      expect(demoFile.token).toBe(token);
      // The dashboard's bundle is found beside the compiled server, and in development the page fills in the demo token.
      expect(first.output()).toContain(`Operations dashboard (in a browser):                ${url}/dashboard`);
      expect(first.output()).toContain(`REST reference (in a browser):                      ${url}/docs`);
      // The front door, in development, shows the demo token in both its forms; the reference page fills it in.
      const home = await http(url!, 'GET', '/');
      expect(home.body).toMatchObject({ links: { docs: { href: '/docs' } }, demo_token: token });
      expect(await (await fetch(url!, { headers: { accept: 'text/html' } })).text()).toContain(token);
      expect(await (await fetch(`${url}/docs`)).text()).toContain(`data-demo-token="${token}"`);
      const dashboard = await fetch(`${url}/dashboard`);
      expect(dashboard.status).toBe(200);
      const page = await dashboard.text();
      expect(page).toContain(`data-demo-token="${token}"`);
      const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(page)![1]!;
      expect((await fetch(`${url}${script}`)).status).toBe(200);

      first.child.kill('SIGINT');
      expect(await first.exited()).toBe(0);
      // PostgreSQL removes its pid file only on a clean shutdown.
      expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);

      const second = startServerProcess(env);
      servers.push(second);
      const [, url2] = await second.waitFor(/GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/, 60000);
      expect(second.output()).toContain('schema up to date');
      expect(second.output()).toContain(token);
      const again = await http(url2!, 'GET', '/organization', { token });
      expect(again.body.payload.id).toBe(organization.body.payload.id);
      // Closing the terminal: SIGHUP stops as Ctrl-C does, the embedded PostgreSQL with it.
      second.child.kill('SIGHUP');
      expect(await second.exited()).toBe(0);
      expect(second.output()).toContain('SIGHUP: stopping');
      expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
      expect(await portIsFree(pgPort)).toBe(true);
    } finally {
      // A failed wait must not leave a server (and its PostgreSQL) running: SIGTERM stops both cleanly.
      for (const server of servers) {
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
        await server.exited();
      }
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
  /** What a test started, undone after it whatever happened (a failed wait must not leave a server behind). */
  const undo: (() => unknown)[] = [];
  afterEach(async () => {
    for (const step of undo.splice(0).reverse()) await step();
  });

  it('are readable lines on a terminal in development, one per request at debug', async () => {
    const database = await createTestDatabase();
    undo.push(() => database.drop());
    const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-tty-'));
    undo.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // `script` gives the server a real terminal (a pseudo-terminal) as its stdout.
    const terminal = spawn('script', ['-qfec', `${process.execPath} ${entryScript()}`, '/dev/null'], {
      cwd: ROOT,
      env: childEnv({ DATABASE_URL: database.url, DATA_DIR: dataDir, NODE_ENV: 'development', LOG_LEVEL: 'debug', PORT: '0' }),
    });
    const exited = new Promise((resolve) => terminal.on('exit', resolve));
    undo.push(async () => {
      // The server first (it stops cleanly on SIGTERM), then `script` if it is still there.
      for (const pid of descendants(terminal.pid!).reverse()) process.kill(pid, 'SIGTERM');
      if (terminal.exitCode === null && terminal.signalCode === null) terminal.kill('SIGTERM');
      await exited;
    });
    let output = '';
    const seen = new Set<() => void>();
    terminal.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      seen.forEach((check) => check());
    });
    const waitFor = (pattern: RegExp, timeoutMs = 60000) =>
      new Promise<RegExpMatchArray>((resolve, reject) => {
        const timer = setTimeout(() => {
          seen.delete(check);
          reject(new Error(`Timed out waiting for ${pattern}; output so far:\n${output}`));
        }, timeoutMs);
        const check = () => {
          const match = pattern.exec(output);
          if (match) {
            clearTimeout(timer);
            seen.delete(check);
            resolve(match);
          }
        };
        seen.add(check);
        check();
      });
    const [, url] = await waitFor(UP);
    expect((await http(url!, 'GET', '/healthz')).status).toBe(200);
    const [line] = await waitFor(/^.*GET \/healthz 200.*$/m);
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] .*DEBUG.*: .*GET \/healthz 200 \d+ ms/);
    expect(output).not.toMatch(/^\{"level"/m);
  }, 120000);

  it('are one JSON object a line when piped, also in development', async () => {
    const database = await createTestDatabase();
    undo.push(() => database.drop());
    const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-piped-'));
    undo.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const piped = startServerProcess({ DATABASE_URL: database.url, DATA_DIR: dataDir, NODE_ENV: 'development', LOG_LEVEL: 'info', PORT: '0' });
    undo.push(async () => {
      if (piped.child.exitCode === null && piped.child.signalCode === null) piped.child.kill('SIGTERM');
      await piped.exited();
    });
    await piped.waitFor(UP, 60000);
    // pino writes asynchronously: the line may come after the banner, so it is waited for, not looked up.
    await piped.waitFor(/^\{"level":30,.*"msg":"Server listening at http/m);
    expect(piped.output()).not.toMatch(/^\[\d\d:\d\d/m);
    piped.child.kill('SIGTERM');
    expect(await piped.exited()).toBe(0);
  }, 120000);
});
