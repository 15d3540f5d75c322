import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

/** What a sandbox's store keeps in a state file. */
export interface PersistentStore {
  persisted(): unknown;
  /** Throws, changing nothing, when `data` is not a state it would have written. */
  restore(data: unknown): void;
}

/** How a sandbox's log lines speak of its state file. */
export interface StateFileLog {
  /** Starts each line: `alpha sandbox`. */
  name: string;
  /** What a file it cannot use leads to: `starting empty`. */
  freshStart: string;
  /** The reason logged for a file `restore` refused. */
  reasonOf(error: unknown): string;
}

/** Reads the file now, and writes it when the Fastify instance closes. */
export async function keepStateInFile(
  app: FastifyInstance,
  store: PersistentStore,
  file: string,
  log: StateFileLog,
): Promise<void> {
  await loadStateFile(app, store, file, log);
  app.addHook('onClose', async () => saveStateFile(app, store, file, log));
}

/** A missing file is a provider with nothing yet; one we cannot use is reported and set aside, not fatal. */
async function loadStateFile(
  app: FastifyInstance,
  store: PersistentStore,
  file: string,
  log: StateFileLog,
): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    app.log.warn({ err: error, stateFile: file }, `${log.name}: state file unreadable, ${log.freshStart}`);
    return;
  }
  try {
    store.restore(JSON.parse(text) as unknown);
  } catch (error) {
    const reason = log.reasonOf(error);
    app.log.warn({ stateFile: file, reason }, `${log.name}: state file malformed, ${log.freshStart}`);
  }
}

/**
 * Written beside the target and renamed over it, so a crash mid-write leaves the previous file whole. A failure is
 * logged, not thrown: the hooks closing the rest of the server must still run.
 */
async function saveStateFile(
  app: FastifyInstance,
  store: PersistentStore,
  file: string,
  log: StateFileLog,
): Promise<void> {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(temporary, `${JSON.stringify(store.persisted())}\n`, 'utf8');
    await rename(temporary, file);
  } catch (error) {
    app.log.error({ err: error, stateFile: file }, `${log.name}: state not saved`);
    await rm(temporary, { force: true });
  }
}
