import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Activity events as REST shows them, each the item `GET /events` lists (docs/activity-log.md): the one shape webhook
 * bodies have too (docs/webhooks.md, "Ordering"). REST owns it (src/rest/event-presenter.ts); the stack hands it to
 * the runtime, so webhooks send it without knowing REST. Answers each event's JSON text by id, read in `em`'s
 * transaction; an id `GET /events` would not list is left out, and a record it cannot present fails the call.
 */
export type PresentEvents = (em: EntityManager, organizationId: string, eventIds: readonly string[]) => Promise<ReadonlyMap<string, string>>;

/** Events one read names by id at most (the `ids` filter): a page of GET /events. */
export const EVENT_IDS_PER_READ = 100;
