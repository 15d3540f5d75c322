import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU seconds used by processes, read from /proc (Linux). On 2 cores the server, PostgreSQL and the benchmark's
 * own clients share the machine: the split tells which of them the time went to. Undefined where /proc is absent.
 */

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux the project targets.

interface ProcStat {
  ppid: number;
  /** utime + stime of the process itself. */
  own: number;
  /** cutime + cstime: children that exited and were waited for (PostgreSQL's finished backends). */
  reaped: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces: fields are counted after its closing parenthesis.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const num = (field: number) => Number(fields[field - 3]);
    return { ppid: num(4), own: num(14) + num(15), reaped: num(16) + num(17) };
  } catch {
    return undefined;
  }
}

/** CPU seconds of one process (threads included). */
export function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  const stat = readStat(pid);
  return stat ? stat.own / TICKS_PER_SECOND : undefined;
}

/** CPU seconds of a process and all its live and reaped children: the postmaster and its backends. */
export function processTreeCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  const root = readStat(pid);
  if (!root) return undefined;
  let ticks = root.own + root.reaped;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.ppid === pid) ticks += stat.own;
  }
  return ticks / TICKS_PER_SECOND;
}

/** CPU seconds of this process (the benchmark's HTTP and WebSocket clients). */
export function selfCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

/** CPU seconds of the processes a measurement splits its time between. */
export interface CpuReading {
  /** The serving processes: the service (its API process and its worker processes, when apart), or a baseline's server. */
  server: number | undefined;
  /** PostgreSQL: its postmaster and backends (undefined when its pid is unknown). */
  postgres: number | undefined;
  /** This process: the benchmark's clients. */
  bench: number;
  /** The provider sandboxes, when they run in processes of their own (`--workers N`); else inside `server`. */
  sandboxes?: number;
}

/** CPU seconds of several processes together; undefined when any of them is unknown. */
function processesCpuSeconds(pids: number | readonly number[] | undefined): number | undefined {
  if (pids === undefined || typeof pids === 'number') return processCpuSeconds(pids);
  let total = 0;
  for (const pid of pids) {
    const seconds = processCpuSeconds(pid);
    if (seconds === undefined) return undefined;
    total += seconds;
  }
  return total;
}

export function cpuNow(serverPids: number | readonly number[] | undefined, postmasterPid: number | undefined, sandboxPids?: readonly number[]): CpuReading {
  const reading: CpuReading = { server: processesCpuSeconds(serverPids), postgres: processTreeCpuSeconds(postmasterPid), bench: selfCpuSeconds() };
  if (sandboxPids?.length) reading.sandboxes = processesCpuSeconds(sandboxPids);
  return reading;
}

/** The CPU seconds spent between two readings. */
export function cpuSince(before: CpuReading, after: CpuReading): CpuReading {
  const diff = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a - b);
  const spent: CpuReading = { server: diff(after.server, before.server), postgres: diff(after.postgres, before.postgres), bench: after.bench - before.bench };
  if (before.sandboxes !== undefined || after.sandboxes !== undefined) spent.sandboxes = diff(after.sandboxes, before.sandboxes);
  return spent;
}

/** A stack's CPU now: its service processes, its PostgreSQL, this process, and its sandboxes when apart. */
export function stackCpuNow(stack: { servicePids(): number[]; serverPid: number | undefined; postmasterPid(): number | undefined; sandboxPids(): number[] }): CpuReading {
  const service = stack.servicePids();
  return cpuNow(service.length > 0 ? service : stack.serverPid, stack.postmasterPid(), stack.sandboxPids());
}

/** `server/pg/bench` CPU seconds, and `/sandboxes` when they ran apart. */
export function cpuSplit(cpu: CpuReading, format: (seconds: number | undefined) => string): string {
  // Not map(format): map's index would land in a formatter's digits parameter.
  const parts = [cpu.server, cpu.postgres, cpu.bench].map((seconds) => format(seconds));
  if (cpu.sandboxes !== undefined) parts.push(format(cpu.sandboxes));
  return parts.join('/');
}
