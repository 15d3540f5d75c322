import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startDatabaseServer } from '../../dev/database-server';
import { freePort } from '../../dev/ports';
import type { DemoSeed } from '../../src/demo/demo.seed';
import { sleep } from './abort';
import { INSPECTOR_NOISE } from './inspector';
import { startCountingProxy, type CountingProxy } from './pg-count-proxy';

/** Where the posts go: one account and one of its connected locations. */
export interface PostTarget {
  accountId: string;
  locationId: string;
}

/**
 * The location limits of the stack a benchmark starts: high enough never to refuse its requests (the checks and
 * their SQL still run). `consume_rate_limit` takes an int, so not the posts' 1e9.
 */
export const BENCH_LOCATION_LIMIT = 100_000_000;

/** The stack a benchmark runs against: one it started (owned) or one already running (--url). */
export interface BenchStack {
  baseUrl: string;
  /** An organization token: it may post to every account, and its subscriptions see every post. */
  token: string;
  targets: PostTarget[];
  /** postgres:// URL of the application database, when known: enables the server-side breakdown. */
  databaseUrl: string | undefined;
  /** LOCATION_READ_RATE_LIMIT_PER_MINUTE of the stack, when known: a plain route counting as the service does needs it. */
  locationReadLimit: number | undefined;
  owned: boolean;
  /** Pids whose CPU time is reported: the server process, and the embedded PostgreSQL's postmaster. */
  serverPid: number | undefined;
  /** The service's processes: the server and, with `--workers N`, its worker processes (ROLE=worker). */
  servicePids(): number[];
  /** The provider sandboxes' processes, when they run apart (`--workers N`); none when the server mounts them. */
  sandboxPids(): number[];
  /** With `workerMetrics`: each worker process's metrics (`http://127.0.0.1:<port>/metrics`), in start order. */
  workerMetricsUrls?: string[];
  /** Base URL of the alpha sandbox of this stack (its controls are under /_control). */
  alphaUrl: string;
  /** The loopback port of the server's inspector, when it was started with one. */
  inspectorPort: number | undefined;
  postmasterPid(): number | undefined;
  /** Lines the server wrote at warn level or above (LOG_LEVEL=warn), for the report. */
  serverWarnings(): string[];
  /** The proxy every service process reaches PostgreSQL through, counting its statements (when asked for). */
  statements?: CountingProxy;
  /**
   * On a stack of this run: a second server process on the same database (ROLE=api: it takes no jobs), with the
   * stack's settings and `env` over them, stopped with the stack. For comparing two settings in one run.
   */
  startServerBeside?(env: Record<string, string>, signal: AbortSignal): Promise<ServerProcess>;
  stop(): Promise<void>;
  /** Last resort when stopping hangs: kill what this run started, at once. */
  forceStop(): void;
}

/** The benchmark talks to this machine only. */
export function assertLoopback(url: string): URL {
  const parsed = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname)) {
    throw new Error(`--url must point at this machine (127.0.0.1), not ${parsed.hostname}`);
  }
  if (parsed.protocol !== 'http:') throw new Error(`--url must be http://…, not ${parsed.protocol}`);
  return parsed;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

const BANNER = /GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/;
/** What a worker process (ROLE=worker) prints once up: it serves nothing, so there is no URL in it. */
const WORKER_BANNER = /Listings Gateway worker is up \(ROLE=worker\)()/;
/** What `node dist-dev/sandboxes/<name>/main.js` prints once it listens. */
const SANDBOX_BANNER = /sandbox listening on (http:\/\/\S+) /;

/** One server process a bench started (`node dist-dev/dev/main.js`), up once its banner was printed. */
export interface ServerProcess {
  baseUrl: string;
  pid: number | undefined;
  dataDir: string;
  /** Lines it wrote after its banner (LOG_LEVEL=warn: warnings and errors), for the report. */
  warnings(): string[];
  /** SIGTERM (the server drains, stops pg-boss and closes its connections), SIGKILL after 30 s. */
  stop(): Promise<void>;
  forceStop(): void;
}

/**
 * Starts `node <script>` (default `dist-dev/dev/main.js`, the server) with `env` and waits for its banner (whose
 * first group is its URL); kills it when it does not come up.
 */
