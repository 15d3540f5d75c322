import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { EventBus } from '../../src/events/event-bus';
import { TOPICS, type Topic, type TopicPayloads } from '../../src/events/topics';
import { AsyncWorkStatus } from '../../src/jobs/work-ledger';

/**
 * One specification for every event bus backend: each backend's test file describes how to open a bus as a
 * separate process would, and how to reach its transport directly; these cases hold them all to it.
 */
export interface EventBusBackend {
  /** A new bus on the shared transport, as another process of the same deployment would open it. */
  open(log: FastifyBaseLogger): Promise<EventBus>;
  /** Puts a raw message on the bus's channel, past the encoder (as a foreign or broken publisher would). */
  sendRaw(raw: string): Promise<void>;
  /** How many connections the buses of this backend hold open on the transport right now. */
  openConnections(): Promise<number>;
  stop(): Promise<void>;
}

export interface LogLine {
  level: number;
  msg: string;
}

/** A real pino logger (as the process has) whose lines the test can read. */
export function captureLog(): { log: FastifyBaseLogger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { log, lines };
}

export const WARN = 40;
export const ERROR = 50;

export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A payload for every topic: the mapped type makes a new topic fail to compile here until it has one. */
const samples: { [T in Topic]: (n: number) => TopicPayloads[T] } = {
  'post.updated': (n) => ({
    id: `post-${n}`,
    organizationId: 'org-1',
    accountId: 'account-1',
    locationId: 'location-1',
    version: n,
    snapshot: {
      id: `post-${n}`,
      state: 'LIVE',
      source: 'api',
      // Non-ASCII text: the encoding must carry UTF-8 intact on every transport.
      params: { summary: `Café ☕ n°${n}`, topicType: 'STANDARD' },
      campaignId: null,
      providerName: `accounts/a/locations/l/localPosts/${n}`,
      searchUrl: null,
      lastError: null,
      publishedTime: '2026-01-02T03:04:05.000Z',
      scheduledTime: null,
      createdAt: '2026-01-02T03:04:05.000Z',
      updatedAt: null,
      version: n,
    },
  }),
  'async-work.updated': (n) => ({
    id: `work-${n}`,
    organizationId: 'org-1',
    accountId: null,
    kind: 'BETA_BRAND_SYNC',
    status: AsyncWorkStatus.RETRYING,
    subjectId: `brand-${n}`,
    attempts: n,
    maxAttempts: 6,
    run: 1,
    runAttempts: n,
    error: 'The beta provider answered 503 — réessayer',
    progress: null,
    createdAt: '2026-01-02T03:04:05.000Z',
    startedAt: '2026-01-02T03:04:06.000Z',
    endedAt: null,
    updatedAt: '2026-01-02T03:04:06.000Z',
    version: n,
  }),
  'location-update-job.updated': (n) => ({
    id: `job-${n}`,
    organizationId: 'org-1',
    accountId: 'account-1',
    locationId: 'location-1',
    version: n,
    snapshot: { id: `job-${n}`, status: 'RUNNING', fields: ['description'], changes: { description: `Ölmühle n°${n}` }, error: null, version: n },
  }),
  'jobs.enqueued': (n) => ({ queue: `queue-${n}` }),
  'provider.paused': (n) => ({ provider: n % 2 ? 'alpha' : 'beta', until: 1_767_225_600_000 + n * 1000 }),
  'token.revoked': (n) => ({ tokenId: `token-${n}` }),
  'webhooks.pending': () => ({}),
  'activity.recorded': (n) => ({ id: `event-${n}`, organizationId: 'org-1', accountId: n % 2 ? null : 'account-1', type: 'post.state_changed' }),
};

export function sample<T extends Topic>(topic: T, n: number): TopicPayloads[T] {
  return samples[topic](n);
}

export interface Received {
  topic: Topic;
  payload: unknown;
}

/** One simulated process: its own bus, its log, and everything its listeners received, in arrival order. */
export interface BusProcess {
  bus: EventBus;
  logs: LogLine[];
  received: Received[];
}

export function recordAll(bus: EventBus, received: Received[]): () => void {
  const stops = TOPICS.map((topic) => bus.subscribe(topic, (payload) => void received.push({ topic, payload })));
  return () => stops.forEach((stop) => stop());
}

