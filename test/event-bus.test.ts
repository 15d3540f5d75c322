import { Client } from 'pg';
import { createEventBus } from '../src/events/create-event-bus';
import { createPostgresEventBus, type EventBus } from '../src/events/event-bus';
import { captureLog, eventBusSuite, sample, waitUntil, type LogLine } from './support/event-bus-suite';
import { createTestDatabase } from './support/stack';

/** The channel is part of the wire contract between processes (and versions): spelled out, not imported. */
const CHANNEL = 'listings_gateway_events';

/** Connections of the bus on the test database (NOTIFY is scoped to one database, so each file is apart). */
async function countBusConnections(admin: Client): Promise<number> {
  const result = await admin.query<{ count: string }>(
    `select count(*) from pg_stat_activity where datname = current_database() and application_name like 'lg-events-%'`,
  );
  return Number(result.rows[0]!.count);
}

eventBusSuite('PostgreSQL LISTEN/NOTIFY', async () => {
  const database = await createTestDatabase();
  const admin = new Client({ connectionString: database.url });
  await admin.connect();
  return {
    open: (log) => createPostgresEventBus(database.url, log),
    sendRaw: async (raw) => {
      await admin.query('select pg_notify($1, $2)', [CHANNEL, raw]);
    },
    openConnections: () => countBusConnections(admin),
    async stop() {
      await admin.end();
      await database.drop();
    },
  };
});

describe('createEventBus without REDIS_URL', () => {
  it('uses PostgreSQL LISTEN/NOTIFY on the database', async () => {
    const database = await createTestDatabase({ empty: true });
    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    const { log, lines } = captureLog();
    const bus = await createEventBus({ databaseUrl: database.url, log });
    try {
      const received: unknown[] = [];
      bus.subscribe('jobs.enqueued', (payload) => void received.push(payload));
      // A NOTIFY sent by any session of the database reaches the bus.
      await admin.query('select pg_notify($1, $2)', [CHANNEL, JSON.stringify({ topic: 'jobs.enqueued', payload: sample('jobs.enqueued', 1) })]);
      await waitUntil(() => received.length === 1, 'the NOTIFY');
      expect(received).toEqual([sample('jobs.enqueued', 1)]);
      expect(lines.map((line) => line.msg)).toContain('event bus: PostgreSQL LISTEN/NOTIFY');
    } finally {
      await bus.close();
      await admin.end();
      await database.drop();
    }
  });
});

describe('a PostgreSQL bus whose connections are lost', () => {
  /** A bus on a database of its own, an admin connection to cut its connections with, and what it received. */
  async function withBus(
    test: (tools: { bus: EventBus; admin: Client; received: unknown[]; logs: LogLine[] }) => Promise<void>,
  ): Promise<void> {
    const database = await createTestDatabase({ empty: true });
    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    const { log, lines } = captureLog();
    const bus = await createPostgresEventBus(database.url, log);
    try {
      const received: unknown[] = [];
      bus.subscribe('jobs.enqueued', (payload) => void received.push(payload));
      await test({ bus, admin, received, logs: lines });
    } finally {
      await bus.close();
      await admin.end();
      await database.drop();
    }
  }

  const terminate = (admin: Client, applicationName: string) =>
    admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name like $1`, [
      applicationName,
    ]);

  it('publishes right after its publishing connection is cut, before the loss is even noticed', () =>
    withBus(async ({ bus, admin, received }) => {
      await terminate(admin, 'lg-events-publish');
      // No wait: the publish may meet the dead connection before its loss is reported (a race CI hit once).
      await bus.publish('jobs.enqueued', sample('jobs.enqueued', 8));
      await waitUntil(() => received.length === 1, 'the event published on a fresh connection');
      expect(received).toEqual([sample('jobs.enqueued', 8)]);
    }));

  it('reconnects, listens again, and delivers and publishes the events that follow', () =>
    withBus(async ({ bus, admin, received, logs }) => {
      // What an administrator, a failover or a network cut does to both of its connections.
      await terminate(admin, 'lg-events-%');
      // The bus says when it listens again (a count of connections could still see a backend that is dying).
      await waitUntil(() => logs.some((line) => line.msg === 'event listen connection restored'), 'the listener to come back');
      await bus.publish('jobs.enqueued', sample('jobs.enqueued', 7));
      await waitUntil(() => received.length === 1, 'the event after the reconnect');
      expect(received).toEqual([sample('jobs.enqueued', 7)]);
      // Two again (listen and publish), once the terminated backends are gone.
      await waitUntil(async () => (await countBusConnections(admin)) === 2, 'two bus connections');
    }));
});
