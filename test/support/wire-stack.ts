import { Client } from 'pg';
import { startWireCounter, type WireCounter } from '../../dev/pg-wire-counter';
import { createTestDatabase, startTestStack, type TestStack } from './stack';

/** A stack whose every connection to its own database goes through a protocol proxy that counts the statements. */
export interface WireStack {
  stack: TestStack;
  counter: WireCounter;
  /** A connection of the test's own, beside the proxy (its statements are not counted). */
  direct: Client;
  close(): Promise<void>;
}

/** Starts a database, the counting proxy before it and a stack configured by `env` through the proxy. */
export async function startWireStack(env: Record<string, string>): Promise<WireStack> {
  const database = await createTestDatabase();
  const url = new URL(database.url);
  const counter = await startWireCounter({ host: url.hostname, port: Number(url.port) });
  const stack = await startTestStack(env, { sharedDatabaseUrl: counter.urlFor(database.url) });
  const direct = new Client({ connectionString: database.url });
  await direct.connect();
  return {
    stack,
    counter,
    direct,
    async close() {
      await direct.end();
      await stack.close();
      await counter.close();
      await database.drop();
    },
  };
}
