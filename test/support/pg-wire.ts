import type { ConnectionInspector } from '../../dev/tcp-proxy';

/** The protocol version 3.0 startup message's code (an SSLRequest or a cancel request has another). */
const PROTOCOL_3 = 196608;

/** A statement that writes rows (the service's writes are one `insert`, or a `with` of data-modifying parts). */
const WRITES = /\binsert\s+into\b|\bupdate\s+"?\w+"?\s+set\b|\bdelete\s+from\b/i;

/**
 * Reads the PostgreSQL protocol passing through a TcpProxy connection (no TLS, as the service speaks to a local
 * database): the session's application_name from its startup message, its statements, and the server's messages one
 * by one. Armed, it drops the first matching session's connection right after the server committed a transaction,
 * before its client can read the reply that says so: a commit whose answer was lost (a network cut, a failover at
 * that moment). That reply is a COMMIT's, or a write's run outside a transaction block (its own transaction,
 * committed as the statement ends: docs/write-path.md, "One change, one statement").
 */
export class LostCommitReplies {
  private armedFor: ((applicationName: string) => boolean) | undefined;
  dropped = 0;

  /** The next commit's reply to a session whose application_name matches is lost, with its connection. */
  arm(match: (applicationName: string) => boolean): void {
    this.armedFor = match;
  }

  readonly inspector = (): ConnectionInspector => {
    let applicationName: string | undefined;
    let startup = Buffer.alloc(0);
    let fromClient = Buffer.alloc(0);
    let pending = Buffer.alloc(0);
    // Per statement sent, in order (a simple query, or an extended one at its Sync): whether it writes. The server
    // answers them in the same order, each ending with ReadyForQuery.
    const sent: boolean[] = [];
    let parsed = '';
    // The session's transaction status at its last ReadyForQuery: 'I' idle (outside a transaction block).
    let status = 'I';
    const statementsFrom = (bytes: Buffer) => {
      fromClient = Buffer.concat([fromClient, bytes]);
      while (fromClient.length >= 5 && fromClient.length >= 1 + fromClient.readInt32BE(1)) {
        const type = String.fromCharCode(fromClient[0]!);
        const end = 1 + fromClient.readInt32BE(1);
        const body = fromClient.subarray(5, end);
        fromClient = fromClient.subarray(end);
        if (type === 'Q') sent.push(WRITES.test(body.toString('utf8')));
        else if (type === 'P') parsed = body.toString('utf8').split('\0')[1] ?? '';
        else if (type === 'S') sent.push(WRITES.test(parsed));
      }
    };
    return {
      fromClient: (chunk) => {
        if (applicationName !== undefined) {
          statementsFrom(chunk);
          return;
        }
        startup = Buffer.concat([startup, chunk]);
        while (applicationName === undefined && startup.length >= 8 && startup.length >= startup.readInt32BE(0)) {
          const length = startup.readInt32BE(0);
          if (startup.readInt32BE(4) === PROTOCOL_3) {
            const fields = startup.subarray(8, length).toString('utf8').split('\0');
            const at = fields.indexOf('application_name');
            applicationName = at >= 0 && at % 2 === 0 ? (fields[at + 1] ?? '') : '';
          }
          startup = startup.subarray(length);
        }
        if (applicationName !== undefined && startup.length > 0) statementsFrom(startup);
      },
      fromServer: (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        // Messages: a type byte, then their length (itself included) as an int32.
        while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
          const type = String.fromCharCode(pending[0]!);
          const end = 1 + pending.readInt32BE(1);
          const tag = type === 'C' ? pending.subarray(5, end - 1).toString('utf8') : '';
          if (type === 'Z') {
            status = String.fromCharCode(pending[5]!);
            sent.shift();
          }
          pending = pending.subarray(end);
          const commits = tag === 'COMMIT' || (type === 'C' && status === 'I' && sent[0] === true);
          if (commits && applicationName !== undefined && this.armedFor?.(applicationName)) {
            this.armedFor = undefined;
            this.dropped += 1;
            return false;
          }
        }
        return true;
      },
    };
  };
}
