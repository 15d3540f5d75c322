import type { FollowingWrite } from '../db/change-statement';
import { EVENT_CHANNEL, encodeEvent, encodeRowEnvelope } from './event-codec';
import type { EventBus } from './event-bus';
import type { Topic, TopicPayloads } from './topics';

type Item =
  | { topic: Topic; payload: TopicPayloads[Topic] }
  | { topic: Topic; part: FollowingWrite; payload: () => TopicPayloads[Topic] | readonly TopicPayloads[Topic][] | undefined };

/**
 * The news of a change made by one statement (src/db/change-statement.ts), in the order it is given: the record's
 * change first, then its work, then the wake-up of the workers (docs/events.md). On the PostgreSQL bus the statement
 * sends it itself: its last part is a `pg_notify` of each event, delivered when the statement commits (never when it
 * fails), so no NOTIFY statement follows the change (docs/write-path.md). On a bus the database cannot reach (Redis),
 * the same events are announced once the statement has run, as a transaction's are after its commit.
 */
export class ChangeNews {
  private readonly items: Item[] = [];

  constructor(private readonly events: EventBus) {}

  /** An event known before the statement runs (the record as the change leaves it). */
  add<T extends Topic>(topic: T, payload: TopicPayloads[T]): this {
    this.items.push({ topic, payload });
    return this;
  }

  /**
   * The rows `part` (a write of the same statement) returns, each an event of `topic` built from the row by its
   * receivers (`payloadsFromRows`); `payload` is that event (or, for a part of several rows, those events) as the
   * part's `returned` recorded it, for a bus that announces after the statement.
   */
  addRows<T extends Topic>(topic: T, part: FollowingWrite, payload: () => TopicPayloads[T] | readonly TopicPayloads[T][] | undefined): this {
    this.items.push({ topic, part, payload });
    return this;
  }

  /** The part of the statement that sends the news, to go last among its writes; none when the bus sends it after. */
  writes(): FollowingWrite[] {
    if (!this.events.statementsSend || this.items.length === 0) return [];
    // Encoded now (and its size checked, as a publish does: an event too large fails the change here).
    const values = [EVENT_CHANNEL, ...this.items.map((item) => ('part' in item ? encodeRowEnvelope(item.topic) : encodeEvent(item.topic, item.payload)))];
    // The ledger's rows fit an event (their error text is bounded: src/jobs/work-ledger.ts).
    const arrays = (nameOf: (part: FollowingWrite) => string) =>
      this.items.map((item) =>
        'part' in item ? `array(select (?::jsonb || jsonb_build_object('row', to_jsonb(r)))::text from ${nameOf(item.part)} r)` : 'array[?::text]',
      );
    return [
      {
        // In the order given: unnest yields the array's elements in order, and pg_notify queues them so.
        sql: (nameOf) => `select pg_notify(?, message) from unnest(${arrays(nameOf).join(' || ')}) as message`,
        values,
        sends: true,
      },
    ];
  }

  /** Once the statement has run and made its change: announces what the statement did not send itself. */
  async announced(): Promise<void> {
    if (this.events.statementsSend) return;
    // Called in order, without waiting between them: the bus keeps that order (docs/events.md).
    await Promise.all(
      this.items.flatMap((item) => {
        const payload = 'part' in item ? item.payload() : item.payload;
        const payloads = payload === undefined ? [] : Array.isArray(payload) ? (payload as readonly TopicPayloads[Topic][]) : [payload as TopicPayloads[Topic]];
        return payloads.map((each) => this.events.announce(item.topic, each));
      }),
    );
  }
}
