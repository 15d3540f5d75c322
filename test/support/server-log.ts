import { Writable } from 'node:stream';

/** One line of the server's log, parsed. */
export interface LogLine {
  level: number;
  msg?: string;
  err?: { type?: string; message?: string; stack?: string };
  [key: string]: unknown;
}

/** pino's error level: what an operator is paged for. */
export const ERROR_LEVEL = 50;

/** A line as a test failure shows it: its message and its error. */
export const describeLine = (line: LogLine): string => `${line.msg ?? ''}${line.err ? ` (${line.err.type}: ${line.err.message})` : ''}`;

/**
 * The server's log, kept by the test: give `destination` to startTestStack's `log`; `lines` holds every line
 * written so far, parsed.
 */
export function serverLog(): { destination: Writable; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { destination, lines };
}
