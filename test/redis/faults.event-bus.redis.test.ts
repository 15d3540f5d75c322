import { createClient } from 'redis';
import { eventBusOutageSuite, type BusOutage } from '../support/event-bus-outage';
import { TcpProxy } from '../../dev/tcp-proxy';

/**
 * The Redis event bus down (issue 15, Build 9): the service reaches Redis through a proxy of the test's own, which
 * the test cuts and keeps cut; the machine's Redis itself is never touched. Twice: as a stopped Redis looks to the
 * service (every connection dropped, every new one refused), and as a network that drops every packet (the
 * connections stay open, nothing answers; once it heals, the stalled connections are gone). REDIS_URL names that
 * Redis (jest.config.js leaves this folder out without it).
 */
async function redisOutage(kind: BusOutage['kind']): Promise<BusOutage> {
  const target = new URL(process.env.REDIS_URL!);
  const proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const port = await proxy.listen();
  const proxied = new URL(target.toString());
  proxied.host = `127.0.0.1:${port}`;
  const admin = createClient({ url: target.toString() });
  admin.on('error', () => undefined); // a failure shows in the assertions, not as a crash
  await admin.connect();
  let refusedBefore = 0;
  return {
    env: { REDIS_URL: proxied.toString() },
    holdsDown: true,
    kind,
    async attach() {},
    async cut() {
      refusedBefore = proxy.refused;
      if (kind === 'silent') {
        proxy.stall();
        return;
      }
      proxy.cut();
      // Both connections (subscriber and publisher) try to come back, and are refused.
      await proxy.until(() => proxy.refused >= refusedBefore + 2, 'two refused reconnects');
    },
    async restore() {
      proxy.restore();
    },
    async connections() {
      // Redis names each connection by its client address: the proxy's side of its connections to Redis.
      const ports = new Set(proxy.upstreamPorts());
      const clients = (await admin.clientList()).filter((client) => ports.has(Number(client.addr.split(':').pop())));
      return {
        listen: clients.filter((client) => client.name === 'lg-events-subscribe').length,
        publish: clients.filter((client) => client.name === 'lg-events-publish').length,
      };
    },
    figures: () =>
      kind === 'silent'
        ? `bus connections stalled (nothing forwarded) and then dropped ${proxy.dropped}`
        : `bus connections dropped ${proxy.dropped}; connections refused while cut ${proxy.refused - refusedBefore}`,
    async close() {
      await admin.close();
      await proxy.close();
    },
  };
}

eventBusOutageSuite('Redis stopped, as the event bus sees it (test/redis/faults.event-bus.redis.test.ts)', () => redisOutage('refused'));
eventBusOutageSuite('Redis not answering: every packet dropped (test/redis/faults.event-bus.redis.test.ts)', () => redisOutage('silent'));
