import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { loadConfig } from '../../src/config';
import type { Clock } from '../../src/shared/clock';
import { startStack, type Stack, type StackOptions } from '../../src/stack';
import { databaseServerAt } from '../../dev/database-server';
import { providerSandboxes, sandboxesWanted } from '../../dev/provider-sandboxes';
import { ROOT } from './process';

/** The dashboard's bundle as `npm run build:dev` writes it (the global setup runs it). */
export const DASHBOARD_DIR = path.join(ROOT, 'dist-dev', 'dashboard');

export interface TestStack {
  /** http://127.0.0.1:<port> of a server on this file's own fresh database. */
  url: string;
  /** postgres:// URL of that database (for the CLI and subprocesses). */
  databaseUrl: string;
  stack: Stack;
  /** A forked EntityManager, for arranging data with the project's own bootstrap code. */
  em(): EntityManager;
  /** SQL statements the server has sent so far. */
  statementCount(): number;
  close(): Promise<void>;
}

/** A fresh database for one test file: cloned from the migrated template, or empty (never migrated). */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const server = databaseServerAt(process.env.TEST_PG_ADMIN_URL!);
  const name = `lg_test_${randomBytes(6).toString('hex')}`;
  const url = await server.createDatabase(name, { template: options.empty ? undefined : process.env.TEST_PG_TEMPLATE });
  return { url, drop: () => server.dropDatabase(name) };
}

/**
 * A fresh database cloned from the migrated template, and the whole service on it, on a free port, with the provider
 * sandboxes mounted beside it as `npm start` mounts them (unless `env` says SANDBOX: 'off' and gives provider URLs).
 * `clock` is the time the service reads (default real time); `log` receives its log lines (default: TEST_LOG_LEVEL, silent).
 */
export async function startTestStack(
  env: Record<string, string> = {},
  options: { clock?: Clock; log?: StackOptions['log']; /** Another stack's database, shared (left for its owner to drop). */ sharedDatabaseUrl?: string } = {},
): Promise<TestStack> {
  const database = options.sharedDatabaseUrl
    ? { url: options.sharedDatabaseUrl, drop: () => Promise.resolve() }
    : await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-test-data-'));
  const settings = {
    DATABASE_URL: database.url,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? (options.log ? 'debug' : 'silent'),
    NODE_ENV: 'test',
    // The sandboxes are mounted only when asked for; a stack given a provider URL says SANDBOX: 'off'.
    SANDBOX: 'on',
    ...env,
  };
  const config = loadConfig(settings);
  const extension = sandboxesWanted(settings) ? providerSandboxes() : undefined;
  // The stack runs from the sources here: the dashboard's bundle is the one the global setup built (npm run build:dev).
  const stack = await startStack(config, { seedDemo: false, clock: options.clock, log: options.log, extension, dashboardDir: DASHBOARD_DIR });
  return {
    url: stack.url!,
    databaseUrl: database.url,
    stack,
    em: () => stack.runtime.database.orm.em.fork(),
    statementCount: () => stack.runtime.database.statementCount(),
    async close() {
      await stack.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
