/**
 * The dashboard's picture of the asynchronous work (docs/async-work.md) and how events change it. Pure: no DOM,
 * no network, so the rules are unit-tested (test/unit/dashboard-work.unit.test.ts).
 */

import type { AsyncWorkKind as WorkKind, AsyncWorkStatus as WorkStatus, DashboardCountsQuery, WorkFragment } from './generated/graphql';

export type { WorkKind, WorkStatus };

// The statuses are the job engine's, fixed: the list gives the panels their columns. The kinds are the modules'
// (the schema's AsyncWorkKind): the panels show the ones that have work, with labels made from their names.
export const STATUSES = ['QUEUED', 'RUNNING', 'RETRYING', 'SUCCEEDED', 'FAILED', 'DEAD_LETTERED'] as const satisfies readonly WorkStatus[];
// A status the schema gains and the list lacks fails the type-check here.
const _everyStatusListed: Exclude<WorkStatus, (typeof STATUSES)[number]> extends never ? true : never = true;

/** What the failures panel lists. */
export const FAILURE_STATUSES: readonly WorkStatus[] = ['FAILED', 'DEAD_LETTERED'];

/**
 * The follow-ups that poll a provider (a post's or a reply's moderation): one a minute for as long as the provider
 * has not decided. The latest list folds them under their record instead of listing each (docs/operations.md).
 */
export const CHECK_KINDS = ['POST_CHECK', 'REVIEW_REPLY_CHECK'] as const satisfies readonly WorkKind[];

export const isCheck = (kind: WorkKind) => (CHECK_KINDS as readonly WorkKind[]).includes(kind);

/** What the latest list shows: the work of these kinds, in these statuses, of this account (each unset: any). */
export interface WorkFilter {
  kind: WorkKind | null;
  status: WorkStatus | null;
  accountId: string | null;
}

export const NO_FILTER: WorkFilter = { kind: null, status: null, accountId: null };

export function matchesFilter(item: WorkItem, filter: WorkFilter): boolean {
  return (filter.kind === null || item.kind === filter.kind) && (filter.status === null || item.status === filter.status) && (filter.accountId === null || item.accountId === filter.accountId);
}

/** A unit of work of the latest list, or a record's polling checks folded into one row (newest first). */
export type LatestRow = { type: 'work'; item: WorkItem } | { type: 'checks'; kind: WorkKind; subjectId: string; items: WorkItem[] };

const newestOf = (row: LatestRow) => (row.type === 'work' ? row.item : row.items[0]!);

/**
 * The latest list as shown: the work that is not a check, and each record's checks as one row, placed by its newest
 * check; both newest first.
 */
export function foldChecks(latest: readonly WorkItem[], checks: readonly WorkItem[]): LatestRow[] {
  const groups = new Map<string, { type: 'checks'; kind: WorkKind; subjectId: string; items: WorkItem[] }>();
  for (const check of [...checks].sort(newerFirst)) {
    const key = `${check.kind} ${check.subjectId}`;
    const group = groups.get(key);
    if (group) group.items.push(check);
    else groups.set(key, { type: 'checks', kind: check.kind, subjectId: check.subjectId, items: [check] });
  }
  const rows: LatestRow[] = [...latest.map((item) => ({ type: 'work' as const, item })), ...groups.values()];
  return rows.sort((a, b) => newerFirst(newestOf(a), newestOf(b)));
}

/**
 * How a unit's attempts read: those of its current run against what a run may take ("2/6"), and the run when a
 * retry started another ("1/6, run 2"): a retried item's attempts are never "7/6" (docs/operations.md).
 */
export function attemptsLabel(item: Pick<WorkItem, 'runAttempts' | 'maxAttempts' | 'run'>): string {
  return `${item.runAttempts}/${item.maxAttempts}${item.run > 1 ? `, run ${item.run}` : ''}`;
}

export type WorkItem = WorkFragment;
export type WorkCount = DashboardCountsQuery['asyncWorkCounts'][number];

export interface BoardView {
  latest: readonly WorkItem[];
  /** The polling checks, apart (foldChecks puts them into the latest list). */
  checks: readonly WorkItem[];
  failures: readonly WorkItem[];
  counts: readonly WorkCount[];
}

export interface BoardLimits {
  latest: number;
  checks: number;
  failures: number;
  /** Items whose last status is remembered (to move a count from the old status to the new one). */
  remembered: number;
}

export const DEFAULT_LIMITS: BoardLimits = { latest: 50, checks: 100, failures: 50, remembered: 5000 };

