import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../../sandboxes/alpha/alpha-sandbox.control';
import type { AlphaSandboxConfig } from '../../sandboxes/alpha/alpha-sandbox.state';
import { freePort } from '../../dev/ports';
import { abortOnLimits } from './abort';
import { connectToStack, startOwnedStack, type BenchStack } from './stack';

/**
 * What every benchmark does the same way: the common options, the stack (started for the run from the development
 * entry, or one already running with --url), the alpha sandbox set for measuring, the time limit and Ctrl-C, the
 * report after a failure or a stop too, --json, and the teardown. A bench brings its own options, its measurement
 * and its figures.
 */

/** The options every bench takes. */
export interface CommonOptions {
  timeoutMs: number;
  url: string | undefined;
  token: string | undefined;
  databaseUrl: string | undefined;
  json: string | undefined;
  profileServer: string | undefined;
  /** Worker processes of the stack it starts (0: one process does all; see startOwnedStack). */
  workers: number;
}

/** The stack a bench measures, with the alpha sandbox of that stack. */
export interface BenchEnvironment {
  stack: BenchStack;
  sandbox: AlphaSandboxControl;
  /** On a stack of this run: an empty sandbox again (it keeps every post in memory), set as the bench asked. */
  resetSandbox: () => Promise<void>;
}

/** One run of a bench, as the harness drives it. */
export interface BenchSession {
  /** Measures; results are kept as they come, so that a run stopped early still reports what it measured. */
  measure(environment: BenchEnvironment): Promise<void>;
  /**
   * Prints the figures of what was measured (after a failure or a stop too; `stack` is undefined when it never
   * came up) and returns what --json writes beside the machine, the options and why the run stopped early.
   */
  report(stack: BenchStack | undefined, aborted: string | undefined): Record<string, unknown>;
  /** Closes what the bench opened itself (sockets, helper servers), before the stack stops. */
  close?(): Promise<void>;
  /** Kills what the bench started itself, at once: the last resort when cleaning up hangs. */
  forceStop?(): void;
}

/**
 * A benchmark: `S` names its options taking a value, `F` its flags; `O` is what it reads from them. Only its own
 * options are declared here: the harness adds the common ones.
 */
export interface BenchDefinition<S extends string, F extends string, O> {
  /** `bench/<name>`, run by `npm run bench:<name>`. */
  name: string;
  /** The usage lines of its own options. */
  usage: string;
  values: readonly S[];
  flags?: readonly F[];
  /** Default of --timeout-s. */
  timeoutSeconds: number;
  /** Default of --workers (0 when absent: one process does all). */
  defaultWorkers?: number;
  /**
   * What --database-url (with --url: the running stack's database) serves in this bench; `required` when it
   * cannot run without it. Absent: the bench takes no --database-url.
   */
  databaseUrl?: { why: string; required: boolean };
  /** The alpha sandbox while it measures. */
  sandbox: Partial<AlphaSandboxConfig>;
  /** Whether the stack it starts runs with an inspector (for reading the server's memory after a forced GC). */
  inspector?(options: O): boolean;
  /** Settings of the server of the stack it starts, over the harness's own (e.g. METRICS=off). */
  stackEnv?(options: O): Record<string, string>;
  /**
   * The stack it starts: the provider sandboxes in processes of their own even without --workers (a baseline of
   * the bench calls the same sandbox process), and the service's statements counted on the wire (`stack.statements`).
   */
  stackShape?(options: O): { sandboxesApart?: boolean; countStatements?: boolean; workerMetrics?: boolean; sandboxEnv?: Record<string, string> };
  /** Its own options from their raw values; throws (naming the option) on a bad one. */
  read(values: { [K in S]?: string } & { [K in F]?: boolean }, common: CommonOptions): O;
  /** Prints what it will do (after the machine's lines) and returns the session that does it. */
  start(options: O & CommonOptions, signal: AbortSignal): BenchSession;
}

/**
 * The numeric command-line options every bench reads: a figure outside its range stops the bench with the
 * option's name before anything starts, rather than measuring nonsense.
 */
function numberOption(name: string, raw: string | undefined, fallback: number, min: number, max: number, integer: boolean): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min || value > max) {
    const kind = integer ? 'an integer' : 'a number';
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new Error(`--${name} must be ${kind} ${range}, not ${raw}`);
  }
  return value;
}

/** A whole-number option, e.g. `--posts 40`. */
export function integerOption(name: string, raw: string | undefined, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  return numberOption(name, raw, fallback, min, max, true);
}

