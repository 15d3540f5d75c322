import type { FastifyBaseLogger } from 'fastify';
import { activeTraceContext, inConsumerSpan, traceContextIn, type TraceContext } from '../observability/trace-context';
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

/** What an event bus reports of its own working (metrics): how late events arrive, how often it reconnects. */
export interface EventBusObserver {
  lag(seconds: number): void;
  reconnected(): void;
}

/**
 * When each received event's payload was published (ms since the epoch, the publishing process's clock): kept
 * beside the payload object, which reaches subscription filters unchanged, so fan-out delays can be measured.
 */
const sentAtOfPayload = new WeakMap<object, number>();

export function eventSentAt(payload: object): number | undefined {
  return sentAtOfPayload.get(payload);
}

/**
 * One event on the wire: its topic and payload, when it was sent, and the trace context of the span that published it
 * (when tracing is on), which the delivery to this process's listeners continues.
 */
export function encodeEvent<T extends Topic>(topic: T, payload: TopicPayloads[T]): string {
  const raw = JSON.stringify({ topic, payload, sentAt: Date.now(), ...activeTraceContext() });
  const bytes = Buffer.byteLength(raw);
  if (bytes > MAX_EVENT_BYTES) {
    throw new Error(`event ${topic} is ${bytes} bytes encoded; events must stay within ${MAX_EVENT_BYTES} bytes`);
  }
  return raw;
}

type PayloadOfRow<T extends Topic> = (row: Record<string, unknown>) => TopicPayloads[T];
const payloadOfRow = new Map<Topic, PayloadOfRow<Topic>>();

/**
 * How every receiver builds the payload of `topic` from a row a statement wrote and sent (src/events/change-news.ts
 * `addRows`): the one definition of that payload, registered by the module that owns the row's table when it loads.
 */
export function payloadsFromRows<T extends Topic>(topic: T, fromRow: PayloadOfRow<T>): void {
  payloadOfRow.set(topic, fromRow);
}

/**
 * An event whose payload is a row a statement is about to write (src/events/change-news.ts): everything but the row,
 * as a JSON object the statement completes with `row` (its part's RETURNING, `to_jsonb`). The receivers build the
 * payload from the row (`payloadsFromRows`); the statement keeps the size within MAX_EVENT_BYTES.
 */
export function encodeRowEnvelope(topic: Topic): string {
  if (!payloadOfRow.has(topic)) throw new Error(`${topic} has no payload built from rows (payloadsFromRows)`);
  return JSON.stringify({ topic, sentAt: Date.now(), ...activeTraceContext() });
}

/** The payload of a message: its `payload`, or the one its topic builds from its `row`; undefined when neither. */
function payloadOf(topic: Topic, message: { payload?: unknown; row?: unknown }): object | undefined {
  if (typeof message.payload === 'object' && message.payload !== null) return message.payload;
  const fromRow = payloadOfRow.get(topic);
  if (fromRow && typeof message.row === 'object' && message.row !== null) return fromRow(message.row as Record<string, unknown>);
  return undefined;
}

/** The event in a raw message, or undefined (logged) when it is not one of ours: never throws. */
export function decodeEvent(
  raw: string | undefined,
  log: FastifyBaseLogger,
): { topic: Topic; payload: object; sentAt: number | undefined; trace: TraceContext | undefined } | undefined {
  try {
    const message = JSON.parse(raw ?? '') as { topic?: unknown; payload?: unknown; row?: unknown; sentAt?: unknown };
    const payload = isTopic(message.topic) ? payloadOf(message.topic, message) : undefined;
    if (isTopic(message.topic) && payload) {
      return {
        topic: message.topic,
        payload,
        sentAt: typeof message.sentAt === 'number' ? message.sentAt : undefined,
        trace: traceContextIn(message),
      };
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

  constructor(private readonly observer?: EventBusObserver) {}

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

  /**
   * Decodes one raw message and hands it to the listeners of its topic, inside a span in the publisher's trace: the
   * work its listeners start (a subscription group's fan-out) is part of it.
   */
  receive(raw: string | undefined, log: FastifyBaseLogger): void {
    const decoded = decodeEvent(raw, log);
    if (!decoded) return;
    if (decoded.sentAt !== undefined) {
      sentAtOfPayload.set(decoded.payload, decoded.sentAt);
      // Clocks of two machines may differ a little: a negative lag is counted as none.
      this.observer?.lag(Math.max(0, Date.now() - decoded.sentAt) / 1000);
    }
    const { topic, payload } = decoded;
    const attributes = { 'messaging.operation.type': 'process', 'messaging.destination.name': topic };
    inConsumerSpan(`event ${topic}`, decoded.trace, attributes, () => this.dispatch(topic, payload, log));
  }
}
