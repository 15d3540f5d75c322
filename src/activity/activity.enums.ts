import type { EntityClass } from '@mikro-orm/core';
import { ComposedEnum } from '../shared/composed-enum';

/**
 * The kinds of event the activity log keeps (docs/activity-log.md), as the modules declare them: each a state change
 * of one kind of record. An event type's name is its one spelling (`post.state_changed`); GraphQL's enum names it by
 * its key (POST_STATE_CHANGED).
 */

/** A kind of record events are about: its entity, whose snapshot an event carries and whose GraphQL type shows it. */
export interface RecordTypeDefinition<E extends object = object> {
  /** `post`: an event's record_type. */
  name: string;
  /** `POST`: its key in the GraphQL enum. */
  key: string;
  entity: EntityClass<E>;
  /** Whose record it is, when not its `organization` and `account` relations (an account is its own account). */
  owner?(record: E): { organizationId: string | null; accountId: string | null };
}

export interface EventTypeDefinition<E extends object = object> {
  /** `post.state_changed`: the one spelling of the type, in every input and answer. */
  name: string;
  /** `POST_STATE_CHANGED`: its key in the GraphQL enum. */
  key: string;
  record: RecordTypeDefinition<E>;
}

export function defineRecordType<E extends object>(definition: RecordTypeDefinition<E>): RecordTypeDefinition<E> {
  return definition;
}

export function defineEventType<E extends object>(definition: EventTypeDefinition<E>): EventTypeDefinition<E> {
  return definition;
}

export const EventTypeEnum = new ComposedEnum('EventType', 'What changed; the value is the type REST writes (post.state_changed).');
export const EventRecordTypeEnum = new ComposedEnum('EventRecordType');

/** Every event type at once, present and future, where a subscriber chooses types (REST writes it `*`). */
export const ALL_EVENT_TYPES = '*';
/** The event types a subscriber chooses from (webhook endpoints): each type, or ALL. */
export const SubscribedEventTypeEnum = new ComposedEnum<string>('SubscribedEventType', 'An event type to be sent (the value is the type REST writes, post.state_changed), or ALL (`*`): every type, present and future.', {
  key: 'ALL',
  value: ALL_EVENT_TYPES,
  description: 'Every event type, present and future (`*` in REST).',
});

export type EventTypeName = string;
/** An event type's name, or ALL_EVENT_TYPES. */
export type SubscribedEventTypeName = string;
export type EventRecordTypeName = string;

const recordTypes = new Map<string, RecordTypeDefinition>();
const eventTypes = new Map<string, EventTypeDefinition>();

/** Adds the modules' record and event types, in their order (src/resource-module.ts); the GraphQL enums follow. */
export function addEventTypes(records: readonly RecordTypeDefinition[], events: readonly EventTypeDefinition[]): void {
  for (const record of records) {
    if (recordTypes.has(record.name)) throw new Error(`record type ${record.name} is declared twice`);
    recordTypes.set(record.name, record);
    EventRecordTypeEnum.add(record.key, record.name);
  }
  for (const event of events) {
    if (eventTypes.has(event.name)) throw new Error(`event type ${event.name} is declared twice`);
    if (recordTypes.get(event.record.name) !== event.record) throw new Error(`event type ${event.name}: its record type is not declared by a module`);
    eventTypes.set(event.name, event);
    EventTypeEnum.add(event.key, event.name);
    SubscribedEventTypeEnum.add(event.key, event.name);
  }
}

export function eventTypeNamed(name: string): EventTypeDefinition | undefined {
  return eventTypes.get(name);
}

/** Every event type, in the modules' order. */
export function allEventTypes(): EventTypeDefinition[] {
  return [...eventTypes.values()];
}

export function recordTypeNamed(name: string): RecordTypeDefinition | undefined {
  return recordTypes.get(name);
}

/** Every record type, in the modules' order. */
export function allRecordTypes(): RecordTypeDefinition[] {
  return [...recordTypes.values()];
}
