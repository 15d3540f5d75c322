import type { EventManager, TransactionEventArgs } from '@mikro-orm/core';
import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import type { EventBus } from './event-bus';
import type { Topic, TopicPayloads } from './topics';

/**
 * Announcements of a transaction's changes, published once it commits (never if it rolls back): first those of the
 * records it changed, in the order they were made, then the wake-ups of the workers it queued jobs for. So a
 * subscriber hears of a record's change before any job could have moved it on: a worker woken by the commit would
 * otherwise announce RUNNING before the request that queued it announced QUEUED. Each is best effort
 * (EventBus.announce): a lost event never fails the committed change.
 */

interface Announcement {
  publish(): Promise<void>;
}

interface PendingAnnouncements {
  changes: Announcement[];
  /** Wake-ups, once per key (a queue) and transaction. */
  wakes: Map<string, Announcement>;
}

const pendingByTransaction = new WeakMap<object, PendingAnnouncements>();
const watchedEventManagers = new WeakSet<EventManager>();

/** The outermost transaction of a (possibly nested) one: where commit hooks run. */
export function rootOf(transaction: object): object {
  let root = transaction as { parentTransaction?: object };
  while (root.parentTransaction) root = root.parentTransaction;
  return root;
}

function watch(eventManager: EventManager): void {
  if (watchedEventManagers.has(eventManager)) return;
  watchedEventManagers.add(eventManager);
  eventManager.registerSubscriber({
    // Commit hooks run for the root transaction only: a savepoint's announcements wait for the outermost commit.
    afterTransactionCommit: async (args: TransactionEventArgs) => {
      const transaction = args.transaction as Knex.Transaction | undefined;
      const pending = transaction ? pendingByTransaction.get(transaction) : undefined;
      if (!pending) return;
      pendingByTransaction.delete(transaction!);
      // Announced together, in this order: the bus sends them in one NOTIFY statement (docs/write-path.md).
      await Promise.all([...pending.changes, ...pending.wakes.values()].map((announcement) => announcement.publish()));
    },
    afterTransactionRollback: (args: TransactionEventArgs) => {
      const transaction = args.transaction as Knex.Transaction | undefined;
      if (transaction) pendingByTransaction.delete(transaction);
    },
  });
}

/**
 * Publishes `payload()` on `topic` once the transaction of `em` commits; the payload is built then, from the records
 * as committed (their versions counted by the flush). `wakeKey` marks a wake-up: published after the changes, once
 * per key.
 */
export function announceOnCommit<T extends Topic>(
  em: EntityManager,
  events: EventBus,
  topic: T,
  payload: () => TopicPayloads[T],
  options: { wakeKey?: string } = {},
): void {
  const transaction = em.getTransactionContext<Knex.Transaction>();
  if (!transaction) throw new Error(`announceOnCommit(${topic}) must run inside a transaction`);
  watch(em.getEventManager());
  const root = rootOf(transaction);
  let pending = pendingByTransaction.get(root);
  if (!pending) pendingByTransaction.set(root, (pending = { changes: [], wakes: new Map() }));
  const announcement = { publish: () => events.announce(topic, payload()) };
  if (options.wakeKey === undefined) pending.changes.push(announcement);
  else if (!pending.wakes.has(options.wakeKey)) pending.wakes.set(options.wakeKey, announcement);
}
