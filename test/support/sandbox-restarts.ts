import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A sandbox server a test starts on a state file: where it listens, and how to close it. */
export interface StartedSandbox {
  url: string;
  close(): Promise<void>;
}

/**
 * For a describe block that closes a sandbox and starts it again on the same state file: a temporary directory
 * for the files, and sandboxes that are closed in afterAll however a test ended (a failed test leaves its own
 * open). Call at the top of the describe block: it registers its beforeAll and afterAll there.
 */
export function sandboxRestarts<T extends StartedSandbox, O = undefined>(prefix: string, startOne: (stateFile: string, options?: O) => Promise<T>) {
  let directory = '';
  const running = new Set<T>();
  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), prefix));
  });
  afterAll(async () => {
    await Promise.all([...running].map((started) => started.close()));
    await rm(directory, { recursive: true, force: true });
  });
  return {
    /** A path in the describe block's own temporary directory. */
    file: (...names: string[]) => path.join(directory, ...names),
    async start(stateFile: string, options?: O): Promise<T> {
      const started = await startOne(stateFile, options);
      running.add(started);
      return {
        ...started,
        close: async () => {
          running.delete(started);
          await started.close();
        },
      };
    },
  };
}
