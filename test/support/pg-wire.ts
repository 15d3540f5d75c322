import type { ConnectionInspector } from '../../dev/tcp-proxy';

/** The protocol version 3.0 startup message's code (an SSLRequest or a cancel request has another). */
const PROTOCOL_3 = 196608;

/**
 * Reads the PostgreSQL protocol passing through a TcpProxy connection (no TLS, as the service speaks to a local
 * database): the session's application_name from its startup message, and the server's messages one by one. Armed,
 * it drops the first matching session's connection right after the server committed a transaction, before its
 * client can read the COMMIT's reply: a commit whose answer was lost (a network cut, a failover at that moment).
 */
export class LostCommitReplies {
  private armedFor: ((applicationName: string) => boolean) | undefined;
  dropped = 0;

  /** The next COMMIT reply to a session whose application_name matches is lost, with its connection. */
  arm(match: (applicationName: string) => boolean): void {
    this.armedFor = match;
  }

  readonly inspector = (): ConnectionInspector => {
    let applicationName: string | undefined;
    let startup = Buffer.alloc(0);
    let pending = Buffer.alloc(0);
    return {
      fromClient: (chunk) => {
        if (applicationName !== undefined) return;
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
      },
      fromServer: (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        // Messages: a type byte, then their length (itself included) as an int32.
        while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
          const type = String.fromCharCode(pending[0]!);
          const end = 1 + pending.readInt32BE(1);
          const tag = type === 'C' ? pending.subarray(5, end - 1).toString('utf8') : '';
          pending = pending.subarray(end);
          if (tag === 'COMMIT' && applicationName !== undefined && this.armedFor?.(applicationName)) {
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
