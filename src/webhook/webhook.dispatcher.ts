import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { insertDeliveries, type NewDelivery } from './webhook.deliveries';
import { PING_EVENT_TYPE, WebhookDeliveryStatus } from './webhook.enums';
import { deliverQueue } from './webhook.queues';
import { endpointWants } from './webhook.rules';
import type { Clock } from '../shared/clock';
import type { Config } from '../config';
import type { Database } from '../db/orm';
import type { EventBus } from '../events/event-bus';
import type { JobEngine } from '../jobs/job-engine';
import type { Metrics } from '../observability/metrics';
import type { PresentEvents } from '../activity/event-presentation';

/**
 * Turns recorded events into deliveries and hands due ones to the `webhook-deliver` queue: docs/webhooks.md,
 * "Ordering". One process at a time (a transaction-scoped advisory lock; the others skip the round), so the outbox
 * is taken in sequence order without races between dispatchers. The one-second look while deliveries are open is
 * what notices retries whose time has come on the service clock (which tests move).
 */

/** The advisory lock key of the dispatcher (any constant no other part of the service uses). */
const DISPATCHER_LOCK = 720_020_001;
const POLL_MS = 1000;
const IDLE_POLL_MS = 60_000;
const OUTBOX_BATCH = 500;
const SCHEDULE_BATCH = 500;

type RoundOutcome = 'more' | 'open' | 'idle';

type DispatcherDeps = { database: Database; jobs: JobEngine; events: EventBus; clock: Clock; config: Config; metrics: Metrics | undefined; presentEvents: PresentEvents };

/** What fan-out reads of an event: which endpoints want it, and the order of its deliveries. */
interface OutboxEvent {
  id: string;
  type: string;
  organization_id: string;
  record_id: string;
  sequence: string;
}

/** An outbox row with its event, or nulls where the event is gone (removed by retention). */
type OutboxRow = { event_id: string } & (OutboxEvent | { [K in keyof OutboxEvent]: null });

