import type { Database } from '../db/orm';
import type { EventBus } from '../events/event-bus';
import type { TopicPayloads } from '../events/topics';
import { requireOrganizationToken } from '../access/guards';
import type { RequestScope } from '../request-scope';
import { HandWrittenGenerator } from '../shared/hand-written-generator';

/**
 * `eventStream`: an organization's activity events as they are committed (docs/webhooks.md, "Developing locally").
 * The stream hears them on the event bus (`activity.recorded`, announced by a database trigger while the
 * organization has a listener row, migrations/…_EventStreams.ts); it keeps that row alive while it runs.
 */

export type EventStreamDeps = { database: Database; events: EventBus };

/** One message of a stream: the first, with no event, says it listens; each later one names an event. */
export interface EventStreamRoot {
  eventId: string | null;
}

/** How long a listener row holds without a refresh: a stream refreshes it well before (a dead process's expires). */
const LISTENING_SECONDS = 120;
const REFRESH_MS = 40_000;

/** Marks the organization listened to, on the database's clock (the trigger's), never shortening another stream's mark. */
function markListening(database: Database, organizationId: string): Promise<unknown> {
  return database.orm.em.getConnection().execute(
    `insert into "activity_listener" ("organization_id", "listening_until") values (?, now() + make_interval(secs => ?))
       on conflict ("organization_id") do update set "listening_until" = greatest("activity_listener"."listening_until", excluded."listening_until")`,
    [organizationId, LISTENING_SECONDS],
    'run',
  );
}

/**
 * The messages of one stream, as graphql-js drives a subscription's source: queued as they come, handed out in order.
 * Hand-written rather than an async generator: a generator waiting for the next event cannot be returned until one
 * comes, and a client leaving must end the stream (and its refreshes) at once.
 */
class EventStreamSource extends HandWrittenGenerator<EventStreamRoot> {
  private readonly queue: EventStreamRoot[] = [];
  private waiting: ((result: IteratorResult<EventStreamRoot>) => void) | undefined;
  private ended = false;

  constructor(private readonly stop: () => void) {
    super();
  }

  push(message: EventStreamRoot): void {
    if (this.ended) return;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting({ value: message, done: false });
    else this.queue.push(message);
  }

  override next(): Promise<IteratorResult<EventStreamRoot>> {
    const message = this.queue.shift();
    if (message) return Promise.resolve({ value: message, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  override return(): Promise<IteratorResult<EventStreamRoot>> {
    if (!this.ended) {
      this.ended = true;
      this.queue.length = 0;
      this.stop();
      this.waiting?.({ value: undefined, done: true });
      this.waiting = undefined;
    }
    return Promise.resolve({ value: undefined, done: true });
  }
}

/**
 * Opens a stream of the caller's organization's events (of `types`, when given). Organization tokens only, as
 * webhooks: it carries every account's events. Its first message comes once the stream listens: every event committed
 * after it is sent (and perhaps some just before).
 */
export async function openEventStream(scope: RequestScope<EventStreamDeps>, types: readonly string[] | null | undefined): Promise<AsyncGenerator<EventStreamRoot>> {
  const { organizationId } = requireOrganizationToken(scope);
  const { database, events } = scope.runtime;
  const wanted = (event: TopicPayloads['activity.recorded']) => event.organizationId === organizationId && (!types?.length || types.includes(event.type));
  let refresh: NodeJS.Timeout | undefined;
  let unsubscribe = () => {};
  const source = new EventStreamSource(() => {
    clearInterval(refresh);
    unsubscribe();
  });
  // Heard from before the mark is made: nothing committed after the mark can slip between the two.
  unsubscribe = events.subscribe('activity.recorded', (event) => {
    if (wanted(event)) source.push({ eventId: event.id });
  });
  try {
    await markListening(database, organizationId);
  } catch (error) {
    await source.return();
    throw error;
  }
  refresh = setInterval(() => {
    markListening(database, organizationId).catch((error: unknown) =>
      scope.log.warn({ err: error, organizationId }, 'an event stream could not renew its listener mark; the next renewal tries again'),
    );
  }, REFRESH_MS);
  refresh.unref();
  source.push({ eventId: null });
  return source;
}
