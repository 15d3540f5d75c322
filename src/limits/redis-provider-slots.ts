import type { FastifyBaseLogger } from 'fastify';
import { createClient } from 'redis';
import type { ProviderName } from '../providers/shared/provider-error';
import type { SlotStore } from '../providers/shared/provider-budget';

/**
 * The providers' budgets and pauses in Redis, when REDIS_URL is set (the same contract as src/limits/provider-slots.ts,
 * which keeps them in PostgreSQL): per provider a key with its next free slot and one with the end of its pause, in
 * ms of Redis's clock (TIME), each reservation one script run atomically. Keys live a day past their last use.
 */
const RESERVE = `
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
  local first = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now, tonumber(redis.call('GET', KEYS[2]) or '0'))
  redis.call('SET', KEYS[1], string.format('%.3f', first + tonumber(ARGV[1]) * tonumber(ARGV[2])), 'PX', 86400000)
  return { string.format('%.3f', first), string.format('%.3f', now) }`;

const PAUSE = `
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local untilMs = math.max(now + tonumber(ARGV[1]), tonumber(redis.call('GET', KEYS[1]) or '0'))
  redis.call('SET', KEYS[1], tostring(untilMs), 'PX', 86400000)
  return 'OK'`;

const LEFT = `
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  return tostring(tonumber(redis.call('GET', KEYS[1]) or '0') - now)`;

const PROVIDERS: readonly ProviderName[] = ['alpha', 'beta'];

export interface RedisSlotStore extends SlotStore {
  close(): Promise<void>;
}

/** `keyPrefix` keeps deployments (and tests) sharing one Redis apart. */
export async function redisSlotStore(redisUrl: string, log: FastifyBaseLogger, keyPrefix = 'lg:budget:'): Promise<RedisSlotStore> {
  const client = createClient({
    url: redisUrl,
    name: 'lg-provider-budgets',
    // While Redis is away a reservation fails at once: the budget lets calls go unpaced and says so (provider-budget.ts).
    disableOfflineQueue: true,
  });
  // The client reconnects by itself; each failed reservation is already logged by the budget once per outage.
  client.on('error', (error: unknown) => log.debug({ err: error }, 'provider budgets: Redis connection error'));
  await client.connect();
  const next = (provider: ProviderName) => `${keyPrefix}${provider}:next`;
  const paused = (provider: ProviderName) => `${keyPrefix}${provider}:paused`;
  return {
    async reserve(provider, count, intervalMs) {
      const [firstAtMs, nowMs] = (await client.eval(RESERVE, { keys: [next(provider), paused(provider)], arguments: [String(count), String(intervalMs)] })) as [string, string];
      return { firstAtMs: Number(firstAtMs), nowMs: Number(nowMs) };
    },
    async pause(provider, forMs) {
      await client.eval(PAUSE, { keys: [paused(provider)], arguments: [String(Math.ceil(forMs))] });
    },
    async pauses() {
      const left = await Promise.all(PROVIDERS.map(async (provider) => ({ provider, leftMs: Number(await client.eval(LEFT, { keys: [paused(provider)] })) })));
      return left.filter(({ leftMs }) => leftMs > 0);
    },
    async close() {
      await client.close();
    },
  };
}
