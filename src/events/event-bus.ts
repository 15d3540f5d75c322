import { Client } from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { isTopic, type Topic, type TopicPayloads } from './topics';

export type Listener<T extends Topic> = (payload: TopicPayloads[T]) => void;

/**
 * A typed publish/subscribe that crosses processes. Every process holds ONE listening connection; a published
 * event reaches the listeners of every process (this one included) through it, so local and remote
 * subscribers see events in the same order.
 */
export interface EventBus {
  publish<T extends Topic>(topic: T, payload: TopicPayloads[T]): Promise<void>;
  subscribe<T extends Topic>(topic: T, listener: Listener<T>): () => void;
  close(): Promise<void>;
}

const CHANNEL = 'listings_gateway_events';

class LocalListeners {
  private readonly byTopic = new Map<Topic, Set<Listener<Topic>>>();

  add<T extends Topic>(topic: T, listener: Listener<T>): () => void {
    let set = this.byTopic.get(topic);
    if (!set) this.byTopic.set(topic, (set = new Set()));
    set.add(listener as Listener<Topic>);
    return () => set!.delete(listener as Listener<Topic>);
  }

  dispatch(topic: Topic, payload: unknown, log: FastifyBaseLogger): void {
    for (const listener of this.byTopic.get(topic) ?? []) {
      try {
        listener(payload as TopicPayloads[Topic]);
      } catch (error) {
        log.error({ err: error, topic }, 'event listener failed');
      }
    }
  }
}

function decode(raw: string | undefined, log: FastifyBaseLogger): { topic: Topic; payload: unknown } | undefined {
  try {
    const message = JSON.parse(raw ?? '') as { topic?: unknown; payload?: unknown };
    if (isTopic(message.topic) && typeof message.payload === 'object' && message.payload !== null) {
      return { topic: message.topic, payload: message.payload };
    }
  } catch {
    // fall through: logged below
  }
  log.warn({ raw: raw?.slice(0, 200) }, 'ignored a malformed event');
  return undefined;
}

/** PostgreSQL LISTEN/NOTIFY: one listening client per process, publishing through a second one. */
export async function createPostgresEventBus(databaseUrl: string, log: FastifyBaseLogger): Promise<EventBus> {
  const listeners = new LocalListeners();
  const listener = new Client({ connectionString: databaseUrl, application_name: 'lg-events-listen' });
  const publisher = new Client({ connectionString: databaseUrl, application_name: 'lg-events-publish' });
  await Promise.all([listener.connect(), publisher.connect()]);
  listener.on('notification', (message) => {
    const decoded = decode(message.payload, log);
    if (decoded) listeners.dispatch(decoded.topic, decoded.payload, log);
  });
  listener.on('error', (error) => log.error({ err: error }, 'event listener connection failed'));
  publisher.on('error', (error) => log.error({ err: error }, 'event publisher connection failed'));
  await listener.query(`listen ${CHANNEL}`);
  let closed = false;
  return {
    async publish(topic, payload) {
      if (closed) return;
      await publisher.query('select pg_notify($1, $2)', [CHANNEL, JSON.stringify({ topic, payload })]);
    },
    subscribe: (topic, fn) => listeners.add(topic, fn),
    async close() {
      closed = true;
      await Promise.allSettled([listener.end(), publisher.end()]);
    },
  };
}
