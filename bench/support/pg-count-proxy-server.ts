/**
 * A PostgreSQL protocol proxy counting what its clients send, in a process of its own (forked by
 * bench/support/pg-count-proxy.ts): statements executed (simple Query + extended Execute), round trips (Sync +
 * simple Query), NOTIFYs, BEGINs, and statements by shape. Taken from ../shared/tools/pg-count-proxy.mjs (the
 * repository cannot import a file outside it, and the build puts bench/ one level deeper), typed, with the statement
 * of a Bind to the unnamed statement kept apart from named ones. Its own process keeps the bench's event loop off
 * every round trip of both pipelines.
 * Usage: fork it with an IPC channel and the target `host:port`; it answers `{type:'listening', port}`, then a
 * `{type:'counts'}` for each `{type:'counts'}` asked, and exits on `{type:'stop'}` or when its parent goes.
 */
import net from 'node:net';

export interface WireCounts {
  statements: number;
  roundTrips: number;
  notifies: number;
  begins: number;
  /** Statements by shape (whitespace folded, `$n` -> `?`, string literals -> '…'). */
  shapes: Record<string, number>;
}

export type ProxyCommand = { type: 'counts' } | { type: 'stop' };
export type ProxyReply = { type: 'listening'; port: number } | ({ type: 'counts' } & WireCounts);

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

// Numbers outside names as `?` too: the ORM inlines its values (`"version" = 3`). Long enough to keep statements
// apart that differ only in their column lists (the report abbreviates them).
const shapeOf = (sql: string) =>
  sql
    .replace(/\s+/g, ' ')
    .replace(/\$\d+/g, '?')
    .replace(/'[^']*'/g, "'…'")
    .replace(/(?<![\w".$])\d+(?:\.\d+)?(?![\w"])/g, '?')
    .trim()
    .slice(0, 2000);

function main(): void {
  const [host, port] = (process.argv[2] ?? '127.0.0.1:5432').split(':');
  const counts: WireCounts = { statements: 0, roundTrips: 0, notifies: 0, begins: 0, shapes: {} };
  const note = (sql: string) => {
    counts.statements += 1;
    const shape = shapeOf(sql);
    counts.shapes[shape] = (counts.shapes[shape] ?? 0) + 1;
    if (/\bnotify\b|pg_notify\(/i.test(sql)) counts.notifies += 1;
    if (/^\s*(begin|start transaction)\b/i.test(sql)) counts.begins += 1;
  };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), host);
    sockets.add(client);
    sockets.add(upstream);
    let buffer: Buffer = Buffer.alloc(0);
    let started = false;
    const named = new Map<string, string>();
    let unnamed = '';
    let current = '';
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          // Startup, SSLRequest or GSSENCRequest: length-prefixed, no type byte.
          if (buffer.length < 8) break;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) break;
          const code = buffer.readInt32BE(4);
          buffer = buffer.subarray(length);
          if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) started = true;
          continue;
        }
        if (buffer.length < 5) break;
        const type = String.fromCharCode(buffer[0]!);
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) break;
        const body = buffer.subarray(5, 1 + length);
        buffer = buffer.subarray(1 + length);
        if (type === 'Q') {
          counts.roundTrips += 1;
          note(body.toString('utf8', 0, body.length - 1));
        } else if (type === 'P') {
          const nameEnd = body.indexOf(0);
          const name = body.toString('utf8', 0, nameEnd);
          const sql = body.toString('utf8', nameEnd + 1, body.indexOf(0, nameEnd + 1));
          if (name) named.set(name, sql);
          else unnamed = sql;
        } else if (type === 'B') {
          const portalEnd = body.indexOf(0);
          const statement = body.toString('utf8', portalEnd + 1, body.indexOf(0, portalEnd + 1));
          current = statement ? (named.get(statement) ?? '') : unnamed;
        } else if (type === 'E') note(current);
        else if (type === 'S') counts.roundTrips += 1;
      }
    });
    upstream.on('data', (data: Buffer) => client.write(data));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      socket.on('error', end);
      socket.on('close', end);
    }
  });
  const send = (reply: ProxyReply) => process.send?.(reply);
  process.on('message', (command: ProxyCommand) => {
    if (command.type === 'counts') send({ type: 'counts', ...counts, shapes: { ...counts.shapes } });
    else {
      for (const socket of sockets) socket.destroy();
      server.close(() => process.exit(0));
    }
  });
  // The parent gone (however it ended): nothing is left listening.
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => send({ type: 'listening', port: (server.address() as net.AddressInfo).port }));
}

if (require.main === module) main();
