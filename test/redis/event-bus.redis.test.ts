import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { createEventBus } from '../../src/events/create-event-bus';
import type { EventBus } from '../../src/events/event-bus';
import { createRedisEventBus } from '../../src/events/redis-event-bus';
import { captureLog, eventBusSuite, recordAll, sample, waitUntil, WARN, type Received } from '../support/event-bus-suite';

/**
 * The Redis bus against a real Redis (REDIS_URL; jest.config.js leaves this folder out without it). Pub/sub
 * channels are global to a Redis server, so every bus here gets its own channel: a running server or another
 * test run on the same Redis cannot interfere.
 */
const redisUrl = process.env.REDIS_URL!;
const DEFAULT_CHANNEL = 'listings_gateway_events';

const newAdmin = () => createClient({ url: redisUrl });
type Admin = ReturnType<typeof newAdmin>;

async function openAdmin(): Promise<Admin> {
  const admin = newAdmin();
  admin.on('error', () => undefined); // a test's failure shows in its assertions, not as a crash
  await admin.connect();
  return admin;
}

/** The bus connections (by CLIENT SETNAME) opened since `sinceId`: the ids Redis gives only grow. */
async function busConnections(admin: Admin, sinceId: number): Promise<{ id: number; name: string }[]> {
  const clients = await admin.clientList();
  return clients
    .filter((client) => client.id > sinceId && client.name.startsWith('lg-events-'))
    .map((client) => ({ id: client.id, name: client.name }));
}

eventBusSuite('Redis pub/sub', async () => {
  const channel = `lg_test_events_${randomBytes(6).toString('hex')}`;
  const admin = await openAdmin();
  const sinceId = await admin.clientId();
  return {
    open: (log) => createRedisEventBus(redisUrl, log, { channel }),
    sendRaw: async (raw) => {
      await admin.publish(channel, raw);
    },
    openConnections: async () => (await busConnections(admin, sinceId)).length,
    async stop() {
      await admin.close();
    },
  };
});

describe('Redis event bus, beyond the shared specification', () => {
  let admin: Admin;
  const opened: EventBus[] = [];

  beforeAll(async () => {
    admin = await openAdmin();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((bus) => bus.close()));
  });
  afterAll(async () => {
    await admin.close();
  });

  it('reconnects and resubscribes after Redis drops its connections, logging it', async () => {
    const channel = `lg_test_events_${randomBytes(6).toString('hex')}`;
    const sinceId = await admin.clientId();
    const { log, lines } = captureLog();
    const a = await createRedisEventBus(redisUrl, log, { channel });
    opened.push(a);
    const mine = await busConnections(admin, sinceId);
    expect(mine.map((c) => c.name).sort()).toEqual(['lg-events-publish', 'lg-events-subscribe']);
    const b = await createRedisEventBus(redisUrl, captureLog().log, { channel });
    opened.push(b);
    const received: Received[] = [];
    recordAll(a, received);

    for (const { id } of mine) await admin.clientKill({ filter: 'ID', id });

    // Pub/sub delivers at most once: what is published while the subscriber is away is lost, so publish
    // until one arrives (the resubscription happened), then check that order holds again.
    let n = 0;
    await waitUntil(
      async () => {
        await b.publish('jobs.enqueued', sample('jobs.enqueued', (n += 1)));
        return received.length > 0;
      },
      'delivery after the reconnection',
      10000,
    );
    // The publisher reconnects too: a publish from the process whose connections were killed gets through.
    await waitUntil(
      () =>
        a.publish('post.updated', sample('post.updated', 1000)).then(
          () => true,
          () => false, // still reconnecting: the publish fails at once rather than hanging
        ),
      'a publish from the reconnected publisher',
      10000,
    );
    await waitUntil(() => received.some((r) => r.topic === 'post.updated'), 'the event of the reconnected publisher');
    const afterReconnect = received.length;
    for (let m = 1; m <= 5; m += 1) await b.publish('jobs.enqueued', sample('jobs.enqueued', 2000 + m));
    await waitUntil(() => received.length === afterReconnect + 5, 'five more events');
    expect(received.slice(afterReconnect).map((r) => r.payload)).toEqual(
      [1, 2, 3, 4, 5].map((m) => sample('jobs.enqueued', 2000 + m)),
    );
    expect(lines.some((line) => line.level === WARN && /subscriber connection lost/.test(line.msg))).toBe(true);
    expect(lines.some((line) => line.level === WARN && /publisher connection lost/.test(line.msg))).toBe(true);
    expect(await busConnections(admin, sinceId)).toHaveLength(4);
  });

  it('refuses to start when Redis cannot be reached, and leaves nothing open', async () => {
    const { log, lines } = captureLog();
    // Port 1 on the loopback: nothing listens there, the connection is refused at once.
    await expect(createRedisEventBus('redis://127.0.0.1:1', log)).rejects.toThrow(/ECONNREFUSED/);
    expect(lines.some((line) => line.msg.includes('connection failed'))).toBe(true);
  });

  it('createEventBus with a REDIS_URL uses Redis on the shared channel, not PostgreSQL', async () => {
    const { log, lines } = captureLog();
    // Nothing answers at this PostgreSQL URL: had createEventBus chosen PostgreSQL, it would fail to start.
    const bus = await createEventBus({ databaseUrl: 'postgres://nobody@127.0.0.1:1/none', redisUrl, log });
    opened.push(bus);
    // A queue no worker has: any running process on this Redis that hears it has nothing to wake. Other services
    // on this Redis (another test file's) publish on the default channel too: only this event is counted.
    const payload = { queue: `lg-test-${randomBytes(4).toString('hex')}` };
    const received: unknown[] = [];
    bus.subscribe('jobs.enqueued', (event) => {
      if (event.queue === payload.queue) received.push(event);
    });
    await admin.publish(DEFAULT_CHANNEL, JSON.stringify({ topic: 'jobs.enqueued', payload }));
    await waitUntil(() => received.length === 1, 'the event on the default channel');
    expect(received).toEqual([payload]);
    expect(lines.map((line) => line.msg)).toContain('event bus: Redis pub/sub');
  });
});
