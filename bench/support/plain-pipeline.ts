import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { forkListening, type HelperProcess } from './helper-process';
import { startCountingProxy, type CountingProxy } from './pg-count-proxy';
import type { BenchStack } from './stack';

/**
 * The parent's side of the plain pipeline (bench/support/plain-pipeline-server.ts): the server in its own process,
 * reaching the stack's PostgreSQL through a counting proxy of its own, calling the stack's alpha sandbox process;
 * and its subscriber, one `GET /events` stream whose lines (one per NOTIFY) go to a handler with their arrival.
 */
export interface PlainPipeline {
  url: string;
  pid: number | undefined;
  statements: CountingProxy;
  /** The stack as the bench's clients see it, with the plain server's URL: createPost and patchLocation take it. */
  asStack(stack: BenchStack): BenchStack;
  /** Each change's event: the parsed line, performance.now() and Date.now() at its arrival. */
  subscribe(handler: (event: Record<string, unknown>, at: number, wallClock: number) => void): Promise<void>;
  stop(): Promise<void>;
  kill(): void;
}

export const PLAIN_USAGE = `  --plain-batch N      jobs a worker loop of the plain pipeline takes at once (default 8, as pg-boss's batch)
  --plain-loops N      worker loops per job kind of the plain pipeline (default 2)
`;

export async function startPlainPipeline(stack: BenchStack, options: { batch: number; loops: number; signal: AbortSignal }): Promise<PlainPipeline> {
  if (!stack.databaseUrl || !stack.owned) throw new Error('the plain pipeline needs the stack the bench starts (no --url)');
  const statements = await startCountingProxy(stack.databaseUrl);
  let server: HelperProcess;
  try {
    server = await forkListening(
      path.join(__dirname, 'plain-pipeline-server.js'),
      [statements.url(stack.databaseUrl), stack.alphaUrl, String(options.batch), String(options.loops)],
      'the plain pipeline',
      options.signal,
      60_000,
    );
  } catch (error) {
    statements.kill();
    throw error;
  }
  let events: http.ClientRequest | undefined;
  return {
    url: server.url,
    pid: server.pid,
    statements,
    asStack: (of) => ({ ...of, baseUrl: server.url }),
    subscribe: (handler) =>
      new Promise((resolve, reject) => {
        events = http.get(`${server.url}/events`, (response) => {
          if (response.statusCode !== 200) return reject(new Error(`GET /events of the plain pipeline answered ${response.statusCode}`));
          let rest = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            const at = performance.now();
            const wallClock = Date.now();
            const lines = (rest + chunk).split('\n');
            rest = lines.pop() ?? '';
            for (const line of lines) if (line) handler(JSON.parse(line) as Record<string, unknown>, at, wallClock);
          });
          resolve();
        });
        events.on('error', (error) => reject(error));
      }),
    async stop() {
      events?.destroy();
      await server.stop();
      await statements.stop();
    },
    kill() {
      events?.destroy();
      server.kill();
      statements.kill();
    },
  };
}
