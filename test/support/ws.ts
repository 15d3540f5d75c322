import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export interface Recorder<T> {
  events: T[];
  errors: unknown[];
  /** Resolves once `count` events arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * A graphql-ws subscriber as a dashboard would run it: authenticated in connection_init, recording every
 * event. Resolves once the server has had time to register the subscription.
 */
export async function subscribe<T = any>(
  baseUrl: string,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<Recorder<T>> {
  const events: T[] = [];
  const errors: unknown[] = [];
  const waiters: (() => void)[] = [];
  let connected!: () => void;
  const isConnected = new Promise<void>((resolve) => (connected = resolve));
  const client: Client = createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    on: { connected: () => connected() },
  });
  const dispose = client.subscribe<T>(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        if (result.data) events.push(result.data as T);
        waiters.forEach((wake) => wake());
      },
      error: (error) => {
        errors.push(error);
        waiters.forEach((wake) => wake());
      },
      complete: () => undefined,
    },
  );
  await isConnected;
  // The subscription is registered just after the socket is acknowledged; give the server that moment.
  await new Promise((resolve) => setTimeout(resolve, 300));
  return {
    events,
    errors,
    waitFor(count, timeoutMs = 20000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (events.length >= count) {
            clearTimeout(timer);
            resolve(events);
          }
        };
        const timer = setTimeout(() => reject(new Error(`got ${events.length} of ${count} events; errors: ${JSON.stringify(errors)}`)), timeoutMs);
        waiters.push(check);
        check();
      });
    },
    async close() {
      dispose();
      await client.dispose();
    },
  };
}
