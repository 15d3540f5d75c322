import { Client } from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { EVENT_CHANNEL, encodeEvent, LocalListeners, type EventBusObserver, type Listener } from './event-codec';
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
  /**
   * Publishes news of a change that has committed: best effort, never throws. The change stands whether or not the
   * event goes out (a request must not fail, nor a client retry and duplicate it, because the bus is down); a lost
   * event is logged, and subscribers that reconnect read the current state (docs/events.md).
   */
  announce<T extends Topic>(topic: T, payload: TopicPayloads[T]): Promise<void>;
  /**
   * Hands an event to this process's own listeners only, at once, whatever the transport's state: for news this
   * process must act on now even when the bus cannot carry it (a revoked token's sockets here). The same event
   * published as well reaches them again: only for events whose listeners act idempotently.
   */
  emitHere<T extends Topic>(topic: T, payload: TopicPayloads[T]): void;
  subscribe<T extends Topic>(topic: T, listener: Listener<T>): () => void;
  /**
   * True when a statement on the application's database can send events itself (`pg_notify`, delivered when it
   * commits): the PostgreSQL bus. A change made by one statement then carries its news (src/events/change-news.ts).
   */
  readonly statementsSend: boolean;
  close(): Promise<void>;
}

/**
 * How long an announcement may hold its caller (a request whose change has committed): a transport that takes
 * connections but answers nothing (a network that drops packets) would otherwise hold the answer for as long as
 * the client library waits (node-redis: 5 s a command, and a request may announce several events).
 */
export const ANNOUNCE_WAIT_MS = 1000;

/** Events one NOTIFY statement carries at most (each payload is at most 8000 bytes): the statement stays small. */
const MAX_EVENTS_PER_STATEMENT = 200;

/**
 * `announce` for a bus's `publish`: the one place a lost event is logged instead of thrown, and where the caller stops
 * waiting for a publish that does not finish in ANNOUNCE_WAIT_MS (it goes on, in order; docs/events.md). While one is
 * pending, later announcements do not wait, so a request announcing many changes (a campaign) is held once. A lost
 * event still reaches this process's own listeners (`deliverHere`).
 */
export function announcer(
  publish: EventBus['publish'],
  deliverHere: (raw: string) => void,
  log: FastifyBaseLogger,
): EventBus['announce'] {
  let overdue = 0;
  return async (topic, payload) => {
    const sent = publish(topic, payload).catch((error: unknown) => {
      log.warn({ err: error, topic }, 'an event of a committed change could not be published; only this process hears of it');
      deliverHere(encodeEvent(topic, payload));
    });
    if (overdue > 0) {
      log.warn({ topic }, 'the event bus is not answering; the change goes on without waiting for its event');
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([sent.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ANNOUNCE_WAIT_MS)))]);
    clearTimeout(timer);
    if (finished) return;
    log.warn({ topic }, 'the event bus is not answering; the change goes on without waiting for its event');
    overdue += 1;
    void sent.finally(() => (overdue -= 1));
  };
}

/** Waits after a lost connection before trying again: 100 ms doubling to 2 s. */
function backoffMs(attempt: number): number {
  return Math.min(2000, 100 * 2 ** attempt);
}

/**
 * PostgreSQL LISTEN/NOTIFY: one listening client per process, publishing through a second one. A lost
 * connection is reopened (with backoff) and LISTEN issued again; events sent while it was down are not
 * replayed (delivery is at most once, see docs/events.md). One reconnection runs at a time, however often its
 * attempts fail: a session that fails while it is being opened is ended and reported to the one loop that opened
 * it, never taken for the loss of an open one.
 */
