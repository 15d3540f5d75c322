import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config';

/**
 * The process's one structured logger (pino, as Fastify ships it), shared by the HTTP server, the job engine
 * and the event bus. Secrets never reach it: credentials in headers and connection strings are redacted.
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'role'>): FastifyBaseLogger {
  return pino({
    level: config.logLevel,
    base: { role: config.role },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'connectionString', 'databaseUrl', '*.password'],
      censor: '[redacted]',
    },
  });
}
