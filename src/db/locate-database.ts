import type { Config } from '../config';
import { startEmbeddedDatabase } from './embedded';

export interface DatabaseLocation {
  url: string;
  embedded: boolean;
  /** The data directory actually used: DATA_DIR, or the root fallback. Other files (demo.json) go here too. */
  dataDir: string;
  /** One line for the start-up banner: where the database lives and, for the fallback, why. */
  description: string;
  /** Stops the embedded cluster if this process started (or adopted) it; a no-op otherwise. */
  release(): Promise<void>;
}

/** DATABASE_URL when set; otherwise the embedded PostgreSQL under DATA_DIR, started or joined. */
export async function locateDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dataDirIsDefault' | 'embeddedPgPort'>,
  onLog?: (message: string) => void,
): Promise<DatabaseLocation> {
  if (config.databaseUrl) {
    return { url: config.databaseUrl, embedded: false, dataDir: config.dataDir, description: 'DATABASE_URL', release: async () => undefined };
  }
  const embedded = await startEmbeddedDatabase({
    dataDir: config.dataDir,
    port: config.embeddedPgPort,
    onLog,
    dataDirIsDefault: config.dataDirIsDefault,
  });
  const description =
    `embedded PostgreSQL under ${embedded.clusterDir}` +
    (embedded.relocatedBecause ? ` (moved from ${config.dataDir}: ${embedded.relocatedBecause})` : '') +
    (embedded.owned ? '' : ', joined (another process runs it)');
  return { url: embedded.url, embedded: true, dataDir: embedded.dataDir, description, release: () => embedded.stop() };
}
