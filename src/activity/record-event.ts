import type { EventManager, TransactionEventArgs } from '@mikro-orm/core';
import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import { rootOf } from '../events/announce-on-commit';
import type { EntityClass, MetadataStorage } from '@mikro-orm/core';
import type { FollowingWrite } from '../db/change-statement';
import { codecOf, snapshotSql } from '../db/entity-codec';
import { newId } from '../shared/ids';
import type { EventTypeDefinition } from './activity.enums';
import type { Clock } from '../shared/clock';

/**
 * The one way to record a state change in the activity log (docs/activity-log.md). Called inside the transaction
 * of the change; the row is written by that transaction just before it commits, so there is no change without its
 * event and no event without its change. Written then, after the last flush, its record is the entity as committed
 * (its version counted and its update time stamped by that flush, src/db/orm.ts), whatever the caller changes after
 * this call.
 */

/** What recording uses: the clock that dates the event (tests move it). */
export type EventRecordDeps = { clock: Clock };

/** An entity the log knows: its own id, and the organization and account it belongs to, as relations or itself. */
interface RecordedEntity {
  id: string;
  organization?: { id: string } | null;
  account?: { id: string } | null;
}

interface PendingEvent {
  id: string;
  type: EventTypeDefinition;
  occurredAt: Date;
  record: RecordedEntity;
}

const pendingByTransaction = new WeakMap<object, PendingEvent[]>();
const watchedEventManagers = new WeakSet<EventManager>();

const COLUMNS = `"id", "type", "occurred_at", "organization_id", "account_id", "record_type", "record_id", "record"`;
const VALUES = `?, ?, ?, coalesce(?::uuid, (select "organization_id" from "account" where "id" = ?::uuid)), ?, ?, ?, ?::jsonb`;

/** The row of an event: its owner from the record (a record without its organization belongs to its account's). */
function eventValues(metadata: MetadataStorage, event: PendingEvent): unknown[] {
  const recordType = event.type.record;
  const record: object = event.record;
  if (!(record instanceof (recordType.entity as new () => object))) throw new Error(`recordEvent(${event.type.name}) was given a ${record.constructor.name}`);
  // Records name their account (a brand has none); a record without its organization (a location) belongs to its
  // account's.
  const { organizationId, accountId } = recordType.owner?.(event.record) ?? {
    organizationId: event.record.organization?.id ?? null,
    accountId: event.record.account?.id ?? null,
  };
  return [
    event.id,
    event.type.name,
    event.occurredAt,
    organizationId,
    accountId,
    accountId,
    recordType.name,
    event.record.id,
    JSON.stringify(codecOf(metadata, recordType.entity as new () => RecordedEntity).encode(event.record)),
  ];
}

async function writePending(args: TransactionEventArgs): Promise<void> {
  const transaction = args.transaction as Knex.Transaction | undefined;
  const pending = transaction ? pendingByTransaction.get(transaction) : undefined;
  if (!pending || !args.em) return;
  pendingByTransaction.delete(transaction!);
  const em = args.em as EntityManager;
  for (const event of pending) {
    await em.getConnection().execute(`insert into "activity_event" (${COLUMNS}) values (${VALUES})`, eventValues(em.getMetadata(), event), 'run', transaction);
  }
}

/**
 * Records that `record` changed (`type`) within the statement that changes it (src/db/change-statement.ts):
 * written exactly when that change is. `record` is the entity as that statement leaves it.
 */
export function eventWrite<E extends object>(metadata: MetadataStorage, runtime: EventRecordDeps, type: EventTypeDefinition<E>, record: E & RecordedEntity): FollowingWrite {
  const event = { id: newId(), type, occurredAt: runtime.clock.now(), record };
  return { sql: `insert into "activity_event" (${COLUMNS}) select ${VALUES} from changed`, values: eventValues(metadata, event) };
}

