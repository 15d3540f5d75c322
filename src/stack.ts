import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from './config';
import { locateDatabase } from './db/connect';
import { migrate, openDatabase, type Database } from './db/orm';
import { seedDemo, type DemoSeed } from './demo/demo.seed';
import { Organization } from './organization/organization.entity';
import { buildServer, type GatewayServer } from './server';

export interface Stack {
  url: string;
  database: Database;
  server: GatewayServer;
  demo: DemoSeed | undefined;
  banner(): string;
  stop(): Promise<void>;
}

const DEMO_FILE = 'demo.json';

/**
 * The demo organization is seeded into a brand-new database (one with no organization) outside production,
 * and its tokens kept in DATA_DIR/demo.json (owner-only) so every start can print them again.
 */
async function demoFor(config: Config, database: Database): Promise<DemoSeed | undefined> {
  const file = path.resolve(config.dataDir, DEMO_FILE);
  const em = database.orm.em.fork() as EntityManager;
  if ((await em.count(Organization, {})) === 0 && config.nodeEnv !== 'production') {
    const demo = await seedDemo(em);
    await fs.mkdir(config.dataDir, { recursive: true });
    await fs.writeFile(file, JSON.stringify(demo, null, 2), { mode: 0o600 });
    return demo;
  }
  if (!existsSync(file)) return undefined;
  const demo = JSON.parse(await fs.readFile(file, 'utf8')) as DemoSeed;
  // The file may belong to another database (DATABASE_URL changed): only trust it if its organization is here.
  return (await em.count(Organization, { id: demo.organization_id })) > 0 ? demo : undefined;
}

/** Brings the whole service up: database (embedded or DATABASE_URL), migrations, demo data, HTTP server. */
export async function startStack(config: Config, options: { seedDemo?: boolean } = {}): Promise<Stack> {
  const location = await locateDatabase(config);
  const database = await openDatabase(location.url);
  try {
    const applied = await migrate(database);
    const demo = options.seedDemo === false ? undefined : await demoFor(config, database);
    const server = await buildServer({
      config,
      database,
      ideToken: () => (config.isDevelopment ? demo?.token : undefined),
    });
    const address = await server.app.listen({ port: config.port, host: config.host });
    const url = address.replace('[::1]', 'localhost');
    return {
      url,
      database,
      server,
      demo,
      banner: () => bannerText(config, url, location.embedded, demo, applied),
      async stop() {
        await server.close();
        await database.close();
        await location.release();
      },
    };
  } catch (error) {
    await database.close();
    await location.release();
    throw error;
  }
}

function bannerText(config: Config, url: string, embedded: boolean, demo: DemoSeed | undefined, applied: string[]): string {
  const lines = [
    '',
    'Listings Gateway is up.',
    `  GraphQL (HTTP, WebSocket and the IDE in a browser): ${url}/graphql`,
    `  REST (the documented paths):                         ${url}/   e.g. ${url}/organization`,
    `  OpenAPI of the REST paths:                           ${url}/openapi.json`,
    `  Health:                                              ${url}/healthz   ${url}/readyz`,
    `  Database: ${embedded ? `embedded PostgreSQL under ${path.resolve(config.dataDir, 'pg')}` : 'DATABASE_URL'}` +
      (applied.length > 0 ? `; migrations applied now: ${applied.join(', ')}` : '; schema up to date'),
    '',
    'Tokens: `npm run cli -- org create --name "My org"` prints an organization and its token;',
    '        `npm run cli -- token create --org <id> [--account <id>]` prints another token.',
  ];
  if (demo) {
    lines.push(
      '',
      `Demo organization ${demo.organization_id}; its token (also in ${path.join(config.dataDir, DEMO_FILE)}):`,
      `  ${demo.token}`,
      `Try: curl -H "Authorization: Bearer ${demo.token}" ${url}/organization`,
    );
  }
  return lines.join('\n');
}
