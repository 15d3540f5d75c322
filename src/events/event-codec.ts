import type { FastifyBaseLogger } from 'fastify';
import { isTopic, type Topic, type TopicPayloads } from './topics';

/**
 * What every event bus backend shares: the channel name, the wire format of one event, and the listeners of
 * this process. Keeping them here holds the PostgreSQL and the Redis buses to one encoding and one behaviour.
 */

export type Listener<T extends Topic> = (payload: TopicPayloads[T]) => void;

/** The one channel every event travels on (a NOTIFY channel in PostgreSQL, a pub/sub channel in Redis). */
export const EVENT_CHANNEL = 'listings_gateway_events';

/**
 * PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. Both backends enforce it, so an event that works
 * with Redis cannot fail once a deployment runs without it.
 */
export const MAX_EVENT_BYTES = 7999;

export function encodeEvent<T extends Topic>(topic: T, payload: TopicPayloads[T]): string {
  const raw = JSON.stringify({ topic, payload });
  const bytes = Buffer.byteLength(raw);
  if (bytes > MAX_EVENT_BYTES) {
    throw new Error(`event ${topic} is ${bytes} bytes encoded; events must stay within ${MAX_EVENT_BYTES} bytes`);
  }
  return raw;
}

/** The event in a raw message, or undefined (logged) when it is not one of ours: never throws. */
export function decodeEvent(raw: string | undefined, log: FastifyBaseLogger): { topic: Topic; payload: unknown } | undefined {
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

/** This process's listeners by topic. A failing listener is logged and never stops the others. */
export class LocalListeners {
  private readonly byTopic = new Map<Topic, Set<Listener<Topic>>>();

  add<T extends Topic>(topic: T, listener: Listener<T>): () => void {
    let set = this.byTopic.get(topic);
    if (!set) this.byTopic.set(topic, (set = new Set()));
    set.add(listener as Listener<Topic>);
    return () => set.delete(listener as Listener<Topic>);
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

  /** Decodes one raw message and hands it to the listeners of its topic. */
  receive(raw: string | undefined, log: FastifyBaseLogger): void {
    const decoded = decodeEvent(raw, log);
    if (decoded) this.dispatch(decoded.topic, decoded.payload, log);
  }
}
