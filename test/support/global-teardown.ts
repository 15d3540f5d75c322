import { rmSync } from 'node:fs';
import { Client } from 'pg';

export default async function globalTeardown(): Promise<void> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL;
  const template = process.env.TEST_PG_TEMPLATE;
  if (adminUrl && template) {
    const admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${template}`);
    await admin.end();
  }
  const embedded = (globalThis as Record<string, unknown>).__LG_EMBEDDED__ as
    | { embedded: { stop(): Promise<void> }; dataDir: string }
    | undefined;
  if (embedded) {
    await embedded.embedded.stop();
    rmSync(embedded.dataDir, { recursive: true, force: true });
  }
}
