import { Client } from 'pg';
import { runChange, type FollowingWrite } from '../src/db/change-statement';
import { ChangeNews } from '../src/events/change-news';
// The ledger registers how its rows travel in events (payloadsFromRows): the rows sent below are its.
import '../src/jobs/work-events';
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

describe('the news of a change, sent by its own statement (ChangeNews)', () => {
  /** Fills `?` placeholders as `$n` (the change statement's SQL uses knex's `?`; this test runs it on a bare client). */
  const runOn = (client: Client) => async (sql: string, values: unknown[]) => {
    let index = 0;
    return (await client.query(sql.replace(/\?/g, () => `$${++index}`), values)).rows as Record<string, unknown>[];
  };
  /** The ledger row of `sample('async-work.updated', n)`, as a part of the statement returns it. */
  const workRowPart = (n: number): FollowingWrite => {
    const work = sample('async-work.updated', n);
    const row = Object.fromEntries(Object.entries(work).map(([key, value]) => [key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), value]));
    return {
      sql: `select * from jsonb_to_record(?::jsonb) as r(id text, organization_id text, account_id text, kind text, status text, subject_id text,
        attempts int, max_attempts int, run int, run_attempts int, error text, progress float, created_at timestamptz, started_at timestamptz,
        ended_at timestamptz, updated_at timestamptz, version int)`,
      values: [JSON.stringify(row)],
    };
  };

  it('arrives in the order given, a row built into its payload by the receiver, only when the change is made', async () => {
    const database = await createTestDatabase({ empty: true });
    const client = new Client({ connectionString: database.url });
    await client.connect();
    const { log } = captureLog();
    const bus = await createPostgresEventBus(database.url, log);
    try {
      const received: [string, unknown][] = [];
      for (const topic of ['post.updated', 'async-work.updated', 'jobs.enqueued'] as const) {
        bus.subscribe(topic, (payload) => void received.push([topic, payload]));
      }
      await client.query('create table probe (id int primary key, v int not null); insert into probe values (1, 0)');
      const change = (expected: number) => ({ sql: 'update probe set v = v + 1 where id = 1 and v = ? returning *', values: [expected] });
      const attempt = (expected: number, more: FollowingWrite[] = []) => {
        const work = workRowPart(expected + 1);
        const news = new ChangeNews(bus).add('post.updated', sample('post.updated', expected + 1)).addRows('async-work.updated', work, () => undefined);
        news.add('jobs.enqueued', sample('jobs.enqueued', expected + 1));
        return runChange(runOn(client), change(expected), [work, ...more, ...news.writes()]);
      };

      expect(await attempt(0)).toEqual({ id: 1, v: 1 });
      await waitUntil(() => received.length === 3, 'the three events');
      expect(received).toEqual([
        ['post.updated', sample('post.updated', 1)],
        ['async-work.updated', sample('async-work.updated', 1)],
        ['jobs.enqueued', sample('jobs.enqueued', 1)],
      ]);

      // A guard that matches no row: no change, no news. A statement that fails: neither. The marker published after
      // them arrives alone (the bus keeps the database's order).
      expect(await attempt(0)).toBeUndefined();
      await expect(attempt(1, [{ sql: 'insert into probe select id, v from changed', values: [] }])).rejects.toThrow(/duplicate key/);
      await bus.publish('jobs.enqueued', { queue: 'marker' });
      await waitUntil(() => received.length === 4, 'the marker');
      expect(received[3]).toEqual(['jobs.enqueued', { queue: 'marker' }]);
      expect((await client.query('select v from probe')).rows).toEqual([{ v: 1 }]);
    } finally {
      await bus.close();
      await client.end();
      await database.drop();
    }
  });
});