/** A fractional option, e.g. `--rate 0.5`. */
export function decimalOption(name: string, raw: string | undefined, fallback: number, min: number): number {
  return numberOption(name, raw, fallback, min, Number.MAX_SAFE_INTEGER, false);
}

function usageOf(definition: Pick<BenchDefinition<never, never, unknown>, 'name' | 'usage' | 'timeoutSeconds' | 'databaseUrl' | 'defaultWorkers'>): string {
  const workers = definition.defaultWorkers ?? 0;
  const databaseUrl = definition.databaseUrl
    ? `  --database-url URL   with --url: its database, ${definition.databaseUrl.why}${definition.databaseUrl.required ? '' : ' (optional)'}\n`
    : '';
  return (
    `Usage: npm run bench:${definition.name} -- [options]\n\n${definition.usage}` +
    `  --timeout-s S        global time limit: print what was measured and exit 2 (default ${definition.timeoutSeconds})\n` +
    '  --url URL            an already running stack (http://127.0.0.1:<port>) instead of starting one\n' +
    '  --token TOKEN        with --url: an organization token\n' +
    databaseUrl +
    '  --json FILE          also write the figures as JSON\n' +
    '  --profile-server DIR write a V8 CPU profile of the server it starts, and of each --workers process, into DIR\n' +
    '  --workers N          run the jobs in N worker processes (ROLE=worker) beside the server (ROLE=api), and each\n' +
    `                       provider sandbox in a process of its own (default ${workers}${workers === 0 ? ': one process does all, sandboxes in it' : ''})\n` +
    '\nWithout --url the stack is started for the run (node dist-dev/dev/main.js) on a throwaway database: on\n' +
    "DATABASE_URL's server when that is set, else on an embedded PostgreSQL of the run.\n"
  );
}