export function eventBusSuite(name: string, start: () => Promise<EventBusBackend>): void {
  describe(`${name} event bus`, () => {
    let backend: EventBusBackend;
    const opened: EventBus[] = [];

    beforeAll(async () => {
      backend = await start();
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((bus) => bus.close()));
    });
    afterAll(async () => {
      await backend?.stop();
    });

    async function openProcess(options: { record?: boolean } = {}): Promise<BusProcess> {
      const { log, lines } = captureLog();
      const bus = await backend.open(log);
      opened.push(bus);
      const received: Received[] = [];
      if (options.record !== false) recordAll(bus, received);
      return { bus, logs: lines, received };
    }

    it('delivers an event published in one process to the listeners of both, for every topic', async () => {
      const [a, b] = [await openProcess(), await openProcess()];
      const expected: Received[] = [];
      for (const [n, topic] of TOPICS.entries()) {
        await a.bus.publish(topic, sample(topic, n));
        expected.push({ topic, payload: sample(topic, n) });
      }
      await waitUntil(() => a.received.length >= expected.length && b.received.length >= expected.length, 'both processes');
      expect(a.received).toEqual(expected);
      expect(b.received).toEqual(expected);
    });

    it('routes each event to the listeners of its topic only', async () => {
      const [a, b] = [await openProcess({ record: false }), await openProcess({ record: false })];
      const byTopic = new Map<Topic, unknown[]>(TOPICS.map((topic) => [topic, []]));
      for (const topic of TOPICS) b.bus.subscribe(topic, (payload) => void byTopic.get(topic)!.push(payload));
      for (const [n, topic] of [...TOPICS, ...TOPICS].entries()) await a.bus.publish(topic, sample(topic, n));
      await waitUntil(() => [...byTopic.values()].every((list) => list.length === 2), 'two events per topic');
      for (const [index, topic] of TOPICS.entries()) {
        expect(byTopic.get(topic)).toEqual([sample(topic, index), sample(topic, index + TOPICS.length)]);
      }
    });

    it('keeps the order of publish calls, even when they are not awaited one by one', async () => {
      const [a, b] = [await openProcess(), await openProcess()];
      const expected: Received[] = [];
      const publishing: Promise<void>[] = [];
      for (let n = 0; n < 60; n += 1) {
        const topic = TOPICS[n % TOPICS.length]!;
        publishing.push(a.bus.publish(topic, sample(topic, n)));
        expected.push({ topic, payload: sample(topic, n) });
      }
      await Promise.all(publishing);
      await waitUntil(() => a.received.length >= 60 && b.received.length >= 60, '60 events in both processes');
      expect(a.received).toEqual(expected);
      expect(b.received).toEqual(expected);
    });

    it('delivers identical events as often as they were published, even when published together', async () => {
      // A bus may send events of one moment together; PostgreSQL would deliver identical NOTIFYs of one transaction once.
      const [a, b] = [await openProcess(), await openProcess()];
      const same = sample('jobs.enqueued', 7);
      await Promise.all([a.bus.publish('jobs.enqueued', same), a.bus.publish('jobs.enqueued', same), a.bus.publish('jobs.enqueued', same)]);
      await a.bus.publish('jobs.enqueued', sample('jobs.enqueued', 8));
      await waitUntil(() => b.received.length >= 4, 'the four events');
      expect(b.received.map((event) => event.payload)).toEqual([same, same, same, sample('jobs.enqueued', 8)]);
    });

    it('gives every process the same order when several processes publish', async () => {
      const [a, b, c] = [await openProcess(), await openProcess(), await openProcess()];
      const expected: Received[] = [];
      for (let n = 0; n < 12; n += 1) {
        const from = [a, b, c][n % 3]!;
        await from.bus.publish('jobs.enqueued', sample('jobs.enqueued', n));
        expected.push({ topic: 'jobs.enqueued', payload: sample('jobs.enqueued', n) });
      }
      await waitUntil(() => [a, b, c].every((p) => p.received.length >= 12), '12 events in three processes');
      for (const p of [a, b, c]) expect(p.received).toEqual(expected);
    });

    it('stops delivering to a listener once it unsubscribes, and only to that one', async () => {
      const [a, b] = [await openProcess({ record: false }), await openProcess()];
      const seen: unknown[] = [];
      const unsubscribe = a.bus.subscribe('jobs.enqueued', (payload) => void seen.push(payload));
      const sentinel: unknown[] = [];
      a.bus.subscribe('post.updated', (payload) => void sentinel.push(payload));

      await b.bus.publish('jobs.enqueued', sample('jobs.enqueued', 1));
      await waitUntil(() => seen.length === 1, 'the first event');
      unsubscribe();
      await b.bus.publish('jobs.enqueued', sample('jobs.enqueued', 2));
      // Events arrive in publish order, so once the later sentinel is here the event before it was dispatched.
      await b.bus.publish('post.updated', sample('post.updated', 3));
      await waitUntil(() => sentinel.length === 1, 'the sentinel');
      expect(seen).toEqual([sample('jobs.enqueued', 1)]);
      await waitUntil(() => b.received.length === 3, 'the other process to get all three');
      expect(b.received.map((r) => r.payload)).toEqual([
        sample('jobs.enqueued', 1),
        sample('jobs.enqueued', 2),
        sample('post.updated', 3),
      ]);
    });

    it('ignores malformed messages, logs them, and delivers the events after them', async () => {
      const [a, b] = [await openProcess(), await openProcess()];
      const malformed = [
        'not json',
        '',
        '[]',
        'null',
        '{"topic":"no.such.topic","payload":{}}',
        '{"topic":"jobs.enqueued"}',
        '{"topic":"jobs.enqueued","payload":null}',
        '{"topic":"jobs.enqueued","payload":"queue"}',
      ];
      for (const raw of malformed) await backend.sendRaw(raw);
      await a.bus.publish('jobs.enqueued', sample('jobs.enqueued', 7));
      await waitUntil(() => a.received.length >= 1 && b.received.length >= 1, 'the event after the malformed ones');
      for (const p of [a, b]) {
        expect(p.received).toEqual([{ topic: 'jobs.enqueued', payload: sample('jobs.enqueued', 7) }]);
        const warnings = p.logs.filter((line) => line.level === WARN && line.msg === 'ignored a malformed event');
        expect(warnings).toHaveLength(malformed.length);
      }
    });

    it('keeps delivering to the other listeners, and later events, when a listener throws', async () => {
      const { bus, logs } = await openProcess({ record: false });
      const after: unknown[] = [];
      bus.subscribe('jobs.enqueued', () => {
        throw new Error('listener bug');
      });
      bus.subscribe('jobs.enqueued', (payload) => void after.push(payload));
      await bus.publish('jobs.enqueued', sample('jobs.enqueued', 1));
      await bus.publish('jobs.enqueued', sample('jobs.enqueued', 2));
      await waitUntil(() => after.length === 2, 'both events at the second listener');
      expect(after).toEqual([sample('jobs.enqueued', 1), sample('jobs.enqueued', 2)]);
      expect(logs.filter((line) => line.level === ERROR && line.msg === 'event listener failed')).toHaveLength(2);
    });

    it('carries an event close to the size limit intact, and refuses a larger one without breaking', async () => {
      const [a, b] = [await openProcess(), await openProcess()];
      const big = sample('post.updated', 1);
      big.snapshot!.params = { summary: 'é'.repeat(3400) }; // ~6.8 kB in UTF-8: inside the 8000-byte limit
      const tooBig = sample('post.updated', 2);
      tooBig.snapshot!.params = { summary: 'x'.repeat(8000) };

      await a.bus.publish('post.updated', big);
      await expect(a.bus.publish('post.updated', tooBig)).rejects.toThrow(/bytes/);
      await a.bus.publish('jobs.enqueued', sample('jobs.enqueued', 3));
      await waitUntil(() => b.received.length >= 2, 'the events around the refused one');
      expect(b.received).toEqual([
        { topic: 'post.updated', payload: big },
        { topic: 'jobs.enqueued', payload: sample('jobs.enqueued', 3) },
      ]);
    });

    it('closes cleanly: its connections end, its publishes become no-ops, the other processes go on', async () => {
      const before = await backend.openConnections();
      const [a, b] = [await openProcess(), await openProcess()];
      expect(await backend.openConnections()).toBe(before + 4); // two per process: listen and publish
      await a.bus.close();
      await waitUntil(async () => (await backend.openConnections()) === before + 2, "the closed process's connections to end");
      await expect(a.bus.publish('jobs.enqueued', sample('jobs.enqueued', 1))).resolves.toBeUndefined();
      await b.bus.publish('jobs.enqueued', sample('jobs.enqueued', 2));
      await waitUntil(() => b.received.length >= 1, 'the event in the open process');
      expect(b.received).toEqual([{ topic: 'jobs.enqueued', payload: sample('jobs.enqueued', 2) }]);
      expect(a.received).toEqual([]);
      await b.bus.close();
      await waitUntil(async () => (await backend.openConnections()) === before, 'every connection to end');
      expect([...a.logs, ...b.logs].filter((line) => line.level >= ERROR)).toEqual([]);
    });
  });
}