export class WebhookDispatcher {
  private running = true;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private readonly done: Promise<void>;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly runtime: DispatcherDeps,
    private readonly log: FastifyBaseLogger,
  ) {
    this.unsubscribe = runtime.events.subscribe('webhooks.pending', () => this.wake());
    this.done = this.loop();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe();
    this.wake();
    await this.done;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let outcome: RoundOutcome = 'open';
      try {
        outcome = await this.round();
      } catch (error) {
        this.log.error({ err: error }, 'webhook dispatch round failed; tried again at the next');
      }
      if (!this.running) break;
      if (outcome === 'more' || this.woken) continue;
      const waitMs = outcome === 'idle' ? IDLE_POLL_MS : POLL_MS;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.wakeUp = undefined;
          resolve();
        }, waitMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          this.wakeUp = undefined;
          resolve();
        };
      });
    }
  }

  /**
   * One round under the lock: 'more' when a batch was full (another round follows at once), 'open' while deliveries
   * are open (or another process holds the lock), 'idle' when nothing is left to send.
   */
  private async round(): Promise<RoundOutcome> {
    const em = this.runtime.database.orm.em.fork();
    return em.transactional(async (tx): Promise<RoundOutcome> => {
      const [lock] = await tx.getConnection().execute<{ locked: boolean }[]>('select pg_try_advisory_xact_lock(?) as locked', [DISPATCHER_LOCK], 'all', tx.getTransactionContext());
      if (!lock?.locked) return 'open';
      const fannedOut = await this.fanOut(tx);
      const scheduled = await this.schedule(tx);
      if (fannedOut === OUTBOX_BATCH || scheduled === SCHEDULE_BATCH) return 'more';
      const [open] = await tx
        .getConnection()
        .execute<{ open: boolean }[]>('select exists (select 1 from webhook_delivery where status in (?, ?)) as open', [WebhookDeliveryStatus.PENDING, WebhookDeliveryStatus.SENDING], 'all', tx.getTransactionContext());
      return open?.open ? 'open' : 'idle';
    });
  }

  private async fanOut(tx: EntityManager): Promise<number> {
    const trx = tx.getTransactionContext<Knex.Transaction>();
    const connection = tx.getConnection();
    const rows = await connection.execute<OutboxRow[]>(
      `select o.event_id, e.id, e.type, e.organization_id, e.record_id, e.sequence
         from webhook_outbox o left join activity_event e on e.id = o.event_id
        order by o.sequence limit ${OUTBOX_BATCH}`,
      [],
      'all',
      trx,
    );
    if (rows.length === 0) return 0;
    // An event gone before its turn (removed by retention) has nothing to send.
    const events = rows.filter((row): row is { event_id: string } & OutboxEvent => row.id !== null);
    const organizations = [...new Set(events.map((event) => event.organization_id))];
    const endpoints = organizations.length
      ? await connection.execute<{ id: string; organization_id: string; event_types: string[] }[]>(
          'select id, organization_id, event_types from webhook_endpoint where enabled and organization_id in (?) order by id',
          [organizations],
          'all',
          trx,
        )
      : [];
    const wanted = events.map((event) => ({
      event,
      endpoints: endpoints.filter((endpoint) => endpoint.organization_id === event.organization_id && endpointWants(endpoint.event_types, event.type)),
    }));
    const bodies = await this.bodiesOf(tx, wanted.filter(({ endpoints: to }) => to.length > 0).map(({ event }) => event));
    const deliveries: NewDelivery[] = [];
    for (const { event, endpoints: to } of wanted) {
      const body = bodies.get(event.id);
      // Not listed by GET /events any more (past the retention since): as gone.
      if (body === undefined) continue;
      for (const endpoint of to) {
        deliveries.push({
          endpointId: endpoint.id,
          organizationId: event.organization_id,
          eventId: event.id,
          eventType: event.type,
          recordKey: event.record_id,
          sequence: String(event.sequence),
          body,
          redelivery: false,
        });
      }
    }
    await insertDeliveries(tx, deliveries, this.runtime.clock.now());
    await connection.execute('delete from webhook_outbox where event_id in (?)', [rows.map((row) => row.event_id)], 'run', trx);
    this.runtime.metrics?.webhookDeliveriesCreated.inc(deliveries.length);
    return rows.length;
  }

  /** The bodies of the events, by id: their GET /events items, presented per organization in this transaction. */
  private async bodiesOf(tx: EntityManager, events: readonly { id: string; organization_id: string }[]): Promise<Map<string, string>> {
    const byOrganization = new Map<string, string[]>();
    for (const event of events) {
      const ids = byOrganization.get(event.organization_id);
      if (ids) ids.push(event.id);
      else byOrganization.set(event.organization_id, [event.id]);
    }
    const bodies = new Map<string, string>();
    for (const [organizationId, ids] of byOrganization) {
      for (const [id, body] of await this.runtime.presentEvents(tx, organizationId, ids)) bodies.set(id, body);
    }
    return bodies;
  }

  private async schedule(tx: EntityManager): Promise<number> {
    const trx = tx.getTransactionContext<Knex.Transaction>();
    const connection = tx.getConnection();
    // The head of each (endpoint, record): its first open delivery. Pings go to disabled endpoints too (a test).
    // Each endpoint's deliveries in flight are counted once per round, not once per waiting delivery: with a
    // backlog of thousands the per-head count made every round quadratic in it.
    const heads = await connection.execute<{ id: string; endpoint_id: string; sending: string }[]>(
      `with heads as (
         select distinct on (d.endpoint_id, d.record_key) d.id, d.endpoint_id, d.status, d.next_attempt_at, d.sequence, d.event_type, w.enabled
           from webhook_delivery d join webhook_endpoint w on w.id = d.endpoint_id
          where d.status in (?, ?)
          order by d.endpoint_id, d.record_key, d.sequence, d.id),
       sending as (
         select endpoint_id, count(*) as sending from webhook_delivery where status = ? group by endpoint_id)
       select h.id, h.endpoint_id, coalesce(s.sending, 0) as sending
         from heads h left join sending s on s.endpoint_id = h.endpoint_id
        where h.status = ? and h.next_attempt_at <= ? and (h.enabled or h.event_type = ?)
        order by h.sequence, h.id
        limit ${SCHEDULE_BATCH}`,
      [WebhookDeliveryStatus.PENDING, WebhookDeliveryStatus.SENDING, WebhookDeliveryStatus.SENDING, WebhookDeliveryStatus.PENDING, this.runtime.clock.now(), PING_EVENT_TYPE],
      'all',
      trx,
    );
    if (this.runtime.metrics) {
      const [open] = await connection.execute<{ count: string }[]>('select count(*) from webhook_delivery where status in (?, ?)', [WebhookDeliveryStatus.PENDING, WebhookDeliveryStatus.SENDING], 'all', trx);
      this.runtime.metrics.webhookBacklog.set(Number(open?.count ?? 0));
    }
    const slots = new Map<string, number>();
    const chosen: string[] = [];
    for (const head of heads) {
      const free = slots.get(head.endpoint_id) ?? this.runtime.config.webhooks.endpointConcurrency - Number(head.sending);
      if (free <= 0) continue;
      slots.set(head.endpoint_id, free - 1);
      chosen.push(head.id);
    }
    if (chosen.length === 0) return 0;
    await connection.execute('update webhook_delivery set status = ? where id in (?)', [WebhookDeliveryStatus.SENDING, chosen], 'run', trx);
    for (const deliveryId of chosen) await this.runtime.jobs.enqueue(tx, deliverQueue, { deliveryId });
    return chosen.length;
  }
}