function readOptions<S extends string, F extends string, O>(definition: BenchDefinition<S, F, O>, argv: string[]): (O & CommonOptions) | 'help' {
  const own = Object.fromEntries([
    ...definition.values.map((name) => [name, { type: 'string' as const }]),
    ...(definition.flags ?? []).map((name) => [name, { type: 'boolean' as const }]),
  ]) as Record<string, { type: 'string' } | { type: 'boolean' }>;
  const { values } = parseArgs({
    args: argv,
    options: {
      ...own,
      'timeout-s': { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      ...(definition.databaseUrl ? { 'database-url': { type: 'string' } } : {}),
      json: { type: 'string' },
      'profile-server': { type: 'string' },
      workers: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const raw: Record<string, string | boolean | undefined> = values;
  const text = (name: string) => raw[name] as string | undefined;
  const url = text('url');
  if (url && !text('token')) throw new Error('--url needs --token (an organization token)');
  if (url && definition.databaseUrl?.required && !text('database-url')) throw new Error(`--url needs --database-url (its database, ${definition.databaseUrl.why})`);
  if (!url && text('token')) throw new Error('--token goes with --url');
  if (!url && text('database-url')) throw new Error('--database-url goes with --url');
  if (url && text('profile-server')) throw new Error('--profile-server works only on the stack the bench starts (no --url)');
  if (url && text('workers')) throw new Error('--workers works only on the stack the bench starts (no --url)');
  const common: CommonOptions = {
    timeoutMs: integerOption('timeout-s', text('timeout-s'), definition.timeoutSeconds, 10) * 1000,
    url,
    token: text('token'),
    databaseUrl: text('database-url'),
    json: text('json'),
    profileServer: text('profile-server'),
    workers: integerOption('workers', text('workers'), definition.defaultWorkers ?? 0, 0),
  };
  return { ...definition.read(raw as { [K in S]?: string } & { [K in F]?: boolean }, common), ...common };
}

/** The machine, for the first lines and --json: the server, PostgreSQL and the clients share its cores. */
function machine() {
  return { node: process.version, cores: cpus().length, cpu: cpus()[0]?.model.trim() ?? 'unknown', platform: `${process.platform}/${process.arch}` };
}

/** os.loadavg() as the benches print it: the 1, 5 and 15 minute figures. */
export const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** The options as --json writes them: a Set as its members; the token and the database URL left out. */
function jsonOptions(options: CommonOptions): Record<string, unknown> {
  const entries: [string, unknown][] = Object.entries({ ...options, token: undefined, databaseUrl: undefined });
  return Object.fromEntries(entries.map(([key, value]) => [key, value instanceof Set ? [...(value as Set<unknown>)] : value]));
}

async function main<S extends string, F extends string, O>(definition: BenchDefinition<S, F, O>): Promise<number> {
  const usage = usageOf(definition);
  let options: O & CommonOptions;
  try {
    const read = readOptions(definition, process.argv.slice(2));
    if (read === 'help') {
      process.stdout.write(usage);
      return 0;
    }
    options = read;
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 64;
  }

  let stack: BenchStack | undefined;
  // Called a minute after an abort at the earliest: `session` is set by then.
  const limits = abortOnLimits(options.timeoutMs, () => {
    session.forceStop?.();
    stack?.forceStop();
  });
  const signal = limits.signal;
  const began = performance.now();
  const host = machine();
  console.log(`bench/${definition.name}`);
  console.log(`  node ${host.node}, ${host.cores} CPU core(s) (${host.cpu}), ${host.platform}`);
  // The server, PostgreSQL and these clients share the cores: other load on the machine shows in the figures.
  console.log(`  load average at start: ${loadAverage()}`);
  const session = definition.start(options, signal);

  let sandbox: AlphaSandboxControl | undefined;
  let previousSandboxConfig: AlphaSandboxConfig | undefined;
  let failed = false;
  try {
    if (options.url) {
      stack = await connectToStack({ url: options.url, token: options.token!, databaseUrl: options.databaseUrl });
      console.log(`  stack: ${stack.baseUrl} (already running; --url)`);
    } else {
      const inspectorPort = definition.inspector?.(options) ? await freePort() : undefined;
      const started = performance.now();
      stack = await startOwnedStack({
        root: path.resolve(__dirname, '../../..'),
        signal,
        profileDir: options.profileServer,
        inspectorPort,
        env: definition.stackEnv?.(options),
        workers: options.workers,
        ...definition.stackShape?.(options),
      });
      console.log(
        `  stack: ${stack.baseUrl} (started for this run in ${((performance.now() - started) / 1000).toFixed(1)} s: node dist-dev/dev/main.js` +
          `${options.workers ? ` as ROLE=api, ${options.workers} worker process(es)` : ''}` +
          `${stack.sandboxPids().length > 0 ? `, the provider sandboxes in processes of their own (alpha at ${stack.alphaUrl})` : ''}` +
          `${stack.statements ? ', its statements counted on the wire (bench/support/pg-count-proxy.ts)' : ''}, ` +
          `a throwaway database${stack.postmasterPid() === undefined ? " on DATABASE_URL's server" : ' on an embedded PostgreSQL'}, throwaway DATA_DIR` +
          `${inspectorPort === undefined ? '' : `, inspector on 127.0.0.1:${inspectorPort}`})`,
      );
    }
    const alpha = createAlphaSandboxControl(stack.alphaUrl);
    sandbox = alpha;
    if (stack.owned) await alpha.reset();
    else previousSandboxConfig = (await alpha.state()).config;
    console.log(`  alpha sandbox: ${JSON.stringify(await alpha.configure(definition.sandbox))}`);
    const owned = stack.owned;
    await session.measure({
      stack,
      sandbox: alpha,
      resetSandbox: async () => {
        if (!owned) return;
        await alpha.reset();
        await alpha.configure(definition.sandbox);
      },
    });
  } catch (error) {
    // A run stopped early is not a failure: its exit code says it stopped.
    if (!signal.aborted) {
      failed = true;
      console.error(`\nbench failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  } finally {
    limits.finished();
    const figures = session.report(stack, limits.reason());
    console.log(`\nload average at end: ${loadAverage()}; took ${((performance.now() - began) / 1000).toFixed(0)} s`);
    if (options.json) {
      writeFileSync(options.json, JSON.stringify({ machine: host, options: jsonOptions(options), ...figures, aborted: limits.reason() }, null, 2));
    }
    const cleanup = performance.now();
    const elapsed = () => `${((performance.now() - cleanup) / 1000).toFixed(1)} s`;
    if (session.close) {
      await session.close().catch((error: unknown) => console.error(`closing the bench's own connections: ${String(error)}`));
    }
    if (previousSandboxConfig && sandbox) await sandbox.configure(previousSandboxConfig).catch(() => undefined);
    if (stack) {
      await stack.stop().catch((error: unknown) => console.error(`stopping the stack: ${String(error)}`));
      if (stack.owned) console.log(`stack stopped, its database and data directory removed (${elapsed()})`);
    }
  }
  return limits.reason() ? 2 : failed ? 1 : 0;
}

/** Runs the bench and exits: 0 done, 1 failed, 2 stopped early (time limit, Ctrl-C), 64 bad options. */
export function runBench<S extends string, F extends string, O>(definition: BenchDefinition<S, F, O>): void {
  main(definition).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
