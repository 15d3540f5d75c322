import { performance } from 'node:perf_hooks';
import { createClient, type Client, type ExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { Samples } from './stats';

/** What each subscriber asks for: enough to attribute the event to a run and time it, nothing more. */
export const SUBSCRIPTION = 'subscription BenchPostUpdated { postUpdated { id state version updateTime params { summary } } }';

/** The event the post subscription selects. */
export interface PostUpdatedEvent {
  id: string;
  state: string;
  version: number;
  updateTime: string | null;
  params: { summary: string | null };
}

interface PostUpdatedData {
  postUpdated: PostUpdatedEvent;
}

/**
 * What a subscriber (or a baseline socket) hands on for each `next` frame: its index, the frame's `data`, and the
 * arrival (performance.now(), and Date.now() for comparing with the server's stamps).
 */
export type NextHandler = (subscriber: number, data: Record<string, unknown>, at: number, wallClock: number) => void;

/** The events of posts whose summary starts with the recorder's prefix go to it; others are ignored. */
export function postEventHandler(recorder: PhaseRecorder): NextHandler {
  return (subscriber, data, at, wallClock) => {
    const event = (data as Partial<PostUpdatedData>).postUpdated;
    if (event?.params?.summary?.startsWith(recorder.prefix)) recorder.record(subscriber, event, at, wallClock);
  };
}

/** States a post leaves SENDING for when its publish job is done. */
export const TERMINAL_STATES = new Set(['LIVE', 'ERROR', 'REJECTED']);

/** Arrivals of one event (one post at one version) over all subscribers: how long the fan-out took. */
interface Spread {
  first: number;
  last: number;
  count: number;
}

/**
 * What the subscribers saw of one phase (the posts whose summary starts with `prefix`). Arrival times are taken
 * in the graphql-ws `next` callback, which runs in the same tick as the socket's message event.
 */
export class PhaseRecorder {
  /** Terminal event arrival at the probe (subscriber 0), performance.now() ms, per post id. */
  readonly probeTerminal = new Map<string, { state: string; at: number }>();
  /** Event arrival (wall clock) minus the event's updateTime, for every (subscriber, event) with an updateTime. */
  readonly commitToSubscriber = new Samples();
  readonly spreads = new Map<string, Spread>();
  readonly perSubscriber: Uint32Array;
  received = 0;
  lastEventAt = performance.now();

  constructor(
    readonly prefix: string,
    subscribers: number,
  ) {
    this.perSubscriber = new Uint32Array(subscribers);
  }

  record(subscriber: number, event: PostUpdatedEvent, at: number, wallClock: number): void {
    this.received += 1;
    this.perSubscriber[subscriber]! += 1;
    this.lastEventAt = at;
    if (event.updateTime !== null) this.commitToSubscriber.push(wallClock - Date.parse(event.updateTime));
    if (subscriber === 0 && TERMINAL_STATES.has(event.state) && !this.probeTerminal.has(event.id)) {
      this.probeTerminal.set(event.id, { state: event.state, at });
    }
    const key = `${event.id}:${event.version}`;
    const spread = this.spreads.get(key);
    if (spread) {
      spread.last = at;
      spread.count += 1;
    } else this.spreads.set(key, { first: at, last: at, count: 1 });
  }

  /** Subscribers that got fewer than `expected` events of this phase. */
  short(expected: number): number {
    let count = 0;
    for (const received of this.perSubscriber) if (received < expected) count += 1;
    return count;
  }
}

/**
 * `count` graphql-ws clients, each on its own socket (as many browsers would be), each with one subscription
 * without arguments (`query`; by default `postUpdated`): an organization token sees every post and every update
 * job of its organization, so every subscriber gets every event.
 */
export class SubscriberPool {
  private readonly clients: Client[] = [];
  private readonly sockets = new Set<WebSocket>();
  private handler: NextHandler | undefined;
  private connected = 0;
  readonly errors: string[] = [];
  unexpectedCloses = 0;
  private closing = false;

  constructor(
    private readonly options: { wsUrl: string; token: string; count: number; signal: AbortSignal; query?: string },
  ) {}

  get size(): number {
    return this.options.count;
  }

  /** Events of posts whose summary starts with the recorder's prefix go to it; others are ignored. */
  setRecorder(recorder: PhaseRecorder | undefined): void {
    this.handler = recorder && postEventHandler(recorder);
  }

  /** Every event's data goes to `handler` (undefined: events are dropped). */
  setHandler(handler: NextHandler | undefined): void {
    this.handler = handler;
  }

  /** Opens every socket and subscribes, `batch` sockets at a time; resolves when all are acknowledged. */
  async open(batch = 50, timeoutMs = 120_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (let start = 0; start < this.options.count; start += batch) {
      const end = Math.min(this.options.count, start + batch);
      for (let index = start; index < end; index++) this.clients.push(this.subscribe(index));
      await this.until(() => this.connected >= end || this.errors.length > 0, deadline, 'subscribers to connect');
      if (this.errors.length > 0) throw new Error(`a subscriber failed to connect: ${this.errors[0]}`);
    }
  }

  private subscribe(index: number): Client {
    const client = createClient({
      url: this.options.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${this.options.token}` },
      lazy: true,
      retryAttempts: 0,
      on: {
        opened: (socket) => {
          if (socket instanceof WebSocket) this.sockets.add(socket);
        },
        connected: () => {
          this.connected += 1;
        },
        closed: (event) => {
          if (!this.closing) {
            this.unexpectedCloses += 1;
            const close = event as { code?: number; reason?: string };
            if (this.errors.length < 20) this.errors.push(`subscriber ${index}: socket closed ${close.code ?? ''} ${close.reason ?? ''}`);
          }
        },
      },
    });
    client.subscribe<Record<string, unknown>>(
      { query: this.options.query ?? SUBSCRIPTION },
      {
        next: (result: ExecutionResult<Record<string, unknown>>) => {
          const at = performance.now();
          const wallClock = Date.now();
          if (!result.data || result.errors?.length) {
            if (this.errors.length < 20) this.errors.push(`subscriber ${index}: ${JSON.stringify(result.errors ?? result)}`);
            return;
          }
          this.handler?.(index, result.data, at, wallClock);
        },
        error: (error: unknown) => {
          if (this.closing) return;
          if (this.errors.length < 20) this.errors.push(`subscriber ${index}: ${describe(error)}`);
        },
        complete: () => undefined,
      },
    );
    return client;
  }

  private async until(condition: () => boolean, deadline: number, what: string): Promise<void> {
    while (!condition()) {
      if (this.options.signal.aborted) throw new Error(`aborted while waiting for ${what}`);
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what} (${this.connected}/${this.options.count})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Closes every socket: politely (1000), then by force after `timeoutMs`. */
  async close(timeoutMs = 10_000): Promise<void> {
    this.closing = true;
    await Promise.allSettled(this.clients.map(async (client) => client.dispose()));
    const deadline = performance.now() + timeoutMs;
    while ([...this.sockets].some((socket) => socket.readyState !== WebSocket.CLOSED) && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const socket of this.sockets) if (socket.readyState !== WebSocket.CLOSED) socket.terminate();
    this.sockets.clear();
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (Array.isArray(error)) return JSON.stringify(error);
  if (error && typeof error === 'object' && 'code' in error) {
    // A close event of ws: its reason is a Buffer.
    const close = error as { code: unknown; reason?: Buffer };
    return `socket closed ${String(close.code)} ${close.reason?.toString() ?? ''}`;
  }
  return String(error);
}
