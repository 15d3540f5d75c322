import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { redisSlotStore, type RedisSlotStore } from '../../src/limits/redis-provider-slots';

/**
 * The providers' budgets in Redis (REDIS_URL; docs/jobs.md, "Provider budgets"): two stores, as two processes of one
 * deployment hold them, share one pace and one pause. Keys are this run's own, so a running server or another test
 * run on the same Redis cannot interfere. The figures asserted are the store's answers (ms from its now, on Redis's
 * clock), with room for the time between two calls.
 */
const redisUrl = process.env.REDIS_URL!;
const prefix = `lg-test:budget:${randomBytes(6).toString('hex')}:`;
const log = pino({ level: 'silent' });
let first: RedisSlotStore;
let second: RedisSlotStore;

beforeAll(async () => {
  first = await redisSlotStore(redisUrl, log, prefix);
  second = await redisSlotStore(redisUrl, log, prefix);
});

afterAll(async () => {
  await first?.close();
  await second?.close();
});

/** How many ms after the store's now the first slot of a reservation is. */
async function reserveIn(store: RedisSlotStore, provider: 'alpha' | 'beta', count: number, intervalMs: number): Promise<number> {
  const { firstAtMs, nowMs } = await store.reserve(provider, count, intervalMs);
  return firstAtMs - nowMs;
}

it('spaces the slots of every process at the budget’s rate', async () => {
  const now = await reserveIn(first, 'alpha', 5, 1000);
  expect(now).toBeLessThanOrEqual(0);
  // The other process's slots come after the first one's five, a second apart.
  const after = await reserveIn(second, 'alpha', 2, 1000);
  expect(after).toBeGreaterThan(4000);
  expect(after).toBeLessThanOrEqual(5000);
  const later = await reserveIn(first, 'alpha', 1, 1000);
  expect(later).toBeGreaterThan(after + 1000);
  expect(later).toBeLessThanOrEqual(7000);
});

it('answers times on Redis’s clock to the sub-millisecond, as slots a fraction of a millisecond apart need', async () => {
  // 3,000 slots a third of a millisecond apart: the next reservation's first is 999.9 ms after, not rounded.
  const { firstAtMs, nowMs } = await first.reserve('beta', 3000, 0.3333);
  const next = await second.reserve('beta', 1, 0.3333);
  expect(next.firstAtMs - firstAtMs).toBeCloseTo(999.9, 2);
  expect(Math.abs(nowMs - Date.now())).toBeLessThan(60_000);
});

it('keeps a pause for every process: no slot before it ends, and it is listed while it lasts', async () => {
  await first.pause('beta', 10_000);
  const slot = await reserveIn(second, 'beta', 1, 100);
  expect(slot).toBeGreaterThan(9000);
  expect(slot).toBeLessThanOrEqual(10_000);
  const pauses = await second.pauses();
  expect(pauses).toEqual([{ provider: 'beta', leftMs: expect.any(Number) }]);
  expect(pauses[0]!.leftMs).toBeGreaterThan(9000);
  // A shorter pause does not shorten a longer one.
  await second.pause('beta', 1000);
  expect((await first.pauses())[0]!.leftMs).toBeGreaterThan(9000);
});