export async function createPostgresEventBus(databaseUrl: string, log: FastifyBaseLogger, observer?: EventBusObserver): Promise<EventBus> {
  const listeners = new LocalListeners(observer);
  let closed = false;

  // Waits between attempts; close() ends them at once.
  const pauses = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const entry = { timer: setTimeout(() => (pauses.delete(entry), resolve()), ms), resolve };
      pauses.add(entry);
    });

  /**
   * Opens a session and runs `setup` on it. The loss of the session once open calls `onLost` once; a failure while
   * opening ends the session and rejects, for the opener to handle.
   */
  const open = async (role: 'listen' | 'publish', onLost: () => void, setup?: (client: Client) => Promise<unknown>): Promise<Client> => {
    const client = new Client({ connectionString: databaseUrl, application_name: `lg-events-${role}` });
    let opened = false;
    let lost = false;
    const lose = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (!opened || closed) return;
      log.warn({ err: error }, `event ${role} connection lost; reconnecting`);
      onLost();
    };
    client.on('error', lose);
    client.on('end', () => lose());
    try {
      await client.connect();
      await setup?.(client);
      if (lost) throw new Error(`the event ${role} connection was lost while it opened`);
    } catch (error) {
      // The session failed as it opened: it is dropped, and how its end goes matters only when debugging.
      await client.end().catch((endError: unknown) => log.debug({ err: endError }, `ending a failed event ${role} session failed`));
      throw error;
    }
    opened = true;
    return client;
  };

  let listenerLost = false;
  let reconnecting: Promise<void> | undefined;
  const openListener = () =>
    open(
      'listen',
      () => {
        listenerLost = true;
        reconnectListener();
      },
      async (client) => {
        client.on('notification', (message) => listeners.receive(message.payload, log));
        await client.query(`listen ${EVENT_CHANNEL}`);
      },
    );
  /** Reopens the listening session until it listens again (the one loop; a call while it runs changes nothing). */
  const reconnectListener = (): void => {
    if (closed || reconnecting) return;
    reconnecting = (async () => {
      for (let attempt = 0; !closed; attempt += 1) {
        await pause(backoffMs(attempt));
        if (closed) return;
        try {
          const client = await openListener();
          if (closed) {
            // Opened as the bus closed: not needed; how its end goes matters only when debugging.
            await client.end().catch((endError: unknown) => log.debug({ err: endError }, 'ending an unneeded event listen session failed'));
            return;
          }
          listener = client;
          listenerLost = false;
          observer?.reconnected();
          log.info('event listen connection restored');
          return;
        } catch (error) {
          if (!closed) log.warn({ err: error }, 'event listen connection: reconnect failed');
        }
      }
    })().finally(() => {
      reconnecting = undefined;
      // Lost again before this loop had ended (its loss could not start another one): go on.
      if (listenerLost) reconnectListener();
    });
  };

  // The publisher reconnects lazily: the next publish after a loss opens a new connection.
  let publisherBroken = false;
  const openPublisher = () => open('publish', () => (publisherBroken = true));

  let listener = await openListener();
  let publisher = await openPublisher().catch(async (error: unknown) => {
    await listener.end();
    throw error;
  });
  /**
   * Publishes go out in call order, one statement at a time (pg deprecates queueing a query on a busy client). Those
   * made while a statement is in flight go out together in the next one: one round trip for many events under load
   * (NOTIFYs of one statement are delivered in their order). A failed statement is tried once more on a new
   * connection; a second failure is seen by the caller of every event it carried.
   */
  const notify = (raws: string[]) => publisher.query('select pg_notify($1, payload) from unnest($2::text[]) as payload', [EVENT_CHANNEL, raws]);
  const reopen = async () => {
    // Broken until a new connection is open: a failed reopen is tried again by the next publish.
    publisherBroken = true;
    // The broken connection is dropped either way; how its end went only matters when debugging.
    await publisher.end().catch((error: unknown) => log.debug({ err: error }, 'ending a broken event publish connection failed'));
    publisher = await openPublisher();
    publisherBroken = false;
  };
  const send = async (raws: string[]) => {
    if (publisherBroken) await reopen();
    try {
      await notify(raws);
    } catch (error) {
      // The connection may be gone before its loss was reported (a terminated backend, a failover): one more
      // try on a fresh connection.
      log.warn({ err: error }, 'event publish failed; retrying once on a new connection');
      await reopen();
      await notify(raws);
    }
  };
  const queued: { raw: string; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let sending = false;
  const sendQueued = async () => {
    sending = true;
    while (queued.length > 0) {
      // PostgreSQL delivers identical notifications of one transaction once: a repeated event starts the next statement.
      const raws = new Set<string>();
      let size = 0;
      while (size < queued.length && size < MAX_EVENTS_PER_STATEMENT && !raws.has(queued[size]!.raw)) raws.add(queued[size++]!.raw);
      const batch = queued.splice(0, size);
      try {
        await send(batch.map((event) => event.raw));
        for (const event of batch) event.resolve();
      } catch (error) {
        for (const event of batch) event.reject(error);
      }
    }
    sending = false;
  };
  const publish: EventBus['publish'] = async (topic, payload) => {
    if (closed) return;
    // Refused here (too large) before it joins a statement: the others of that statement go out.
    const raw = encodeEvent(topic, payload);
    await new Promise<void>((resolve, reject) => {
      queued.push({ raw, resolve, reject });
      if (sending) return;
      // Started after the caller's synchronous run: the events it announces together go in one statement.
      sending = true;
      queueMicrotask(() => void sendQueued());
    });
  };
  return {
    publish,
    announce: announcer(publish, (raw) => listeners.receive(raw, log), log),
    emitHere: (topic, payload) => listeners.receive(encodeEvent(topic, payload), log),
    subscribe: (topic, fn) => listeners.add(topic, fn),
    statementsSend: true,
    async close() {
      closed = true;
      for (const { timer, resolve } of pauses) {
        clearTimeout(timer);
        resolve();
      }
      pauses.clear();
      await reconnecting;
      await Promise.allSettled([listener.end(), publisher.end()]);
    },
  };
}

