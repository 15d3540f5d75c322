import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

/** Environment for a subprocess of ours: quiet logs, and nothing of the test runner's database settings. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', NODE_ENV: 'test' };
  // Where the runner's own shell keeps its data is not the subprocess's business.
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  return { ...env, ...extra };
}

export interface ProcessOptions {
  /** The project directory to run in (a copy of this one, for layout tests); default this checkout. */
  root?: string;
  /**
   * development: what `npm start` runs (dist-dev/dev/main.js, the provider sandboxes mounted as SANDBOX says);
   * production: the product alone (dist/src/main.js). Default development.
   */
  entry?: 'development' | 'production';
  /** In a process group of its own, so a test can signal the group as a terminal's Ctrl-C does. */
  detached?: boolean;
}

/** Runs the built CLI (dist/, built by the global setup) and collects its output. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  options: ProcessOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const root = options.root ?? ROOT;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'dist/src/cli/main.js'), ...args], { cwd: root, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The lines of a process's output that say something went wrong: a log line (pino's JSON) at error or fatal level,
 * and any other line with a stack frame or an error's name. A log line is judged by its level only: a warning may
 * carry the error it is about (a provider's refusal of a job), and is not an error of the process.
 */
export function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => {
    if (line.startsWith('{"level":')) return /^\{"level":(50|60)\b/.test(line);
    return /^\s+at /.test(line) || /Unhandled|ERR_|Error:/.test(line);
  });
}

export interface ServerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves when the output matches, rejects if the process exits first or the time runs out. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited(): Promise<number | null>;
}

/** The script of an entry, relative to the project's root (both are built by the global setup). */
export function entryScript(entry: ProcessOptions['entry'] = 'development'): string {
  return entry === 'production' ? 'dist/src/main.js' : 'dist-dev/dev/main.js';
}

/** Starts the service's process, as `npm start` (or, with entry: 'production', the production start) does after building. */
export function startServerProcess(env: Record<string, string>, options: ProcessOptions = {}): ServerProcess {
  const root = options.root ?? ROOT;
  const child = spawn(process.execPath, [path.join(root, entryScript(options.entry))], {
    cwd: root,
    env: childEnv(env),
    detached: options.detached ?? false,
  });
  return watchedProcess(child);
}

/** Starts a CLI command that runs until stopped (`webhooks listen`), from the build runCli runs, its output watched. */
export function startCliProcess(args: string[], env: Record<string, string>): ServerProcess {
  return watchedProcess(spawn(process.execPath, [path.join(ROOT, 'dist/src/cli/main.js'), ...args], { cwd: ROOT, env: childEnv(env) }));
}

/** Starts a provider sandbox on its own, from the build (dist-dev/sandboxes/<name>/main.js), as the benchmarks do. */
export function startSandboxProcess(name: 'alpha' | 'beta', env: Record<string, string>): ServerProcess {
  const script = path.join(ROOT, `dist-dev/sandboxes/${name}/main.js`);
  return watchedProcess(spawn(process.execPath, [script], { cwd: ROOT, env: childEnv(env) }));
}

/** A child's output (stdout and stderr together), waited on by pattern. */
function watchedProcess(child: ChildProcessWithoutNullStreams): ServerProcess {
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    listeners.forEach((listener) => listener());
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited: () => exit,
    waitFor(pattern, timeoutMs = 30000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (match) {
            cleanup();
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`Timed out waiting for ${pattern}; output so far:\n${output}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        void exit.then((code) => {
          if (listeners.has(check)) {
            cleanup();
            reject(new Error(`Process exited (${code}) before ${pattern}; output:\n${output}`));
          }
        });
        listeners.add(check);
        check();
      });
    },
  };
}
