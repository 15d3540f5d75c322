import { execSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from './ports';

/**
 * Once per test run: build dist/ (the CLI and subprocess tests run it), start a PostgreSQL (DATABASE_URL when
 * set, else an embedded one in a temporary directory on a free port), and migrate a template database that
 * every test file clones (CREATE DATABASE ... TEMPLATE is far cheaper than migrating per file).
 */
export default async function globalSetup(): Promise<void> {
  execSync('npm run build --silent', { stdio: 'inherit' });
  const root = path.resolve(__dirname, '../..');
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { startEmbeddedDatabase } = require(path.join(root, 'dist/src/db/embedded')) as typeof import('../../src/db/embedded');
  const { openDatabase, migrate } = require(path.join(root, 'dist/src/db/orm')) as typeof import('../../src/db/orm');

  let adminUrl: string;
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-test-pg-'));
    const port = await freePort();
    const embedded = await startEmbeddedDatabase({ dataDir, port, databaseName: 'postgres' });
    adminUrl = embedded.adminUrl;
    (globalThis as Record<string, unknown>).__LG_EMBEDDED__ = { embedded, dataDir };
  }
  const template = `lg_template_${process.pid}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  await admin.end();

  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${template}`;
  const database = await openDatabase(templateUrl.toString());
  await migrate(database);
  await database.close();

  process.env.TEST_PG_ADMIN_URL = adminUrl;
  process.env.TEST_PG_TEMPLATE = template;
}
