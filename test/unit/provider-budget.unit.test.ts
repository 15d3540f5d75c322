import { ProviderBudget, type SlotStore } from '../../src/providers/shared/provider-budget';

/**
 * A slot store kept in memory, as `lg_reserve_provider_slots` keeps it in PostgreSQL: the next free slot, never
 * before now. One process's budget on its own store: what matters here is how the process spends its slots.
 */
function memoryStore(): SlotStore {
  let nextSlotAt = 0;
  return {
    reserve(_provider, count, intervalMs) {
      const first = Math.max(nextSlotAt, Date.now());
      nextSlotAt = first + count * intervalMs;
      return Promise.resolve(first - Date.now());
    },
  };
}

const quiet = { warn: () => undefined, info: () => undefined };

/** Keeps the event loop busy for `ms`, as a process busy with other work is. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Spinning on purpose: no timer may fire meanwhile.
  }
}

it('keeps its calls a slot apart when one starts late: the late call pushes the next ones, it does not bunch with them', async () => {
  const budget = new ProviderBudget('alpha', 20, memoryStore(), quiet);
  const startedAt: number[] = [];
  const calls = Array.from({ length: 8 }, (_, index) =>
    budget.take().then(() => {
      startedAt.push(Date.now());
      // The first call's process is then busy until well into the second call's slot (50 ms later): the second
      // starts late, but within the time a late slot is still used.
      if (index === 0) setTimeout(() => busy(45), 25);
    }),
  );
  await Promise.all(calls);
  const gaps = startedAt.slice(1).map((at, index) => at - startedAt[index]!);
  // A provider counting any rolling second sees no two calls closer than the budget's interval (timers: 1 ms).
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(49);
  expect(budget.reading()).toMatchObject({ granted: 8, waiting: 0 });
});
