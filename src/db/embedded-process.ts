import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** Running PostgreSQL's tools and watching its processes, for the embedded PostgreSQL (embedded.ts). */

/** The user a child runs as: the `postgres` user when we are root. */
export interface RunAs {
  uid: number;
  gid: number;
}

/** Of each output stream of a child, the last this many characters are kept: the end is what explains a failure. */
const OUTPUT_LIMIT = 16 * 1024;
/** After a child exits, how long its output pipes may stay open (a grandchild holding them) before we stop reading. */
const PIPE_GRACE_MS = 1000;

export function lastLines(text: string, count: number): string {
  return text.trim().split('\n').slice(-count).map((line) => line.trim()).filter(Boolean).join(' | ');
}

/**
 * Runs a program to its end and resolves with its stdout; every failure rejects with an Error naming the program and
 * the end of its output, never an unhandled 'error' event. Each child has its own process group, so a terminal's
 * Ctrl-C does not kill a pg_ctl halfway through a start or a stop. It runs in `/`, which `postgres` can always enter,
 * with LC_ALL=C for predictable messages, and without PG* variables, which would change what pg_ctl and postgres do.
 */
export function run(file: string, args: string[], runAs?: RunAs): Promise<string> {
  const program = path.basename(file);
  const env: NodeJS.ProcessEnv = { LC_ALL: 'C' };
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('PG') && name !== 'LC_ALL') env[name] = value;
  }
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const settle = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(graceTimer);
      if (error) reject(error);
      else resolve(stdout);
    };
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(file, args, {
        cwd: '/',
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
      });
    } catch (error) {
      settle(new Error(`Could not run ${program}: ${(error as Error).message}`));
      return;
    }
    child.stdout.on('data', (chunk: Buffer) => {
      stdout = (stdout + chunk.toString()).slice(-OUTPUT_LIMIT);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-OUTPUT_LIMIT);
    });
    child.once('error', (error) => settle(new Error(`Could not run ${program}: ${error.message}`)));
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (code === 0) return settle(undefined);
      const output = lastLines(`${stdout}\n${stderr}`, 8);
      settle(new Error(`${program} ${args[0] ?? ''} failed (${signal ?? `exit code ${code}`})${output ? `: ${output}` : ''}`));
    };
    child.once('exit', (code, signal) => {
      graceTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code, signal);
      }, PIPE_GRACE_MS);
    });
    // 'close' comes after 'exit' once the output pipes are drained: the whole output is in.
    child.once('close', finish);
  });
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed postmaster nobody has reaped yet (a zombie) still answers signal 0 on Linux, but serves nothing.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** The pid on the first line of a pid file, if that process is alive. */
export async function livePid(file: string): Promise<number | undefined> {
  // No pid file means no server: an expected absence.
  const text = await fs.readFile(file, 'utf8').catch(() => undefined); // no pid file: no live server
  if (text === undefined) return undefined;
  const pid = Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && isProcessAlive(pid) ? pid : undefined;
}
