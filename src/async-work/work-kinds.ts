import type { EntityManager } from '@mikro-orm/postgresql';
import { getMetadataStorage, type ClassType } from 'type-graphql';
import type { QueueDefinition } from '../jobs/queue';
import { AsyncWorkStatus, type AsyncWorkKind } from '../jobs/work-ledger';
import { AsyncWorkKindEnum } from './async-work.enums';
import type { Clock } from '../shared/clock';
import type { Database } from '../db/orm';
import type { EventBus } from '../events/event-bus';
import type { JobEngine } from '../jobs/job-engine';

/** What a retry uses: the job queue, and what the resources' reopen rules use (they announce their changes). */
export type RetryDeps = { jobs: JobEngine; database: Database; events: EventBus; clock: Clock };

/**
 * How dead-lettered work of a kind starts again: its record is put back where its job starts from (`reopen`,
 * false when the record has moved on), and the job is enqueued again for the same unit of work.
 */
export interface WorkRetry<P extends object> {
  queue: QueueDefinition<P>;
  reopen(tx: EntityManager, runtime: RetryDeps, payload: P): Promise<boolean>;
}

export function retryWith<P extends object>(queue: QueueDefinition<P>, reopen: WorkRetry<P>['reopen']): WorkRetry<P> {
  return { queue, reopen };
}

/** The GraphQL type of some kinds of work, named by the record they are about, and the resolver of that record. */
export interface WorkType {
  type: ClassType;
  resolver: ClassType;
}

export interface WorkKindDefinition {
  name: AsyncWorkKind;
  /** Its GraphQL type, named by the record it is about (PostWork: `defineWorkType`). */
  type: WorkType;
  /** Absent: its records settle as failed in ways a person resolves by acting on the record (docs/async-work.md). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- checked against its queue by retryWith
  retry?: WorkRetry<any>;
}

export function defineWorkKind(definition: WorkKindDefinition): WorkKindDefinition {
  return definition;
}

const kinds = new Map<AsyncWorkKind, { definition: WorkKindDefinition; typeName: string }>();

/** Adds the modules' kinds, in their order (src/resource-module.ts); the GraphQL enum follows. */
export function addWorkKinds(definitions: readonly WorkKindDefinition[]): void {
  for (const definition of definitions) {
    if (kinds.has(definition.name)) throw new Error(`work kind ${definition.name} is declared twice`);
    const typeName = getMetadataStorage().objectTypes.find((type) => type.target === definition.type.type)?.name;
    if (!typeName) throw new Error(`work kind ${definition.name}: its type is not a GraphQL object type`);
    kinds.set(definition.name, { definition, typeName });
    AsyncWorkKindEnum.add(definition.name, definition.name);
  }
}

export function isWorkKind(name: string): boolean {
  return kinds.has(name);
}

/** The GraphQL types of every kind (AsyncWork's implementations). */
export function workTypes(): ClassType[] {
  return [...new Set([...kinds.values()].map(({ definition }) => definition.type.type))];
}

export function workTypeNameOf(kind: AsyncWorkKind): string | undefined {
  return kinds.get(kind)?.typeName;
}

export function retryOf(kind: AsyncWorkKind): WorkRetry<object> | undefined {
  return kinds.get(kind)?.definition.retry;
}

/** Whether the work may be retried now: its retries ran out, and its kind can start again. */
export function isRetryable(work: { kind: AsyncWorkKind; status: AsyncWorkStatus }): boolean {
  return work.status === AsyncWorkStatus.DEAD_LETTERED && retryOf(work.kind) !== undefined;
}
