import { TcpProxy, type ConnectionInspector } from './tcp-proxy';

/**
 * A PostgreSQL protocol proxy (dev/tcp-proxy.ts, reading each connection) that counts what its clients send: statements (simple Query, extended Execute), round
 * trips (Sync, simple Query), NOTIFYs, transactions begun, and the statements' shapes. Point a process's
 * DATABASE_URL at it to count on the wire what a unit of work costs, pg-boss's own connections included.
 * Ported from ../shared/tools/pg-count-proxy.mjs, typed, for the tests and benches of this project (the benches
 * run it in a process of its own: bench/support/pg-count-proxy-server.ts).
 */

export interface WireCounts {
  statements: number;
  roundTrips: number;
  notifies: number;
  /** Transactions begun (BEGIN, START TRANSACTION). */
  begins: number;
  /** Statements by shape (whitespace folded, `$n` and numbers -> `?`, string literals -> '…'). */
  shapes: Record<string, number>;
}

export interface WireCounter {
  port: number;
  /** `url` (a postgres:// URL of the target) with its host and port turned to the proxy's. */
  urlFor(url: string): string;
  reset(): void;
  counts(): WireCounts;
  close(): Promise<void>;
}

// Numbers outside names as `?` too: the ORM inlines its values (`"version" = 3`). Long enough to keep statements
// apart that differ only in their column lists.
const shapeOf = (sql: string): string =>
  sql
    .replace(/\s+/g, ' ')
    .replace(/\$\d+/g, '?')
    .replace(/'[^']*'/g, "'…'")
    .replace(/(?<![\w".$])\d+(?:\.\d+)?(?![\w"])/g, '?')
    .trim()
    .slice(0, 2000);

/** What the counter reads of one statement's text. */
interface Statement {
  shape: string;
  notifies: boolean;
  begins: boolean;
}

/** Statement texts whose reading is kept (`startWireCounter`). */
const KNOWN_TEXTS = 2000;

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Reads one connection's client messages (dev/tcp-proxy.ts) and notes each statement in `note`. */
function statementReader(counts: () => WireCounts, note: (sql: string) => void): ConnectionInspector {
  let buffer: Buffer = Buffer.alloc(0);
  let started = false;
  const named = new Map<string, string>();
  // A Bind names its statement; the unnamed one is the last unnamed Parse, never a named one.
  let unnamed = '';
  let current = '';
  return {
    fromServer: () => true,
    fromClient(chunk) {
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
          counts().roundTrips += 1;
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
        else if (type === 'S') counts().roundTrips += 1;
      }
    },
  };
}

/** A TcpProxy (dev/tcp-proxy.ts) in front of `target` that counts what its clients send. */
export async function startWireCounter(target: { host: string; port: number }): Promise<WireCounter> {
  let counts: WireCounts;
  const reset = (): void => {
    counts = { statements: 0, roundTrips: 0, notifies: 0, begins: 0, shapes: {} };
  };
  reset();
  // A prepared statement's text comes again at every call: what is read of it is read once. Bounded, as texts with
  // their values written in (the ORM's) never come again.
  const known = new Map<string, Statement>();
  const note = (sql: string): void => {
    let statement = known.get(sql);
    if (!statement) {
      statement = { shape: shapeOf(sql), notifies: /\bnotify\b|pg_notify\(/i.test(sql), begins: /^\s*(begin|start transaction)\b/i.test(sql) };
      if (known.size >= KNOWN_TEXTS) known.clear();
      known.set(sql, statement);
    }
    counts.statements += 1;
    counts.shapes[statement.shape] = (counts.shapes[statement.shape] ?? 0) + 1;
    if (statement.notifies) counts.notifies += 1;
    if (statement.begins) counts.begins += 1;
  };
  const proxy = new TcpProxy(target, { inspect: () => statementReader(() => counts, note) });
  const port = await proxy.listen();
  return {
    port,
    urlFor(url) {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    reset,
    counts: () => ({ ...counts, shapes: { ...counts.shapes } }),
    close: () => proxy.close(),
  };
}
