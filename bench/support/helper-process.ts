import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** A baseline server a bench forked, up once it printed `listening <url>`. */
export interface HelperProcess {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
  kill(): void;
}

/**
 * Forks `script` (a baseline server) in its own process, so it does not share an event loop with the load
 * generator (as the service does not), and waits for its `listening <url>` line. Forked with an IPC channel and
 * bench/support/exit-with-parent.js preloaded: it exits when this process goes. `what` names it in errors.
 */
export function forkListening(script: string, args: string[], what: string, signal: AbortSignal, startTimeoutMs = 15_000): Promise<HelperProcess> {
  const child: ChildProcess = fork(script, args, {
    execArgv: ['--require', path.join(__dirname, 'exit-with-parent.js')],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(kill, 5_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    let output = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      kill();
      reject(new Error(`${what} ${why}${output ? `; its output: ${output.slice(0, 500)}` : ''}`));
    };
    const onAbort = () => fail('start was aborted');
    const onExit = (code: number | null, sig: NodeJS.Signals | null) => fail(`exited (${code ?? sig}) before listening`);
    const timer = setTimeout(() => fail(`did not listen within ${startTimeoutMs / 1000} s`), startTimeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    child.once('exit', onExit);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        child.off('exit', onExit);
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve({ url: match[1]!, pid: child.pid, stop, kill });
      }
    };
    child.stdout!.on('data', onData);
  });
}
