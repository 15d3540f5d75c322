import { setImmediate as nextTurn } from 'node:timers/promises';
import { currentCallPriority, currentOrigin, runCarrying, runWithOrigin } from '../../src/observability/origin';

/**
 * The origin and a job's call priority share one AsyncLocalStorage (src/observability/origin.ts): setting one keeps
 * the other, across awaits and callbacks, as two stores did. The black-box tests hold the uses to it
 * (test/request-ids.test.ts, test/provider-budgets*.test.ts, test/jobs.priority.processes.test.ts).
 */
describe('what a piece of work carries', () => {
  it('is nothing outside any work', () => {
    expect(currentOrigin()).toBeUndefined();
    expect(currentCallPriority()).toBeUndefined();
  });

  it("keeps a job's call priority within an origin set inside it, across awaits and callbacks", async () => {
    const seen = await runCarrying({ callPriority: -3 }, () =>
      runWithOrigin({ requestId: 'req-inner' }, async () => {
        await nextTurn();
        const inCallback = await new Promise<[string | undefined, number | undefined]>((resolve) =>
          setTimeout(() => resolve([currentOrigin()?.requestId, currentCallPriority()]), 1),
        );
        return { afterAwait: [currentOrigin()?.requestId, currentCallPriority()], inCallback };
      }),
    );
    expect(seen).toEqual({ afterAwait: ['req-inner', -3], inCallback: ['req-inner', -3] });
  });

  it('keeps the origin within a priority set inside it, and gives each its own values back after', async () => {
    const seen = await runWithOrigin({ requestId: 'req-outer', refusalExpected: true }, async () => {
      const inner = await runCarrying({ callPriority: 0 }, async () => {
        await nextTurn();
        return [currentOrigin(), currentCallPriority()];
      });
      return { inner, after: [currentOrigin()?.requestId, currentCallPriority()] };
    });
    expect(seen).toEqual({ inner: [{ requestId: 'req-outer', refusalExpected: true }, 0], after: ['req-outer', undefined] });
    expect([currentOrigin(), currentCallPriority()]).toEqual([undefined, undefined]);
  });

  it("replaces what it names: a job's origin and priority over those it was taken within", async () => {
    const seen = await runCarrying({ origin: { requestId: 'req-a' }, callPriority: 0 }, () =>
      runCarrying({ origin: { requestId: 'req-b' }, callPriority: -1 }, async () => {
        await nextTurn();
        return [currentOrigin()?.requestId, currentCallPriority()];
      }),
    );
    expect(seen).toEqual(['req-b', -1]);
  });
});
