import { OrganizationWatch } from '../../src/demo/demo.watch';
import { LocalListeners } from '../../src/events/event-codec';
import type { Listener } from '../../src/events/event-codec';
import type { Topic, TopicPayloads } from '../../src/events/topics';

/**
 * The demo's waits (src/demo/demo.watch.ts) look again at each event of their organization, but no more often than
 * every 200 ms: a stream of events (a bench posting to the demo organization) makes one look per interval, not one
 * per event. Timers and Date are jest's, so the intervals are exact.
 */

const ORGANIZATION = 'org-1';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** This process's listeners, as the event buses deliver to them. */
function localBus() {
  const listeners = new LocalListeners();
  return {
    subscribe: <T extends Topic>(topic: T, listener: Listener<T>) => listeners.add(topic, listener),
    emit: <T extends Topic>(topic: T, payload: TopicPayloads[T]) => listeners.dispatch(topic, payload, console as never),
  };
}

it('looks once per 200 ms under a stream of events, and at once on the first', async () => {
  const bus = localBus();
  const watch = new OrganizationWatch(bus, ORGANIZATION, new AbortController().signal);
  let looks = 0;
  let done = false;
  const waited = watch.until('the work', async () => {
    looks += 1;
    return done ? [] : ['something'];
  }, 60_000);
  await jest.advanceTimersByTimeAsync(0);
  expect(looks).toBe(1);
  // 100 events over one second: five looks more, one per interval, not one per event.
  for (let i = 0; i < 100; i += 1) {
    bus.emit('post.updated', { organizationId: ORGANIZATION } as TopicPayloads['post.updated']);
    await jest.advanceTimersByTimeAsync(10);
  }
  expect(looks).toBeGreaterThanOrEqual(5);
  expect(looks).toBeLessThanOrEqual(6);
  done = true;
  bus.emit('post.updated', { organizationId: ORGANIZATION } as TopicPayloads['post.updated']);
  await jest.advanceTimersByTimeAsync(200);
  await waited;
  watch.close();
});

it('looks again within the fallback second when no event comes', async () => {
  const bus = localBus();
  const watch = new OrganizationWatch(bus, ORGANIZATION, new AbortController().signal);
  let looks = 0;
  const waited = watch.until('the work', async () => (++looks >= 3 ? [] : ['something']), 60_000);
  await jest.advanceTimersByTimeAsync(0);
  expect(looks).toBe(1);
  await jest.advanceTimersByTimeAsync(1000);
  expect(looks).toBe(2);
  await jest.advanceTimersByTimeAsync(1000);
  await waited;
  expect(looks).toBe(3);
  watch.close();
});
