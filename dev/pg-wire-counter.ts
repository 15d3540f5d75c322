import net from 'node:net';

/**
 * A PostgreSQL protocol proxy that counts what its clients send: statements (simple Query, extended Execute), round
 * trips (Sync, simple Query), NOTIFYs, transactions begun, and the statements' shapes. Point a process's
 * DATABASE_URL at it to count on the wire what a unit of work costs, pg-boss's own connections included.
 * Ported from ../shared/tools/pg-count-proxy.mjs, typed, for the tests and benches of this project.
 */

export interface WireCounts {
  statements: number;
  roundTrips: number;
  notifies: number;
  transactions: number;
  /** The commonest statement shapes (parameters as `?`), most frequent first. */
  shapes: [string, number][];
}

export interface WireCounter {
  port: number;
  /** `url` (a postgres:// URL of the target) with its host and port turned to the proxy's. */
  urlFor(url: string): string;
  reset(): void;
  snapshot(top?: number): WireCounts;
  close(): Promise<void>;
}

const shapeOf = (sql: string): string =>
  sql.replace(/\s+/g, ' ').replace(/\$\d+/g, '?').replace(/'[^']*'/g, "'…'").trim().slice(0, 120);

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

export async function startWireCounter(target: { host: string; port: number }): Promise<WireCounter> {
  let statements = 0;
  let roundTrips = 0;
  let notifies = 0;
  let transactions = 0;
  let shapes = new Map<string, number>();
  const reset = (): void => {
    statements = roundTrips = notifies = transactions = 0;
    shapes = new Map();
  };
  const note = (sql: string): void => {
    statements += 1;
    const shape = shapeOf(sql);
    shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
    if (/notify/i.test(sql)) notifies += 1;
    if (/^\s*(begin|start transaction)/i.test(sql)) transactions += 1;
  };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    let buffer = Buffer.alloc(0);
    let started = false;
    const named = new Map<string, string>();
    let current = '';
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      buffer = Buffer.concat([buffer, chunk]);
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
          roundTrips += 1;
          note(body.toString('utf8', 0, body.length - 1));
        } else if (type === 'P') {
          const nameEnd = body.indexOf(0);
          const name = body.toString('utf8', 0, nameEnd);
          current = body.toString('utf8', nameEnd + 1, body.indexOf(0, nameEnd + 1));
          if (name) named.set(name, current);
        } else if (type === 'B') {
          const portalEnd = body.indexOf(0);
          const statement = body.toString('utf8', portalEnd + 1, body.indexOf(0, portalEnd + 1));
          if (statement) current = named.get(statement) ?? current;
        } else if (type === 'E') note(current);
        else if (type === 'S') roundTrips += 1;
      }
    });
    upstream.on('data', (data: Buffer) => client.write(data));
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) socket.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    urlFor(url) {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    reset,
    snapshot: (top = 15) => ({
      statements,
      roundTrips,
      notifies,
      transactions,
      shapes: [...shapes.entries()].sort((a, b) => b[1] - a[1]).slice(0, top),
    }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
