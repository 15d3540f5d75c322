import { execSync } from 'node:child_process';
import path from 'node:path';

/**
 * Once per test run: build dist/ and dist-dev/ (the CLI and subprocess tests run them), start a PostgreSQL (DATABASE_URL when
 * set, else an embedded one in a temporary directory on a free port), and migrate a template database that
 * every test file clones (CREATE DATABASE ... TEMPLATE is far cheaper than migrating per file).
 */
export default async function globalSetup(): Promise<void> {
  execSync('npm run build --silent && npm run build:dev --silent', { stdio: 'inherit' });
  // From the build, not through Jest's transform: this process also runs the tests when Jest runs them in band (one
  // file), and entities loaded here through the transform would share MikroORM's global metadata with theirs.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a path known at run time, loaded as built
  const { startDatabaseServer } = require(path.resolve(__dirname, '../../dist-dev/dev/database-server')) as typeof import('../../dev/database-server');
  const server = await startDatabaseServer({ databaseUrl: process.env.DATABASE_URL, directoryPrefix: 'lg-test-pg-' });
  const template = `lg_template_${process.pid}`;
  await server.dropDatabase(template);
  await server.createDatabase(template, { migrate: true });
  // For the global teardown, which runs in this process.
  (globalThis as Record<string, unknown>).__LG_DATABASE_SERVER__ = server;
  process.env.TEST_PG_ADMIN_URL = server.adminUrl;
  process.env.TEST_PG_TEMPLATE = template;
}