/** Newest first, as the API lists: by creation time, then by id for a stable order. */
function newerFirst(a: WorkItem, b: WorkItem): number {
  const byTime = Date.parse(b.createdAt) - Date.parse(a.createdAt);
  return byTime !== 0 ? byTime : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * `item` placed into a newest-first list of at most `limit`: it replaces its older version where it was (its
 * creation time never changes, so its place does not either), is left out when `belongs` says so, and a new item
 * goes where its creation time puts it: the top, for new work. One older than all of a full list stays out.
 */
export function placeItem(list: readonly WorkItem[], item: WorkItem, limit: number, belongs: boolean): WorkItem[] {
  const rest = list.filter((other) => other.id !== item.id);
  if (!belongs) return rest;
  const at = rest.findIndex((other) => newerFirst(item, other) < 0);
  const placed = at < 0 ? [...rest, item] : [...rest.slice(0, at), item, ...rest.slice(at)];
  return placed.slice(0, limit);
}

const countKey = (kind: WorkKind, status: WorkStatus) => `${kind} ${status}`;

/**
 * The work as the panels show it: the latest items, the failures, and the counts by kind and status, kept current
 * by the subscription's events. Each event carries the item's `version`; an older or repeated one changes nothing.
 * A count moves from the item's last known status to its new one; when that status is unknown (the item was never
 * seen, and is not new), the counts are no longer exact and `apply` says so: the caller reads them again.
 */
export class WorkBoard {
  private latest: WorkItem[] = [];
  private checks: WorkItem[] = [];
  private failures: WorkItem[] = [];
  private counts = new Map<string, WorkCount>();
  /** Last version and status of the items seen, oldest seen first (a Map keeps insertion order). */
  private seen = new Map<string, { version: number; status: WorkStatus }>();

  /**
   * `filter` chooses the latest list's work (and the checks'); the failures and the counts follow its account only
   * (they are the account's whole picture).
   */
  constructor(
    private readonly limits: BoardLimits = DEFAULT_LIMITS,
    private readonly filter: WorkFilter = NO_FILTER,
  ) {}

  /**
   * A fresh read (the API's snapshot) replaces everything: the lists, the counts, and what is remembered (only the
   * items listed). Events received while it was read are then applied again: those it already holds change nothing.
   */
  reset(latest: readonly WorkItem[], failures: readonly WorkItem[], counts: readonly WorkCount[], checks: readonly WorkItem[] = []): void {
    this.latest = [...latest].sort(newerFirst).slice(0, this.limits.latest);
    this.checks = [...checks].sort(newerFirst).slice(0, this.limits.checks);
    this.failures = [...failures].sort(newerFirst).slice(0, this.limits.failures);
    this.seen.clear();
    for (const item of [...latest, ...checks, ...failures]) this.remember(item);
    this.setCounts(counts);
  }

  /** The counts read again (periodically, or when an event could not be counted). */
  setCounts(counts: readonly WorkCount[]): void {
    this.counts = new Map(counts.map((count) => [countKey(count.kind, count.status), { ...count }]));
  }

  /** One event. Returns whether the counts are still exact after it. */
  apply(item: WorkItem): { countsExact: boolean } {
    const before = this.seen.get(item.id);
    if (before && before.version >= item.version) return { countsExact: true };
    let countsExact = true;
    // The counts are of the filter's account only: another account's work moves none of them.
    const ofAccount = this.filter.accountId === null || item.accountId === this.filter.accountId;
    if (ofAccount && before) {
      if (before.status !== item.status) countsExact = this.move(item.kind, before.status, -1) && this.move(item.kind, item.status, +1);
    } else if (ofAccount && item.status === 'QUEUED' && item.attempts === 0) {
      // Brand-new work: no status to move from.
      this.move(item.kind, item.status, +1);
    } else if (ofAccount) {
      countsExact = false;
    }
    this.remember(item);
    const listed = matchesFilter(item, this.filter);
    this.latest = placeItem(this.latest, item, this.limits.latest, listed && !isCheck(item.kind));
    this.checks = placeItem(this.checks, item, this.limits.checks, listed && isCheck(item.kind));
    this.failures = placeItem(this.failures, item, this.limits.failures, ofAccount && FAILURE_STATUSES.includes(item.status));
    return { countsExact };
  }

  view(): BoardView {
    const counts = [...this.counts.values()].filter((count) => count.count > 0);
    return { latest: this.latest, checks: this.checks, failures: this.failures, counts };
  }

  /** Adds `delta` to a count; false when a count would go below zero (the counts were not what was thought). */
  private move(kind: WorkKind, status: WorkStatus, delta: number): boolean {
    const key = countKey(kind, status);
    const count = this.counts.get(key)?.count ?? 0;
    if (count + delta < 0) return false;
    this.counts.set(key, { kind, status, count: count + delta });
    return true;
  }

  private remember(item: WorkItem): void {
    const before = this.seen.get(item.id);
    if (before && before.version >= item.version) return;
    // Re-inserted, so the most recently changed items are the last to be forgotten.
    this.seen.delete(item.id);
    this.seen.set(item.id, { version: item.version, status: item.status });
    if (this.seen.size > this.limits.remembered) this.seen.delete(this.seen.keys().next().value!);
  }
}

/** A kind as a person reads it: `POST_PUBLISH` -> `Post publish`. */
export function kindLabel(kind: string): string {
  const words = kind.toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
