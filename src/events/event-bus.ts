import { Client } from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { EVENT_CHANNEL, encodeEvent, LocalListeners, type Listener } from './event-codec';
import type { Topic, TopicPayloads } from './topics';

export type { Listener } from './event-codec';

/**
 * A typed publish/subscribe that crosses processes. Every process holds ONE listening connection; a published
 * event reaches the listeners of every process (this one included) through it, so local and remote
 * subscribers see events in the same order. Backends: this file (PostgreSQL LISTEN/NOTIFY) and
 * redis-event-bus.ts; create-event-bus.ts picks one.
 */
export interface EventBus {
  publish<T extends Topic>(topic: T, payload: TopicPayloads[T]): Promise<void>;
  subscribe<T extends Topic>(topic: T, listener: Listener<T>): () => void;
  close(): Promise<void>;
}

/** PostgreSQL LISTEN/NOTIFY: one listening client per process, publishing through a second one. */
export async function createPostgresEventBus(databaseUrl: string, log: FastifyBaseLogger): Promise<EventBus> {
  const listeners = new LocalListeners();
  const listener = new Client({ connectionString: databaseUrl, application_name: 'lg-events-listen' });
  const publisher = new Client({ connectionString: databaseUrl, application_name: 'lg-events-publish' });
  await Promise.all([listener.connect(), publisher.connect()]);
  listener.on('notification', (message) => listeners.receive(message.payload, log));
  listener.on('error', (error) => log.error({ err: error }, 'event listener connection failed'));
  publisher.on('error', (error) => log.error({ err: error }, 'event publisher connection failed'));
  await listener.query(`listen ${EVENT_CHANNEL}`);
  let closed = false;
  // Publishes go out one at a time, in call order: pg deprecates queueing a query on a busy client.
  let previous: Promise<unknown> = Promise.resolve();
  return {
    async publish(topic, payload) {
      if (closed) return;
      const raw = encodeEvent(topic, payload);
      const sent = previous.then(() => publisher.query('select pg_notify($1, $2)', [EVENT_CHANNEL, raw]));
      previous = sent.catch(() => undefined);
      await sent;
    },
    subscribe: (topic, fn) => listeners.add(topic, fn),
    async close() {
      closed = true;
      await Promise.allSettled([listener.end(), publisher.end()]);
    },
  };
}
