import type { FastifyBaseLogger } from 'fastify';
import { createPostgresEventBus, type EventBus } from './event-bus';
import type { Metrics } from '../observability/metrics';
import type { EventBusObserver } from './event-codec';
import { createRedisEventBus } from './redis-event-bus';

/**
 * The process's event bus: Redis pub/sub when REDIS_URL is set, PostgreSQL LISTEN/NOTIFY otherwise (so the
 * service never needs Redis). Every process of one deployment must make the same choice to hear each other.
 */
export async function createEventBus(options: {
  databaseUrl: string;
  redisUrl?: string;
  log: FastifyBaseLogger;
  metrics?: Metrics;
}): Promise<EventBus> {
  const { metrics } = options;
  const observerFor = (backend: string): EventBusObserver | undefined =>
    metrics && {
      lag: (seconds) => metrics.eventBusLag.observe({ backend }, seconds),
      reconnected: () => metrics.eventBusReconnects.inc({ backend }),
    };
  if (options.redisUrl) {
    options.log.info('event bus: Redis pub/sub');
    return createRedisEventBus(options.redisUrl, options.log, { observer: observerFor('redis') });
  }
  options.log.info('event bus: PostgreSQL LISTEN/NOTIFY');
  return createPostgresEventBus(options.databaseUrl, options.log, observerFor('postgres'));
}
