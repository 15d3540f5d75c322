import type { RunStatement } from '../db/statements';
import type { ProviderName } from '../providers/shared/provider-error';
import type { SlotStore } from '../providers/shared/provider-budget';

/**
 * The providers' budgets and pauses in PostgreSQL (Migration20261202090000_ProviderBudgets), shared by every process
 * of the deployment: one statement reserves several call slots; a pause is a row's `paused_until`, which every later
 * reservation respects and a process reads as it starts. Times are the database's clock: processes' clocks may differ.
 */
export function postgresSlotStore(run: RunStatement): SlotStore {
  return {
    async reserve(provider, count, intervalMs) {
      // The function answers in ms from its clock_timestamp(); the clock read next to it dates that answer.
      const [row] = await run(
        'select lg_reserve_provider_slots(?, ?, ?) as first_in_ms, extract(epoch from clock_timestamp()) * 1000 as now_ms',
        [provider, count, intervalMs],
      );
      const nowMs = Number(row!.now_ms);
      return { firstAtMs: nowMs + Number(row!.first_in_ms), nowMs };
    },

    async pause(provider, forMs) {
      await run(
        `insert into provider_budget as b (provider, paused_until) values (?, clock_timestamp() + make_interval(secs => ? / 1000.0))
         on conflict (provider) do update set paused_until = greatest(b.paused_until, excluded.paused_until)`,
        [provider, forMs],
      );
    },

    async pauses() {
      const rows = await run(
        'select provider, extract(epoch from paused_until - clock_timestamp()) * 1000 as left_ms from provider_budget where paused_until > clock_timestamp()',
        [],
      );
      return rows.map((row) => ({ provider: row.provider as ProviderName, leftMs: Number(row.left_ms) }));
    },
  };
}