async function spawnServer(options: {
  root: string;
  env: NodeJS.ProcessEnv;
  args: string[];
  dataDir: string;
  signal: AbortSignal;
  startTimeoutMs?: number;
  script?: string;
  banner?: RegExp;
}): Promise<ServerProcess> {
  const bannerPattern = options.banner ?? BANNER;
  const child = spawn(process.execPath, [...options.args, path.join(options.root, options.script ?? 'dist-dev/dev/main.js')], {
    cwd: options.root,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const warnings: string[] = [];
  let banner = false;
  let onOutput: () => void = () => undefined;
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    // Before the banner everything is kept (to explain a failed start); after it, only pino's warn+ lines (the
    // inspector's own lines are not the server's).
    if (!banner) output += text;
    else {
      for (const line of text.split('\n')) if (line.trim() && !INSPECTOR_NOISE.test(line) && warnings.length < 200) warnings.push(line);
    }
    onOutput();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 30_000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5_000);
      }
    }
  };
  const forceStop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };

  const startTimeoutMs = options.startTimeoutMs ?? 180_000;
  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error(`the server did not start within ${startTimeoutMs / 1000} s`)), startTimeoutMs);
      const onAbort = () => fail(new Error('aborted while starting the server'));
      const onExit = (code: number | null) => fail(new Error(`the server exited (${code}) before it was up`));
      function done() {
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        child.off('exit', onExit);
        onOutput = () => undefined;
      }
      function fail(error: Error) {
        done();
        reject(new Error(`${error.message}; its output:\n${output}`));
      }
      onOutput = () => {
        const match = bannerPattern.exec(output);
        if (match) {
          done();
          banner = true;
          resolve(match[1]!);
        }
      };
      if (options.signal.aborted) return onAbort();
      options.signal.addEventListener('abort', onAbort, { once: true });
      child.once('exit', onExit);
      onOutput();
    });
    return { baseUrl, pid: child.pid, dataDir: options.dataDir, warnings: () => warnings, stop, forceStop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Starts `node dist-dev/dev/main.js` (what `npm start` runs) on a throwaway DATA_DIR and a throwaway database,
 * migrated beforehand as the tests' template is (dev/database-server.ts: on DATABASE_URL's server, else on an
 * embedded PostgreSQL of this run), in development so the demo organization is seeded, with post and location
 * limits out of the way.
 */
