import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ProxyCommand, ProxyReply, WireCounts } from './pg-count-proxy-server';

export type { WireCounts } from './pg-count-proxy-server';

/**
 * The parent's side of the counting proxy (bench/support/pg-count-proxy-server.ts): a pipeline whose database URL
 * goes through `url()` is counted on the wire; `counts()` now and `countsSince` a reading before give a window's
 * statements, round trips, NOTIFYs, BEGINs and statement shapes.
 */
export interface CountingProxy {
  pid: number | undefined;
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  url(databaseUrl: string): string;
  counts(): Promise<WireCounts>;
  stop(): Promise<void>;
  kill(): void;
}

/** Starts a proxy in front of `databaseUrl`'s server. */
export async function startCountingProxy(databaseUrl: string): Promise<CountingProxy> {
  const target = new URL(databaseUrl);
  const child: ChildProcess = fork(path.join(__dirname, 'pg-count-proxy-server.js'), [`${target.hostname}:${target.port || '5432'}`], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting: ((reply: ProxyReply) => boolean)[] = [];
  let exited = false;
  child.on('message', (reply: ProxyReply) => {
    const index = waiting.findIndex((accept) => accept(reply));
    if (index >= 0) waiting.splice(index, 1);
  });
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void gone.then(() => (exited = true));
  const expect = <T extends ProxyReply['type']>(type: T): Promise<Extract<ProxyReply, { type: T }>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the counting proxy did not answer ${type} within 10 s`)), 10_000);
      waiting.push((reply) => {
        if (reply.type !== type) return false;
        clearTimeout(timer);
        resolve(reply as Extract<ProxyReply, { type: T }>);
        return true;
      });
    });
  const command = (message: ProxyCommand) => {
    if (!exited && child.connected) child.send(message);
  };
  const kill = () => {
    if (!exited) child.kill('SIGKILL');
  };
  try {
    const { port } = await expect('listening');
    return {
      pid: child.pid,
      url(url) {
        const proxied = new URL(url);
        proxied.hostname = '127.0.0.1';
        proxied.port = String(port);
        return proxied.toString();
      },
      async counts() {
        const answer = expect('counts');
        command({ type: 'counts' });
        const { type: _type, ...counts } = await answer;
        return counts;
      },
      async stop() {
        command({ type: 'stop' });
        const timer = setTimeout(kill, 5_000);
        await gone;
        clearTimeout(timer);
      },
      kill,
    };
  } catch (error) {
    kill();
    throw error;
  }
}

/** What was sent between two readings of one proxy. */
export function countsSince(before: WireCounts, after: WireCounts): WireCounts {
  const shapes: Record<string, number> = {};
  for (const [shape, count] of Object.entries(after.shapes)) {
    const spent = count - (before.shapes[shape] ?? 0);
    if (spent > 0) shapes[shape] = spent;
  }
  return {
    statements: after.statements - before.statements,
    roundTrips: after.roundTrips - before.roundTrips,
    notifies: after.notifies - before.notifies,
    begins: after.begins - before.begins,
    shapes,
  };
}

/** The `top` commonest statement shapes of a window, commonest first. */
export function topShapes(counts: WireCounts, top = 15): [string, number][] {
  return Object.entries(counts.shapes)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
}
