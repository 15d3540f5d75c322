import type { EntityClass } from '@mikro-orm/core';
import type { Authentication } from './access/authentication';
import type { EventBus } from './events/event-bus';
import type { Clock } from './shared/clock';
import type { FastifyBaseLogger } from 'fastify';
import type { ClassType } from 'type-graphql';
import type { EventTypeDefinition, RecordTypeDefinition } from './activity/activity.enums';
import type { WorkKindDefinition } from './async-work/work-kinds';
import type { AnyWorker } from './jobs/job-engine';
import type { QueueDefinition } from './jobs/queue';
import type { Runtime } from './runtime';

/** Something a module keeps running in a worker process (a dispatcher, a sweep), stopped before the jobs are. */
export interface BackgroundService {
  name: string;
  stop(): Promise<void> | void;
}

/**
 * Everything the service knows of one resource, declared in the resource's folder (README, "Adding a resource").
 * The machinery folds the ordered list of modules (src/modules.ts) and never names a resource.
 */
export interface ResourceModule {
  name: string;
  entities?: readonly EntityClass<object>[];
  resolvers?: readonly ClassType[];
  /** The job queues its workers take. */
  queues?: readonly QueueDefinition[];
  /** The kinds of asynchronous work it records, in the order the enum lists them. */
  workKinds?: readonly WorkKindDefinition[];
  /** The kinds of record its events are about, and its event types (the activity log, webhooks). */
  recordTypes?: readonly RecordTypeDefinition[];
  eventTypes?: readonly EventTypeDefinition[];
  /** How requests authenticate: provided by exactly one module (the one that keeps the credentials). */
  authentication?: (deps: { events: EventBus; clock: Clock; cacheMs: number }) => Authentication;
  /** This process's workers for its queues (ROLE worker or all). */
  workers?: (runtime: Runtime) => readonly AnyWorker[];
  /**
   * Runs once this process's workers take jobs: queues the work owed from before (records made where no job could
   * be queued).
   */
  catchUp?: (runtime: Runtime) => Promise<void>;
  /** What it keeps running beside its workers (ROLE worker or all). */
  services?: (runtime: Runtime, log: FastifyBaseLogger) => Promise<readonly BackgroundService[]>;
}

export function defineModule(module: ResourceModule): ResourceModule {
  return module;
}