export async function startOwnedStack(options: {
  root: string;
  signal: AbortSignal;
  startTimeoutMs?: number;
  /**
   * Write a V8 CPU profile of the server, and of each worker process, here (each its own file, written when it stops);
   * NODE_OPTIONS may not carry --cpu-prof.
   */
  profileDir?: string;
  /** Start the server with `--inspect` on this loopback port (a benchmark forces its GC through it). */
  inspectorPort?: number;
  /** Settings of the server over the stack's own (a bench comparing settings). */
  env?: Record<string, string>;
  /**
   * 0 (default): one process serves and works, the provider sandboxes mounted in it (what `npm start` runs). N > 0:
   * the deployment shape: the server as ROLE=api, N worker processes (ROLE=worker) on the same database, and each
   * provider sandbox in a process of its own, reached over HTTP as a real provider would be.
   */
  workers?: number;
  /** The provider sandboxes in processes of their own with workers = 0 too (a baseline calls the same sandbox). */
  sandboxesApart?: boolean;
  /** Every service process reaches PostgreSQL through a counting proxy (bench/support/pg-count-proxy.ts). */
  countStatements?: boolean;
  /**
   * Each worker process serves its metrics on a port of its own (METRICS=<port>): a worker serves nothing else,
   * and what a process counts (its provider calls) is read from it alone.
   */
  workerMetrics?: boolean;
  /** Settings of the provider sandboxes' processes when they run apart (e.g. ALPHA_SANDBOX_QUOTA_PER_SECOND). */
  sandboxEnv?: Record<string, string>;
}): Promise<BenchStack> {
  const databaseServer = await startDatabaseServer({ databaseUrl: process.env.DATABASE_URL, directoryPrefix: 'lg-bench-pg-' });
  const databaseName = `lg_bench_${randomBytes(6).toString('hex')}`;
  let databaseUrl: string;
  try {
    databaseUrl = await databaseServer.createDatabase(databaseName, { migrate: true });
  } catch (error) {
    await databaseServer.stop();
    throw error;
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-bench-'));
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Anything pointing the child elsewhere would make this stack not the throwaway one.
  for (const name of ['ALPHA_API_URL', 'ALPHA_OAUTH_URL', 'BETA_API_URL', 'REDIS_URL', 'ROLE', 'SANDBOX', 'PUBLIC_URL']) delete env[name];
  Object.assign(env, {
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    NODE_ENV: 'development',
    // The providers are the sandboxes this server mounts (the default in development; said, not assumed).
    SANDBOX: 'on',
    LOG_LEVEL: 'warn',
    POST_RATE_LIMIT_PER_MINUTE: '1000000000',
    POST_QUOTA_PER_MONTH: '1000000000',
    LOCATION_CREATE_RATE_LIMIT_PER_MINUTE: String(BENCH_LOCATION_LIMIT),
    LOCATION_READ_RATE_LIMIT_PER_MINUTE: String(BENCH_LOCATION_LIMIT),
    LOCATION_UPDATE_RATE_LIMIT_PER_HOUR: String(BENCH_LOCATION_LIMIT),
  });
  if (options.env) Object.assign(env, options.env);
  const profile = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(options.profileDir)}`] : [];
  const inspect = options.inspectorPort === undefined ? [] : [`--inspect=127.0.0.1:${options.inspectorPort}`];
  const besides: ServerProcess[] = [];
  const workers: ServerProcess[] = [];
  const sandboxes: ServerProcess[] = [];
  let server: ServerProcess | undefined;
  let statements: CountingProxy | undefined;
  const everyProcess = () => [...workers, ...besides, ...(server ? [server] : []), ...sandboxes];

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // Workers first (they call the sandboxes), the sandboxes last.
    for (const running of everyProcess()) await running.stop();
    await statements?.stop();
    await databaseServer.dropDatabase(databaseName).catch(() => undefined);
    await databaseServer.stop();
    rmSync(dataDir, { recursive: true, force: true });
    for (const other of [...besides, ...workers]) rmSync(other.dataDir, { recursive: true, force: true });
  };

  const forceStop = () => {
    for (const running of everyProcess()) running.forceStop();
    statements?.kill();
    // On DATABASE_URL's server the database stays: dropping it cannot be done at once.
    databaseServer.kill();
    rmSync(dataDir, { recursive: true, force: true });
    for (const other of [...besides, ...workers]) rmSync(other.dataDir, { recursive: true, force: true });
  };

  try {
    if (options.countStatements) {
      statements = await startCountingProxy(databaseUrl);
      env.DATABASE_URL = statements.url(databaseUrl);
    }
    let alphaUrl: string | undefined;
    if (options.workers || options.sandboxesApart) {
      for (const name of ['alpha', 'beta'] as const) {
        const sandbox = await spawnServer({
          root: options.root,
          env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...options.sandboxEnv },
          args: [],
          dataDir,
          signal: options.signal,
          script: `dist-dev/sandboxes/${name}/main.js`,
          banner: SANDBOX_BANNER,
        });
        sandboxes.push(sandbox);
        if (name === 'alpha') {
          alphaUrl = sandbox.baseUrl;
          Object.assign(env, { ALPHA_API_URL: sandbox.baseUrl, ALPHA_OAUTH_URL: sandbox.baseUrl });
        } else env.BETA_API_URL = sandbox.baseUrl;
      }
      Object.assign(env, { SANDBOX: 'off', ROLE: options.workers ? 'api' : 'all' });
    }
    const started = await spawnServer({ root: options.root, env, args: [...profile, ...inspect], dataDir, signal: options.signal, startTimeoutMs: options.startTimeoutMs });
    server = started;
    const workerMetricsUrls: string[] = [];
    for (let index = 0; index < (options.workers ?? 0); index += 1) {
      const workerDir = mkdtempSync(path.join(tmpdir(), 'lg-bench-'));
      const metricsPort = options.workerMetrics ? await freePort() : undefined;
      if (metricsPort !== undefined) workerMetricsUrls.push(`http://127.0.0.1:${metricsPort}/metrics`);
      const workerEnv = { ...env, DATA_DIR: workerDir, ROLE: 'worker', ...(metricsPort === undefined ? {} : { METRICS: String(metricsPort) }) };
      const worker = await spawnServer({ root: options.root, env: workerEnv, args: profile, dataDir: workerDir, signal: options.signal, banner: WORKER_BANNER }).catch(
        (error: unknown) => {
          rmSync(workerDir, { recursive: true, force: true });
          throw error;
        },
      );
      workers.push(worker);
    }
    const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as DemoSeed;
    const baseUrl = started.baseUrl;
    return {
      baseUrl,
      token: demo.token,
      targets: await connectedTargets(baseUrl, demo.token, options.signal),
      databaseUrl,
      locationReadLimit: BENCH_LOCATION_LIMIT,
      owned: true,
      serverPid: started.pid,
      servicePids: () => [started, ...workers].flatMap((running) => (running.pid === undefined ? [] : [running.pid])),
      sandboxPids: () => sandboxes.flatMap((running) => (running.pid === undefined ? [] : [running.pid])),
      ...(options.workerMetrics ? { workerMetricsUrls } : {}),
      alphaUrl: alphaUrl ?? `${baseUrl}/sandbox/alpha`,
      inspectorPort: options.inspectorPort,
      postmasterPid: () => databaseServer.postmasterPid(),
      serverWarnings: () => [...started.warnings(), ...[...workers, ...besides].flatMap((other) => other.warnings())],
      statements,
      async startServerBeside(overrides, signal) {
        const besideDir = mkdtempSync(path.join(tmpdir(), 'lg-bench-'));
        // A database that has its organization already: the second server seeds nothing.
        const beside = await spawnServer({ root: options.root, env: { ...env, DATA_DIR: besideDir, ROLE: 'api', ...overrides }, args: [], dataDir: besideDir, signal }).catch(
          (error: unknown) => {
            rmSync(besideDir, { recursive: true, force: true });
            throw error;
          },
        );
        besides.push(beside);
        return beside;
      },
      stop,
      forceStop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface GraphQLAnswer<T> {
  data?: T;
  errors?: { message: string }[];
}

/** One GraphQL operation over HTTP with `token`; throws on any error (a bench's set-up must not half-succeed). */
export async function graphql<T>(baseUrl: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const answer = (await response.json()) as GraphQLAnswer<T>;
  if (!answer.data || answer.errors?.length) {
    throw new Error(`GraphQL at ${baseUrl}: HTTP ${response.status} ${answer.errors?.map((e) => e.message).join('; ') ?? ''}`);
  }
  return answer.data;
}

/** The organization's locations, and which of them the alpha provider knows (they can receive posts). */
async function locationsOf(baseUrl: string, token: string): Promise<{ all: number; connected: PostTarget[] }> {
  const { accounts } = await graphql<{ accounts: { id: string }[] }>(baseUrl, token, '{ accounts { id } }');
  const connected: PostTarget[] = [];
  let all = 0;
  for (const account of accounts) {
    const { locations } = await graphql<{
      locations: { edges: { node: { id: string; connected: boolean; alphaLocationName: string | null } }[] };
    }>(
      baseUrl,
      token,
      'query($a: ID) { locations(accountId: $a, first: 100) { edges { node { id connected alphaLocationName } } } }',
      { a: account.id },
    );
    all += locations.edges.length;
    for (const { node } of locations.edges) {
      if (node.connected && node.alphaLocationName) connected.push({ accountId: account.id, locationId: node.id });
    }
  }
  return { all, connected };
}

/** Until every location of the organization is connected (a new stack's workers create the demo's at the provider). */
async function connectedTargets(baseUrl: string, token: string, signal: AbortSignal): Promise<PostTarget[]> {
  for (;;) {
    const { all, connected } = await locationsOf(baseUrl, token);
    if (connected.length === all || signal.aborted) return connected;
    await sleep(100, signal);
  }
}

/** A stack already running (--url/--token): the organization's connected locations are found through GraphQL. */
export async function connectToStack(options: { url: string; token: string; databaseUrl: string | undefined }): Promise<BenchStack> {
  const baseUrl = assertLoopback(options.url).origin;
  const targets = (await locationsOf(baseUrl, options.token)).connected;
  if (targets.length === 0) throw new Error('the organization of --token has no location connected to the alpha provider');
  return {
    baseUrl,
    token: options.token,
    targets,
    databaseUrl: options.databaseUrl,
    locationReadLimit: undefined,
    owned: false,
    serverPid: undefined,
    servicePids: () => [],
    sandboxPids: () => [],
    alphaUrl: `${baseUrl}/sandbox/alpha`,
    inspectorPort: undefined,
    postmasterPid: () => undefined,
    serverWarnings: () => [],
    stop: () => Promise.resolve(),
    forceStop: () => undefined,
  };
}
