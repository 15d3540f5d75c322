import { randomUUID } from 'node:crypto';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { EventBus } from '../../src/events/event-bus';

/**
 * A probe proves that a subscription is live, and orders negative checks: an event published through the real
 * event bus that the subscription's filter lets through. Events travel in publish order, so once a probe
 * published after some event has arrived, that event would have arrived before it.
 */
export interface Probe {
  /** Publishes one probe event; returns its post id. */
  send(): Promise<string>;
}

/** What a probe claims to be: a post of this organization, account and location (any may be chosen to match a filter). */
export interface ProbeScope {
  organizationId: string;
  accountId: string;
  locationId: string;
  /** A fixed post id, for subscriptions filtered by postId; default a new id per probe. */
  postId?: string;
}

/**
 * A probe publishing, on `topic`, a record of the scope at version 0 (which no real record has): `fields` are the
 * record's own fields besides its id, scope and version.
 */
function recordProbe(
  events: EventBus,
  topic: 'post.updated' | 'location-update-job.updated',
  scope: Omit<ProbeScope, 'postId'>,
  fixedId: string | undefined,
  fields: () => Record<string, unknown>,
): Probe {
  return {
    async send() {
      const id = fixedId ?? randomUUID();
      const owner = { organizationId: scope.organizationId, accountId: scope.accountId, locationId: scope.locationId };
      await events.publish(topic, {
        id,
        ...owner,
        version: 0,
        snapshot: { id, organization: owner.organizationId, account: owner.accountId, location: owner.locationId, ...fields(), version: 0 },
      });
      return id;
    },
  };
}

/** Probe events for `postUpdated`: posts in SENDING at version 0. */
export function postProbe(events: EventBus, scope: ProbeScope): Probe {
  return recordProbe(events, 'post.updated', scope, scope.postId, () => ({
    state: 'SENDING',
    source: 'app',
    params: { summary: 'probe' },
    campaignId: null,
    providerName: null,
    searchUrl: null,
    lastError: null,
    publishedTime: null,
    scheduledTime: null,
    createdAt: new Date().toISOString(),
    updatedAt: null,
  }));
}

/** Probe events for `locationUpdateJobUpdated`: update jobs QUEUED at version 0. `jobId` fixes the id, for jobId filters. */
export function updateJobProbe(events: EventBus, scope: Omit<ProbeScope, 'postId'> & { jobId?: string }): Probe {
  return recordProbe(events, 'location-update-job.updated', scope, scope.jobId, () => ({
    status: 'QUEUED',
    fields: [],
    changes: {},
    error: null,
    createdAt: new Date().toISOString(),
    startedAt: null,
    finishedAt: null,
  }));
}

export interface Recorder<T> {
  /** Every event but probes, in arrival order. */
  events: T[];
  errors: unknown[];
  /** Resolves once `count` events arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<T[]>;
  /** Sends a probe and resolves when it arrives: every event published before it has been delivered by then. */
  sync(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The id of a probe event: probes are records at version 0, which no real record has (the subscription's query
 * must select `id` and `version` of its one root field).
 */
function probeIdOf(event: unknown): string | undefined {
  const [record] = Object.values(event as Record<string, { id?: string; version?: number } | null>);
  return record?.version === 0 ? record.id : undefined;
}

/**
 * A graphql-ws subscriber as a dashboard would run it: authenticated in connection_init, recording every event.
 * Resolves once the subscription is live, proven by a probe arriving through it.
 */
export async function subscribe<T = any>(
  baseUrl: string,
  token: string,
  query: string,
  variables: Record<string, unknown> | undefined,
  probe: Probe,
): Promise<Recorder<T>> {
  const events: T[] = [];
  const errors: unknown[] = [];
  const probesSeen = new Set<string>();
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((wake) => wake());
  const client: Client = createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  const dispose = client.subscribe<T>(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        const probeId = result.data ? probeIdOf(result.data) : undefined;
        if (probeId) probesSeen.add(probeId);
        else if (result.data) events.push(result.data);
        notify();
      },
      error: (error) => {
        errors.push(error);
        notify();
      },
      complete: () => undefined,
    },
  );

  /** Waits until `done` holds, re-checking on every message; `every` runs at most each `everyMs` meanwhile. */
  const until = (done: () => boolean, what: string, timeoutMs: number, every?: () => void, everyMs = 100) =>
    waitUntil(waiters, done, () => (errors.length > 0 ? `the subscription failed: ${JSON.stringify(errors)}` : undefined), what, timeoutMs, every, everyMs).catch(
      (error: Error) => {
        throw /^timed out/.test(error.message) ? new Error(`${error.message}; events: ${events.length}, errors: ${JSON.stringify(errors)}`) : error;
      },
    );

  const recorder: Recorder<T> = {
    events,
    errors,
    waitFor: async (count, timeoutMs = 20000) => {
      await until(() => events.length >= count, `${count} events`, timeoutMs);
      return events;
    },
    async sync(timeoutMs = 20000) {
      const id = await probe.send();
      await until(() => probesSeen.has(id), 'the probe', timeoutMs);
    },
    async close() {
      dispose();
      await client.dispose();
    },
  };
  // The subscription is registered a little after the socket is acknowledged: probe until one comes through.
  let sent = new Set<string>();
  await until(
    () => [...sent].some((id) => probesSeen.has(id)),
    'the subscription to go live',
    20000,
    () => void probe.send().then((id) => (sent = new Set([...sent, id]))),
  );
  return recorder;
}

/**
 * Resolves once `done()` holds, checked again whenever a member of `waiters` is called (a message arrived); rejects
 * when `failed()` names a failure, or after `timeoutMs`. `every` runs at once and each `everyMs` meanwhile (probes).
 */
export function waitUntil(
  waiters: Set<() => void>,
  done: () => boolean,
  failed: () => string | undefined,
  what: string,
  timeoutMs: number,
  every?: () => void,
  everyMs = 100,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let repeat: NodeJS.Timeout | undefined;
    const finish = (error?: Error) => {
      clearTimeout(timer);
      clearInterval(repeat);
      waiters.delete(check);
      if (error) reject(error);
      else resolve();
    };
    const check = () => {
      if (done()) return finish();
      const failure = failed();
      if (failure) finish(new Error(`${what}: ${failure}`));
    };
    const timer = setTimeout(() => finish(new Error(`timed out waiting for ${what}`)), timeoutMs);
    waiters.add(check);
    if (every) {
      every();
      repeat = setInterval(every, everyMs);
    }
    check();
  });
}
