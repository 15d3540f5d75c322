import type { EntityClass, MetadataStorage } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { codecOf, snapshotSql, type EntitySnapshot } from '../db/entity-codec';

/**
 * An entity carried by an event: its id and version, and the entity as it was at that change (a snapshot by its
 * metadata, src/db/entity-codec.ts) when that fits the event.
 */
export interface EntityEvent {
  id: string;
  version: number;
  snapshot?: EntitySnapshot;
}

/** PostgreSQL NOTIFY carries at most 8000 bytes; larger entities travel as ids and are loaded by the receiver. */
const MAX_SNAPSHOT_BYTES = 7000;

/** The snapshot of an entity for an event, or undefined when it is too large to travel. */
export function eventSnapshot<T extends object>(orm: MikroORM, entity: EntityClass<T>, instance: T): EntitySnapshot | undefined {
  const snapshot = codecOf(orm.getMetadata(), entity).encode(instance);
  return Buffer.byteLength(JSON.stringify(snapshot)) <= MAX_SNAPSHOT_BYTES ? snapshot : undefined;
}

/**
 * `eventSnapshot` built by PostgreSQL from a row of the entity's table (`row`, an alias in a statement's part): null
 * when it is too large to travel. Measured as jsonb's text, which is longer than the compact JSON `eventSnapshot`
 * measures, so a snapshot this lets through fits an event too.
 */
export function eventSnapshotSql<T extends object>(metadata: MetadataStorage, entity: EntityClass<T>, row: string): string {
  const snapshot = snapshotSql(metadata, entity, row);
  return `case when octet_length((${snapshot})::text) <= ${MAX_SNAPSHOT_BYTES} then ${snapshot} end`;
}

/** Entities of events, built once per event however many subscribers it reaches (the event object is shared). */
const fromEvent = new WeakMap<EntityEvent, Promise<unknown>>();
/** Loads for events without a snapshot, shared by the subscribers of one event in this process. */
const inFlight = new Map<string, Promise<unknown>>();

/** The entity of an event: decoded from its snapshot, or loaded (once per id and version) when it had none. */
export function entityOfEvent<T extends object>(orm: MikroORM, entity: EntityClass<T>, event: EntityEvent): Promise<T> {
  let built = fromEvent.get(event) as Promise<T> | undefined;
  if (built) return built;
  if (event.snapshot) {
    built = Promise.resolve(codecOf(orm.getMetadata(), entity).decode(event.snapshot));
  } else {
    const key = `${entity.name}:${event.id}:${event.version}`;
    built = inFlight.get(key) as Promise<T> | undefined;
    if (!built) {
      const em = orm.em.fork();
      const load = em.findOneOrFail(entity, event.id as never) as Promise<T>;
      inFlight.set(key, load);
      const forget = () => setTimeout(() => inFlight.delete(key), 1000).unref();
      load.then(forget, forget);
      built = load;
    }
  }
  fromEvent.set(event, built);
  return built;
}
