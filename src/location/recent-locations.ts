import type { MetadataStorage } from '@mikro-orm/core';
import { LRUCache } from 'lru-cache';
import { requirePrincipal } from '../access/guards';
import type { RequestScope } from '../request-scope';
import { Location } from './location.entity';

/*
 * The connected locations this process read for a post's creation, by id, so that the next post to the same
 * location is one statement instead of a read and a statement (docs/write-path.md, "A post's location as last
 * read"). Nothing is trusted from here: the statement that uses a location checks first that its row is still at
 * the version read (`unchangedCheck`), and a row changed or gone since (a location edited, disconnected, deleted with
 * its account) ends that statement before anything is counted or written; the caller then reads it afresh.
 */

interface RecentLocation {
  location: Location;
  accountId: string;
  organizationId: string;
}

/** Locations kept per process: a few MB, and a location is posted to again or leaves. */
const MAX_RECENT_LOCATIONS = 10_000;

/** The SQLSTATE (lg_refuse) of a statement whose location changed since this process read it. */
export const LOCATION_CHANGED = 'LGLCH';

/** One cache per ORM (its metadata): the stacks of one process (tests) each keep their own. */
const recentByOrm = new WeakMap<MetadataStorage, LRUCache<string, RecentLocation>>();

function recentOf(metadata: MetadataStorage): LRUCache<string, RecentLocation> {
  let recent = recentByOrm.get(metadata);
  if (!recent) recentByOrm.set(metadata, (recent = new LRUCache<string, RecentLocation>({ max: MAX_RECENT_LOCATIONS })));
  return recent;
}

/**
 * The location `locationId` as this process last read it for the account a request names, when the principal may
 * reach it as the read that kept it did (an account token: its own account; an organization token: the account named,
 * of its organization); undefined otherwise, and the caller reads it.
 */
export function recentLocationInScope(scope: RequestScope, accountIdArg: string | null | undefined, locationId: string): { accountId: string; location: Location } | undefined {
  const principal = requirePrincipal(scope);
  const recent = recentOf(scope.em.getMetadata()).get(locationId);
  if (!recent || recent.organizationId !== principal.organizationId) return undefined;
  if (recent.accountId !== (principal.accountId ?? accountIdArg)) return undefined;
  return { accountId: recent.accountId, location: recent.location };
}

/** Keeps a connected location read within the request's reach (its account's organization is the principal's). */
export function rememberLocation(scope: RequestScope, accountId: string, location: Location): void {
  if (!location.connected) return;
  recentOf(scope.em.getMetadata()).set(location.id, { location, accountId, organizationId: requirePrincipal(scope).organizationId });
}

export function forgetLocation(scope: RequestScope, locationId: string): void {
  recentOf(scope.em.getMetadata()).delete(locationId);
}

/** The check a statement makes of a location taken from here (`InChangeOptions.checkFirst`): its row at the version read. */
export function unchangedCheck(metadata: MetadataStorage, location: Location): { sql: string; values: unknown[]; code: string } {
  const meta = metadata.get<Location>(Location.name);
  const column = (property: 'id' | 'version') => `"${meta.properties[property].fieldNames[0]}"`;
  return {
    sql: `exists (select 1 from "${meta.tableName}" where ${column('id')} = ?::uuid and ${column('version')} = ?::int)`,
    values: [location.id, location.version],
    code: LOCATION_CHANGED,
  };
}

export function isLocationChanged(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === LOCATION_CHANGED;
}
