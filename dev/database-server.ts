import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedDatabase } from '../src/db/embedded';
import { migrate, openDatabase } from '../src/db/orm';
import { freePort } from './ports';
import { composition } from '../src/modules';

/**
 * The PostgreSQL the tests and the benchmarks make their throwaway databases on: DATABASE_URL's server when it is
 * set (DATABASE_URL names the database to connect to for creating and dropping others), else an embedded cluster
 * of its own in a temporary directory, on a free port. Not part of the product: the service itself uses
 * DATABASE_URL's database, or the embedded one under DATA_DIR (src/db/connect.ts).
 */
export interface DatabaseServer {
  /** postgres:// URL of the maintenance database: what databases are created and dropped through. */
  adminUrl: string;
  /** The embedded cluster's postmaster, while it runs (the benchmarks report its CPU); undefined on DATABASE_URL's server. */
  postmasterPid(): number | undefined;
  /** Creates database `name` (a clone of `template`, or empty), migrated when asked; resolves with its URL. */
  createDatabase(name: string, options?: { template?: string; migrate?: boolean }): Promise<string>;
  /** Drops database `name` if it exists, disconnecting whoever still uses it. */
  dropDatabase(name: string): Promise<void>;
  /** Stops the embedded cluster this process started and removes its directory; DATABASE_URL's server is left alone. */
  stop(): Promise<void>;
  /** The last resort when stopping hangs: kills the embedded cluster at once and removes its directory. */
  kill(): void;
}

/** Names are ours (letters, digits, underscores), quoted all the same. */
function identifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

function readPostmasterPid(clusterDir: string): number | undefined {
  const file = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * The server at `adminUrl`. Without `cluster` it is not this process's to stop (DATABASE_URL's, or the one a test
 * run's global setup started, seen from a test file); with it, the embedded cluster this process started.
 */
export function databaseServerAt(adminUrl: string, cluster?: { dir: string; stop(): Promise<void>; remove(): void }): DatabaseServer {
  const urlOf = (name: string) => {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const postmasterPid = () => (cluster ? readPostmasterPid(cluster.dir) : undefined);
  const killPostmaster = () => {
    const pid = postmasterPid();
    try {
      if (pid !== undefined) process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  return {
    adminUrl,
    postmasterPid,
    async createDatabase(name, options = {}) {
      await adminQuery(adminUrl, `create database ${identifier(name)}${options.template ? ` template ${identifier(options.template)}` : ''}`);
      const url = urlOf(name);
      if (options.migrate) {
        const database = await openDatabase(url, { entities: composition.entities });
        try {
          await migrate(database);
        } finally {
          await database.close();
        }
      }
      return url;
    },
    dropDatabase: (name) => adminQuery(adminUrl, `drop database if exists ${identifier(name)} with (force)`),
    async stop() {
      if (!cluster) return;
      // pg_ctl may fail to stop it (it hung, or was killed halfway): nothing of it may outlive the run.
      await cluster.stop().catch(killPostmaster);
      cluster.remove();
    },
    kill() {
      if (!cluster) return;
      killPostmaster();
      cluster.remove();
    },
  };
}

/**
 * DATABASE_URL's server when `databaseUrl` is set; otherwise an embedded cluster started for this process, under a
 * new temporary directory named after `directoryPrefix`, which stop() removes.
 */
export async function startDatabaseServer(options: { databaseUrl: string | undefined; directoryPrefix: string }): Promise<DatabaseServer> {
  if (options.databaseUrl) return databaseServerAt(options.databaseUrl);
  const dataDir = mkdtempSync(path.join(tmpdir(), options.directoryPrefix));
  const remove = () => rmSync(dataDir, { recursive: true, force: true });
  try {
    const embedded = await startEmbeddedDatabase({ dataDir, port: await freePort(), databaseName: 'postgres' });
    return databaseServerAt(embedded.adminUrl, { dir: embedded.clusterDir, stop: () => embedded.stop(), remove });
  } catch (error) {
    remove();
    throw error;
  }
}
