import type { EventManager, TransactionEventArgs } from '@mikro-orm/core';
import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import { rootOf } from '../events/announce-on-commit';
import type { Runtime } from '../runtime';
import { codecOf } from '../shared/entity-snapshot';
import { newId } from '../shared/ids';
import { EventRecordType, RECORD_TYPE_OF, type EventType } from './activity.enums';

/**
 * The one way to record a state change in the activity log (docs/activity-log.md). Called inside the transaction
 * of the change; the row is written by that transaction just before it commits, so there is no change without its
 * event and no event without its change. Written then, after the last flush, its record is the entity as committed
 * (its version counted and its update time stamped by that flush, src/db/orm.ts), whatever the caller changes after
 * this call.
 */

/** What recording uses: the clock that dates the event (tests move it). */
export type EventRecordDeps = Pick<Runtime, 'clock'>;

/** An entity the log knows: its own id, and the organization and account it belongs to, as relations or itself. */
interface RecordedEntity {
  id: string;
  organization?: { id: string } | null;
  account?: { id: string } | null;
}

interface PendingEvent {
  id: string;
  type: EventType;
  occurredAt: Date;
  record: RecordedEntity;
}

const pendingByTransaction = new WeakMap<object, PendingEvent[]>();
const watchedEventManagers = new WeakSet<EventManager>();

/** `LocationUpdateJob` -> `location_update_job`: the record type of an entity class. */
function recordTypeOf(className: string): EventRecordType | undefined {
  const name = className.replace(/(?<!^)([A-Z])/g, '_$1').toLowerCase();
  return Object.values(EventRecordType).find((type) => (type as string) === name);
}

const INSERT = `insert into "activity_event" ("id", "type", "occurred_at", "organization_id", "account_id", "record_type", "record_id", "record")
  values (?, ?, ?, coalesce(?::uuid, (select "organization_id" from "account" where "id" = ?::uuid)), ?, ?, ?, ?::jsonb)`;

async function writePending(args: TransactionEventArgs): Promise<void> {
  const transaction = args.transaction as Knex.Transaction | undefined;
  const pending = transaction ? pendingByTransaction.get(transaction) : undefined;
  if (!pending || !args.em) return;
  pendingByTransaction.delete(transaction!);
  const em = args.em as EntityManager;
  for (const event of pending) {
    const entity = event.record.constructor as new () => RecordedEntity;
    const recordType = recordTypeOf(entity.name);
    if (recordType !== RECORD_TYPE_OF[event.type]) throw new Error(`recordEvent(${event.type}) was given a ${entity.name}`);
    // An account is its own account; other records name theirs (a brand has none). A record without its
    // organization (a location) belongs to its account's.
    const accountId = recordType === EventRecordType.ACCOUNT ? event.record.id : (event.record.account?.id ?? null);
    const organizationId = event.record.organization?.id ?? null;
    await em.getConnection().execute(
      INSERT,
      [
        event.id,
        event.type,
        event.occurredAt,
        organizationId,
        accountId,
        accountId,
        recordType,
        event.record.id,
        JSON.stringify(codecOf(em.getMetadata(), entity).encode(event.record)),
      ],
      'run',
      transaction,
    );
  }
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

/** Records that `record` changed (`type`), in the transaction of `em`, which must be the one making the change. */
export function recordEvent(em: EntityManager, runtime: EventRecordDeps, type: EventType, record: RecordedEntity): void {
  const transaction = em.getTransactionContext<Knex.Transaction>();
  if (!transaction) throw new Error(`recordEvent(${type}) must run inside the transaction of the change`);
  watch(em.getEventManager());
  const root = rootOf(transaction);
  let pending = pendingByTransaction.get(root);
  if (!pending) pendingByTransaction.set(root, (pending = []));
  const occurredAt = runtime.clock.now();
  // The id by real time, not the clock: ids order lists, and a moved test clock must not reorder them.
  pending.push({ id: newId(), type, occurredAt, record });
}
