import { types } from 'node:util';
import pino, { type DestinationStream, type LoggerOptions } from 'pino';
import pinoPretty from 'pino-pretty';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config';
import { activeTraceId } from './observability/trace-context';

/** No string in a log line is longer than this; a line stays bounded whatever was logged. */
const MAX_STRING = 2000;
const MAX_STACK = 4000;
const MAX_ITEMS = 20;
const MAX_DEPTH = 4;

function clip(text: string, max = MAX_STRING): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

export interface SerializedError {
  type: string;
  message: string;
  code?: string | number;
  stack?: string;
  cause?: SerializedError;
}

/**
 * Errors are logged as type, message, code, stack and cause, nothing else: driver errors carry their client and
 * socket objects, which would put kilobytes of connection state (and its settings) into one line.
 */
/** Errors from another realm (a vm context, a native module) fail `instanceof Error`: judge by shape. */
function isErrorLike(value: unknown): value is Error {
  return types.isNativeError(value) || (typeof value === 'object' && value !== null && typeof (value as Error).message === 'string');
}

export function serializeError(error: unknown, depth = 0): SerializedError {
  if (!isErrorLike(error)) return { type: typeof error, message: clip(String(error)) };
  const code = (error as { code?: unknown }).code;
  const constructorName = (error as { constructor?: { name?: string } }).constructor?.name;
  const type = constructorName && constructorName !== 'Object' ? constructorName : error.name || 'Error';
  const serialized: SerializedError = { type, message: clip(error.message) };
  if (typeof code === 'string' || typeof code === 'number') serialized.code = code;
  if (error.stack) serialized.stack = clip(error.stack, MAX_STACK);
  if (error.cause !== undefined && depth < 2) serialized.cause = serializeError(error.cause, depth + 1);
  return serialized;
}

/** Any other value, cut to a bounded size: long strings clipped, long lists and deep objects summarized. */
function bounded(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return clip(value);
  if (isErrorLike(value)) return serializeError(value);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? `[${value.length} items]` : '[object]';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((item) => bounded(item, depth + 1));
    if (value.length > MAX_ITEMS) items.push(`… ${value.length - MAX_ITEMS} more`);
    return items;
  }
  const entries = Object.entries(value);
  const kept = entries.slice(0, MAX_ITEMS).map(([key, item]) => [key, bounded(item, depth + 1)]);
  if (entries.length > MAX_ITEMS) kept.push(['…', `${entries.length - MAX_ITEMS} more keys`]);
  return Object.fromEntries(kept);
}

export interface LoggerSetup {
  /** Where lines go; default stdout (pretty on a terminal in development). Tests pass a stream to read them. */
  destination?: DestinationStream;
}

/**
 * The process's one structured logger (pino, as Fastify ships it), shared by the HTTP server, the job engine
 * and the event bus. Secrets never reach it: credentials in headers and connection strings are redacted. In
 * development on a terminal the lines are pretty-printed; elsewhere (pipes, production) one JSON object a line.
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'role' | 'isDevelopment'>, setup: LoggerSetup = {}): FastifyBaseLogger {
  const options: LoggerOptions = {
    level: config.logLevel,
    base: { role: config.role },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'connectionString', 'databaseUrl', '*.password'],
      censor: '[redacted]',
    },
    serializers: { err: serializeError, error: serializeError },
    // The trace a line belongs to, when tracing is on and the line is written inside a span (a request's, a job's):
    // logs and traces find each other. One lookup of the active span per line written.
    mixin: () => {
      const traceId = activeTraceId();
      return traceId ? { trace_id: traceId } : {};
    },
    // Applied to every line's own fields (serializers above handle errors): nothing unbounded is written.
    formatters: { log: (object) => bounded(object, 0) as Record<string, unknown> },
  };
  if (setup.destination) return pino(options, setup.destination);
  if (config.isDevelopment && process.stdout.isTTY) {
    // One line per entry; a request's fields are already in its message.
    const ignore = 'pid,hostname,role,method,url,statusCode,responseTime';
    return pino(options, pinoPretty({ colorize: true, translateTime: 'HH:MM:ss.l', ignore, singleLine: true, sync: true }));
  }
  return pino(options);
}
