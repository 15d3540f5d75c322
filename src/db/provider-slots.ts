import type { ProviderName } from '../providers/shared/provider-error';
import type { SlotStore } from '../providers/shared/provider-budget';
import type { RunStatement } from './statements';

/**
 * The providers' budgets and pauses in PostgreSQL (Migration20261202090000_ProviderBudgets), shared by every process
 * of the deployment: one statement reserves several call slots; a pause is a row's `paused_until`, which every later
 * reservation respects and a process reads as it starts.
 */
export function postgresSlotStore(run: RunStatement): SlotStore {
  return {
    async reserve(provider, count, intervalMs) {
      const [row] = await run('select lg_reserve_provider_slots(?, ?, ?) as first_in_ms', [provider, count, intervalMs]);
      return Number(row?.first_in_ms ?? 0);
    },
  };
}

/** `provider` may not be called before `untilMs` (ms since the epoch) by any process. */
export async function recordProviderPause(run: RunStatement, provider: ProviderName, untilMs: number): Promise<void> {
  await run(
    `insert into provider_budget as b (provider, paused_until) values (?, to_timestamp(? / 1000.0))
     on conflict (provider) do update set paused_until = greatest(b.paused_until, excluded.paused_until)`,
    [provider, untilMs],
  );
}

/** The pauses not yet over, as ms since the epoch. */
export async function readProviderPauses(run: RunStatement): Promise<{ provider: ProviderName; untilMs: number }[]> {
  const rows = await run('select provider, extract(epoch from paused_until) * 1000 as until_ms from provider_budget where paused_until > clock_timestamp()', []);
  return rows.map((row) => ({ provider: row.provider as ProviderName, untilMs: Number(row.until_ms) }));
}
