import type { PrincipalCache } from './auth/principal-cache';
import type { Config } from './config';
import type { Database } from './db/orm';
import type { EventBus } from './events/event-bus';
import type { JobEngine } from './jobs/job-engine';
import type { AlphaClient } from './providers/alpha/alpha.client';
import type { Clock } from './shared/clock';

/**
 * The long-lived parts of one process, built once at start-up (src/stack.ts) and reached by services through
 * the request context and by workers directly.
 */
export interface Runtime {
  config: Config;
  database: Database;
  events: EventBus;
  jobs: JobEngine;
  alpha: AlphaClient;
  clock: Clock;
  /** Principals of recently seen tokens (src/auth/principal-cache.ts). */
  principals: PrincipalCache;
}
