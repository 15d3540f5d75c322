/**
 * The counting proxy (dev/pg-wire-counter.ts) in a process of its own, forked by bench/support/pg-count-proxy.ts:
 * its own process keeps the bench's event loop off every round trip of both pipelines.
 * Usage: fork it with an IPC channel and the target `host:port`; it answers `{type:'listening', port}`, then a
 * `{type:'counts'}` for each `{type:'counts'}` asked, and exits on `{type:'stop'}` or when its parent goes.
 */
import { startWireCounter, type WireCounts } from '../../dev/pg-wire-counter';

export type { WireCounts } from '../../dev/pg-wire-counter';

export type ProxyCommand = { type: 'counts' } | { type: 'stop' };
export type ProxyReply = { type: 'listening'; port: number } | ({ type: 'counts' } & WireCounts);

async function main(): Promise<void> {
  const [host, port] = (process.argv[2] ?? '127.0.0.1:5432').split(':');
  const counter = await startWireCounter({ host: host!, port: Number(port) });
  const send = (reply: ProxyReply) => process.send?.(reply);
  process.on('message', (command: ProxyCommand) => {
    if (command.type === 'counts') send({ type: 'counts', ...counter.counts() });
    else void counter.close().then(() => process.exit(0));
  });
  // The parent gone (however it ended): nothing is left listening.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'listening', port: counter.port });
}

if (require.main === module) void main();
