import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import { startStack, type Stack } from '../../src/stack';

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

/** A fresh database cloned from the migrated template, and the whole service on it, on a free port. */
export async function startTestStack(env: Record<string, string> = {}): Promise<TestStack> {
  const name = `lg_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name} template ${process.env.TEST_PG_TEMPLATE}`);
  const databaseUrl = new URL(process.env.TEST_PG_ADMIN_URL!);
  databaseUrl.pathname = `/${name}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-test-data-'));
  const config = loadConfig({
    DATABASE_URL: databaseUrl.toString(),
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    NODE_ENV: 'test',
    ...env,
  });
  const stack = await startStack(config, { seedDemo: false });
  return {
    url: stack.url,
    databaseUrl: databaseUrl.toString(),
    stack,
    em: () => stack.database.orm.em.fork() as EntityManager,
    statementCount: () => stack.database.statementCount(),
    async close() {
      await stack.stop();
      await adminQuery(`drop database if exists ${name} with (force)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
