import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { processCpuSeconds } from './cpu';

/**
 * `--load N`: the machine made busy while a bench measures, by N sibling processes that each keep one core busy
 * (bench/support/cpu-burner.ts). They compete for the cores with the service, PostgreSQL, the plain baseline's server
 * and the benchmark's clients alike, so a ratio against the plain broadcast of the same run shows what a busy machine
 * does to the service beyond what it does to any server. The burners run from the first measured run to the last
 * (interleaved service and plain runs both loaded), not during the set-up and the memory readings.
 */
export interface CpuLoad {
  processes: number;
  /** CPU seconds the burners used so far (undefined without /proc). */
  cpuSeconds(): number | undefined;
  stop(): Promise<void>;
}

/** Usage line of the option, shared by the benches that take it. */
export const LOAD_USAGE =
  '  --load N             N sibling processes each keeping one core busy during the measured runs (default 0):\n' +
  '                       the figures of a busy machine, against the plain broadcast under the same load\n';

export function startCpuLoad(processes: number): CpuLoad {
  const children: ChildProcess[] = [];
  for (let i = 0; i < processes; i++) {
    children.push(
      fork(path.join(__dirname, 'cpu-burner.js'), [], {
        // Exits with the benchmark, however it ends (its IPC channel closes).
        execArgv: ['--require', path.join(__dirname, 'exit-with-parent.js')],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
  }
  return {
    processes,
    cpuSeconds: () => {
      let total = 0;
      for (const child of children) {
        const seconds = processCpuSeconds(child.pid);
        if (seconds === undefined) return undefined;
        total += seconds;
      }
      return total;
    },
    stop: async () => {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGKILL');
            }),
        ),
      );
    },
  };
}
