import type { DatabaseServer } from '../../dev/database-server';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as Record<string, unknown>).__LG_DATABASE_SERVER__ as DatabaseServer | undefined;
  const template = process.env.TEST_PG_TEMPLATE;
  if (!server) return;
  if (template) await server.dropDatabase(template);
  await server.stop();
}
