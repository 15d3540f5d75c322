import type { EntityClass } from '@mikro-orm/core';
import type { ClassType } from 'type-graphql';
import { addEventTypes } from './activity/activity.enums';
import { addWorkKinds, isWorkKind } from './async-work/work-kinds';
import type { QueueDefinition } from './jobs/queue';
import type { ResourceModule } from './resource-module';

/** The modules of the service, folded once: what the database, the schema and the job engine are built from. */
export interface Composition {
  modules: readonly ResourceModule[];
  entities: EntityClass<object>[];
  resolvers: ClassType[];
  queues: QueueDefinition[];
  authentication: NonNullable<ResourceModule['authentication']>;
}

function unique<T>(what: string, items: T[], nameOf: (item: T) => string): T[] {
  const seen = new Set<string>();
  for (const item of items) {
    const name = nameOf(item);
    if (seen.has(name)) throw new Error(`${what} ${name} is declared by two modules`);
    seen.add(name);
  }
  return items;
}

/**
 * Folds the modules, in order, and registers what they contribute to the shared registries (work kinds, event and
 * record types, which the GraphQL enums list). Called once per process, by src/modules.ts.
 */
export function composeModules(modules: readonly ResourceModule[]): Composition {
  unique('module', [...modules], (module) => module.name);
  const queues = unique('queue', modules.flatMap((module) => module.queues ?? []), (queue) => queue.name);
  addWorkKinds(modules.flatMap((module) => module.workKinds ?? []));
  for (const queue of queues) {
    if (queue.work && !isWorkKind(queue.work.kind)) throw new Error(`queue ${queue.name}: no module declares the work kind ${queue.work.kind}`);
  }
  addEventTypes(
    modules.flatMap((module) => module.recordTypes ?? []),
    modules.flatMap((module) => module.eventTypes ?? []),
  );
  const authenticating = modules.filter((module) => module.authentication);
  if (authenticating.length !== 1) throw new Error(`exactly one module must provide authentication (${authenticating.length} do)`);
  return {
    modules,
    authentication: authenticating[0]!.authentication!,
    entities: unique('entity', modules.flatMap((module) => module.entities ?? []), (entity) => (entity as { name: string }).name),
    // The work types' resolvers come with the kinds that name them.
    resolvers: [...modules.flatMap((module) => module.resolvers ?? []), ...new Set(modules.flatMap((module) => module.workKinds ?? []).map((kind) => kind.type.resolver))],
    queues,
  };
}
