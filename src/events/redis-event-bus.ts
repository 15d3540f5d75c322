import type { FastifyBaseLogger } from 'fastify';
import { createClient } from 'redis';
import { announcer, type EventBus } from './event-bus';
import { EVENT_CHANNEL, encodeEvent, LocalListeners, type EventBusObserver } from './event-codec';

const CLOSE_GRACE_MS = 2000;

export interface RedisEventBusOptions {
  /**
   * The pub/sub channel. Redis channels are global to the server (the database number does not scope them),
   * so deployments sharing one Redis must differ here; the tests use it to stay apart from anything else.
   */
  channel?: string;
  /** Told of lag and reconnections (metrics). */
  observer?: EventBusObserver;
}

/**
 * Redis pub/sub: one subscriber connection per process (a subscribed connection can run nothing else) and one
 * publisher connection. Same wire format and the same handling of malformed messages as the PostgreSQL bus.
 */
export async function createRedisEventBus(
  redisUrl: string,
  log: FastifyBaseLogger,
  options: RedisEventBusOptions = {},
): Promise<EventBus> {
  const channel = options.channel ?? EVENT_CHANNEL;
  const listeners = new LocalListeners(options.observer);
  let started = false;
  const publisher = createClient({
    url: redisUrl,
    name: 'lg-events-publish',
    // While reconnecting a publish fails at once, as it does on a broken PostgreSQL connection, instead of
    // holding the caller (a request whose change has already committed) until Redis is back.
    disableOfflineQueue: true,
    socket: {
      // At start-up an unreachable Redis is a configuration error: fail like the PostgreSQL bus does. Once
      // running, the client reconnects on its own (and resubscribes), with a capped backoff.
      reconnectStrategy: (retries) => (started ? Math.min(2 ** retries * 50, 2000) + Math.floor(Math.random() * 200) : false),
    },
  });
  const subscriber = publisher.duplicate({ name: 'lg-events-subscribe', disableOfflineQueue: false });
  for (const [client, role] of [
    [publisher, 'publisher'],
    [subscriber, 'subscriber'],
  ] as const) {
    // Without an 'error' listener a dropped connection would crash the process (EventEmitter semantics). Once
    // running, a lost Redis is a dependency down, as the PostgreSQL bus reports it: a warning (the client
    // reconnects); at start-up it stops the process.
    client.on('error', (error: unknown) => log[started ? 'warn' : 'error']({ err: error }, `event ${role} connection failed`));
    client.on('reconnecting', () => log.warn(`event ${role} connection lost; reconnecting to Redis`));
    // 'ready' follows every connection: the ones after start-up are reconnections.
    client.on('ready', () => started && options.observer?.reconnected());
  }

  const connected = await Promise.allSettled([publisher.connect(), subscriber.connect()]);
  const failure = connected.find((result) => result.status === 'rejected');
  if (failure) {
    publisher.destroy();
    subscriber.destroy();
    throw failure.reason;
  }
  try {
    await subscriber.subscribe(channel, (message) => listeners.receive(message, log));
  } catch (error) {
    publisher.destroy();
    subscriber.destroy();
    throw error;
  }
  started = true;

  let closed = false;
  const publish: EventBus['publish'] = async (topic, payload) => {
    if (closed) return;
    await publisher.publish(channel, encodeEvent(topic, payload));
  };
  return {
    publish,
    announce: announcer(publish, (raw) => listeners.receive(raw, log), log),
    emitHere: (topic, payload) => listeners.receive(encodeEvent(topic, payload), log),
    subscribe: (topic, fn) => listeners.add(topic, fn),
    // Redis is not the database: a statement's news is announced after it (src/events/change-news.ts).
    statementsSend: false,
    async close() {
      if (closed) return;
      closed = true;
      // close() lets queued commands finish (publishes in flight) before the sockets end; during an outage
      // it may never settle, so it gets a bounded wait before the sockets are destroyed.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([publisher.close(), subscriber.close()]),
        new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS))),
      ]);
      clearTimeout(timer);
      publisher.destroy();
      subscriber.destroy();
    },
  };
}
