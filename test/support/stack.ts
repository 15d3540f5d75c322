import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import type { Clock } from '../../src/shared/clock';
import { startStack, type Stack, type StackOptions } from '../../src/stack';

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

async function adminQuery(sql: string): Promise<void> {
  const admin = new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A fresh database for one test file: cloned from the migrated template, or empty (never migrated). */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `lg_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(options.empty ? `create database ${name}` : `create database ${name} template ${process.env.TEST_PG_TEMPLATE}`);
  const url = new URL(process.env.TEST_PG_ADMIN_URL!);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`drop database if exists ${name} with (force)`) };
}

/**
 * A fresh database cloned from the migrated template, and the whole service on it, on a free port. `clock` is the
 * time the service reads (default real time); `log` receives its log lines (default: TEST_LOG_LEVEL, silent).
 */
export async function startTestStack(
  env: Record<string, string> = {},
  options: { clock?: Clock; log?: StackOptions['log']; /** Another stack's database, shared (left for its owner to drop). */ sharedDatabaseUrl?: string } = {},
): Promise<TestStack> {
  const database = options.sharedDatabaseUrl
    ? { url: options.sharedDatabaseUrl, drop: async () => undefined }
    : await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-test-data-'));
  const config = loadConfig({
    DATABASE_URL: database.url,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? (options.log ? 'debug' : 'silent'),
    NODE_ENV: 'test',
    // The sandboxes are mounted only when asked for; a stack given a provider URL says SANDBOX: 'off'.
    SANDBOX: 'on',
    ...env,
  });
  const stack = await startStack(config, { seedDemo: false, clock: options.clock, log: options.log });
  return {
    url: stack.url!,
    databaseUrl: database.url,
    stack,
    em: () => stack.runtime.database.orm.em.fork() as EntityManager,
    statementCount: () => stack.runtime.database.statementCount(),
    async close() {
      await stack.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