/** `VALUES` with each value cast to its column's type: rows of a VALUES list read by a SELECT take none from the table. */
const TYPED_VALUES = `?::uuid, ?::text, ?::timestamptz, coalesce(?::uuid, (select "organization_id" from "account" where "id" = ?::uuid)), ?::uuid, ?::text, ?::uuid, ?::jsonb`;

/**
 * `eventWrite` for the records a statement creates together (a campaign's posts, `insertRowsChange`): one event each,
 * in one write, written exactly when that change is.
 */
export function eventsWrite<E extends object>(metadata: MetadataStorage, runtime: EventRecordDeps, type: EventTypeDefinition<E>, records: readonly (E & RecordedEntity)[]): FollowingWrite {
  const occurredAt = runtime.clock.now();
  const events = records.map((record) => ({ id: newId(), type, occurredAt, record }));
  return {
    sql: `insert into "activity_event" (${COLUMNS}) select * from (values ${events.map(() => `(${TYPED_VALUES})`).join(', ')}) as lg_events where exists (select 1 from changed)`,
    values: events.flatMap((event) => eventValues(metadata, event)),
  };
}

/**
 * Records that the row `part` (another part of the same statement) returns changed (`type`): for a change whose row is
 * known only to PostgreSQL (an update of rows the statement reads itself), its record encoded there
 * (`snapshotSql`, the codec's encoding). Written exactly when `part` returns its row, with no event when it returns none.
 * `part` returns one row at most (one event id); the record's owner is its organization and account columns, as
 * `eventValues` takes them from a record without an `owner` of its type.
 */
export function eventOfRowWrite<E extends object>(metadata: MetadataStorage, runtime: EventRecordDeps, type: EventTypeDefinition<E>, part: FollowingWrite): FollowingWrite {
  const recordType = type.record;
  if (recordType.owner) throw new Error(`eventOfRowWrite(${type.name}): a record type with its own owner is not supported`);
  const meta = metadata.get(recordType.entity.name);
  const column = (relation: string) => (meta.properties[relation] ? `r."${meta.properties[relation].fieldNames[0]}"` : 'null::uuid');
  const account = column('account');
  const organization = `coalesce(${column('organization')}, (select "organization_id" from "account" where "id" = ${account}))`;
  return {
    sql: (nameOf) =>
      `insert into "activity_event" (${COLUMNS}) select ?, ?, ?, ${organization}, ${account}, ?, r."id", ${snapshotSql(metadata, recordType.entity as EntityClass<object>, 'r')} from ${nameOf(part)} r`,
    values: [newId(), type.name, runtime.clock.now(), recordType.name],
  };
}

function watch(eventManager: EventManager): void {
  if (watchedEventManagers.has(eventManager)) return;
  watchedEventManagers.add(eventManager);
  eventManager.registerSubscriber({
    // Before the root transaction commits, after its last flush; a failed insert fails the commit, and the change.
    beforeTransactionCommit: writePending,
    afterTransactionRollback: (args: TransactionEventArgs) => {
      const transaction = args.transaction as Knex.Transaction | undefined;
      if (transaction) pendingByTransaction.delete(transaction);
    },
  });
}

/** Records that `record` changed (`type`), in the transaction of `em`, which must be the one making the change; answers the event's id. */
export function recordEvent<E extends object>(em: EntityManager, runtime: EventRecordDeps, type: EventTypeDefinition<E>, record: E & RecordedEntity): string {
  const transaction = em.getTransactionContext<Knex.Transaction>();
  if (!transaction) throw new Error(`recordEvent(${type.name}) must run inside the transaction of the change`);
  watch(em.getEventManager());
  const root = rootOf(transaction);
  let pending = pendingByTransaction.get(root);
  if (!pending) pendingByTransaction.set(root, (pending = []));
  const occurredAt = runtime.clock.now();
  // The id by real time, not the clock: ids order lists, and a moved test clock must not reorder them.
  const id = newId();
  pending.push({ id, type: type, occurredAt, record });
  return id;
}
