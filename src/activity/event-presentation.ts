import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Activity events as REST shows them: each the item `GET /events` lists, envelope and record (docs/activity-log.md),
 * the one shape every REST-shaped consumer gets, webhook bodies included (docs/webhooks.md). REST owns that shape
 * (src/rest/event-presenter.ts); the stack hands it to the runtime, so webhooks send it without knowing REST.
 *
 * Given event ids of one organization (any number), read in `em`'s transaction, it answers the JSON text of each event
 * that organization's `GET /events` lists, by id; an id it would not list (past the retention, another's, none) is
 * left out. A record it cannot present fails the call: no event is sent in another shape.
 */
export type PresentEvents = (em: EntityManager, organizationId: string, eventIds: readonly string[]) => Promise<ReadonlyMap<string, string>>;

/** Events one read names by id at most (the `ids` filter): a page of GET /events. */
export const EVENT_IDS_PER_READ = 100;
