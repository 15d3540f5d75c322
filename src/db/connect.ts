import type { Config } from '../config';
import { startEmbeddedDatabase } from './embedded';

export interface DatabaseLocation {
  url: string;
  embedded: boolean;
  /** Stops the embedded cluster if this process started it; a no-op otherwise. */
  release(): Promise<void>;
}

/** DATABASE_URL when set; otherwise the embedded PostgreSQL under DATA_DIR, started or joined. */
export async function locateDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'embeddedPgPort'>,
  onLog?: (message: string) => void,
): Promise<DatabaseLocation> {
  if (config.databaseUrl) {
    return { url: config.databaseUrl, embedded: false, release: async () => undefined };
  }
  const embedded = await startEmbeddedDatabase({ dataDir: config.dataDir, port: config.embeddedPgPort, onLog });
  return { url: embedded.url, embedded: true, release: () => embedded.stop() };
}
