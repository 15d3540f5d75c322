import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { Organization } from '../organization/organization.entity';
import { Post } from '../post/post.entity';
import type { Runtime } from '../runtime';
import { demoWorkMissing, prepareDemo } from './demo.prepare';
import type { DemoProvider } from './demo.provider';
import { DEMO_OWNER } from './demo.seed';

/** Organizations remembered as looked at; past it the memory starts again (a development server's, at worst a query each). */
const MAX_REMEMBERED = 10_000;

/** Demo organizations looked for at start, newest first. */
const MAX_OWED_AT_START = 50;

/** Whether the organization is a demo whose posts are not made yet. */
async function owesPreparation(em: EntityManager, organizationId: string): Promise<boolean> {
  const demo = await em.count(Organization, { id: organizationId, owners: { $contains: [DEMO_OWNER] } });
  return demo > 0 && (await em.count(Post, { organization: organizationId })) === 0;
}

/**
 * The preparation of demo organizations (src/demo/demo.prepare.ts), in a process that runs the workers, outside
 * production: the demo this start seeded, those a CLI seeded while no server ran (found at start), and those a CLI
 * seeds while this server runs (found by the events of their first jobs, which the CLI's commit announces). Each is
 * prepared once here; another process preparing the same demo finds its claim taken.
 */
export class DemoPreparation {
  private readonly runs = new Map<string, Promise<void>>();
  private readonly seen = new Set<string>();
  private readonly controller = new AbortController();
  private unsubscribe: (() => void) | undefined;

  private constructor(
    private readonly runtime: Runtime,
    private readonly provider: DemoProvider | undefined,
    private readonly log: FastifyBaseLogger,
  ) {}

  static async start(runtime: Runtime, options: { provider: DemoProvider | undefined; log: FastifyBaseLogger }): Promise<DemoPreparation> {
    const preparation = new DemoPreparation(runtime, options.provider, options.log);
    // Listening first: a demo seeded between the look below and the subscription is not missed.
    preparation.unsubscribe = runtime.events.subscribe('async-work.updated', (work) => preparation.consider(work.organizationId));
    const em = runtime.database.orm.em.fork();
    const demos = await em.find(
      Organization,
      { owners: { $contains: [DEMO_OWNER] } },
      { fields: ['id'], orderBy: { createdAt: 'desc' }, limit: MAX_OWED_AT_START },
    );
    for (const { id } of demos) {
      preparation.seen.add(id);
      if (await owesPreparation(em, id)) preparation.begin(id);
    }
    return preparation;
  }

  /**
   * Resolves when the preparation of this demo (if this process runs one) has ended, or after `timeoutMs`: then
   * says in the log what it still waits for, and the preparation goes on.
   */
  async ready(organizationId: string, timeoutMs: number): Promise<void> {
    const run = this.runs.get(organizationId);
    if (!run) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      run.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!timedOut) return;
    const missing = await demoWorkMissing(this.runtime.database.orm.em.fork(), organizationId).catch(() => ['(could not be read)']);
    this.log.warn(
      { organizationId, waitingFor: missing },
      `the demo is not ready after ${Math.round(timeoutMs / 1000)} s (waiting for ${missing.join(', ') || 'its posts to be made'}); it goes on being prepared in the background`,
    );
  }

  /** Ends every preparation (its waits stop at once) and resolves when they have. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.controller.abort(new Error('the server is stopping'));
    await Promise.allSettled(this.runs.values());
  }

  private consider(organizationId: string): void {
    if (this.seen.has(organizationId) || this.controller.signal.aborted) return;
    if (this.seen.size >= MAX_REMEMBERED) this.seen.clear();
    this.seen.add(organizationId);
    owesPreparation(this.runtime.database.orm.em.fork(), organizationId).then(
      (owed) => owed && this.begin(organizationId),
      (error: unknown) => {
        // Looked at again on its next event.
        this.seen.delete(organizationId);
        this.log.warn({ err: error, organizationId }, 'could not tell whether an organization is a demo to prepare');
      },
    );
  }

  private begin(organizationId: string): void {
    if (this.runs.has(organizationId) || this.controller.signal.aborted) return;
    const run = prepareDemo(this.runtime, organizationId, { provider: this.provider, signal: this.controller.signal, log: this.log }).then(
      (outcome) => {
        if (outcome === 'taken') this.log.debug({ organizationId }, 'the demo was prepared already');
      },
      (error: unknown) => {
        if (this.controller.signal.aborted) return;
        this.log.error({ err: error, organizationId }, 'the demo could not be prepared');
      },
    );
    this.runs.set(organizationId, run);
  }
}
