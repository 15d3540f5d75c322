import { UniqueConstraintViolationException, type ObjectQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireOrganizationToken, requirePrincipal } from '../access/guards';
import type { Page } from '../shared/page';
import { accountScopeFilter, findAccountWithinReach, resolveAccountScope } from '../account/account.access';
import { DomainError } from '../errors/domain-error';
import { countRequest, countRequestInChange, withCountedRequest, type Limited, type LimitDeps } from '../limits/request-limits';
import type { CountedInChange } from '../limits/rate-limiter';
import type { RateLimitState } from '../errors/domain-error';
import { Organization } from '../organization/organization.entity';
import type { RequestScope } from '../request-scope';
import { findPlain, findPlainAndCount, findPlainWithinBytes, type BoundedPage } from '../db/prepared-reads';
import { isId, NO_MATCH_ID } from '../shared/ids';
import { runChange } from '../db/change-statement';
import { codecOf } from '../db/entity-codec';
import { changeLocked } from '../db/row-lock';
import { insertChange } from '../db/row-writes';
import { statementsApart } from '../db/statements';
import { forgetLocation, recentLocationInScope, rememberLocation, unchangedCheck } from './recent-locations';
import { ChangeNews } from '../events/change-news';
import { sliceOf, type Slice, type SliceRequest } from '../shared/slice';
import { LocationUpdateJob } from './location-update-job.entity';
import { Location } from './location.entity';
import { LocationUpdateStatus } from './location.enums';
import { announceUpdateJobChange, updateJobChangeNews, updateJobChangeWrites, type UpdateJobEventDeps } from './location.events';
import type { CreateLocationInput, LocationFilterArgs, LocationUpdateJobsArgs, LocationsPageArgs, UpdateLocationInput } from './location.inputs';
import { applyLocationChanges, prepareLocationUpdate, prepareNewLocation } from './location.rules';
import { locationPublishQueue, locationUpdateQueue } from './location.queues';
import type { JobEngine } from '../jobs/job-engine';

export type LocationServiceDeps = { jobs: JobEngine } & UpdateJobEventDeps & LimitDeps;

/**
 * Creates a location of the account at once; a job creates it at the alpha provider when the account is
 * connected there (the location is `connected` once the provider knows it). Organization tokens only. After the
 * account's read, one statement counts the request, writes the location and, for a connected account, its job and
 * the job's unit of work (docs/write-path.md).
 */
export async function createLocation(scope: RequestScope<LocationServiceDeps>, args: { accountId?: string | null; input: CreateLocationInput }): Promise<Limited<Location>> {
  requireOrganizationToken(scope);
  const { accountId } = accountScopeFilter(scope, args.accountId);
  const account = await findAccountWithinReach(scope, requirePrincipal(scope), accountId);
  // Checked before counting: a refused request does not use up the limit.
  const fields = prepareNewLocation(args.input);
  const now = scope.runtime.clock.now();
  const { runtime, em } = scope;
  // Written by its own statement (insertChange): a plain instance, not the ORM's entity.
  const location = codecOf(em.getMetadata(), Location).create({ ...fields, account: { id: accountId }, createdAt: now, updatedAt: now });
  const counted = countRequestInChange(scope, 'location-creates');
  const change = { ...insertChange(em.getMetadata(), em.getPlatform(), Location, location, { admittedBy: counted.admittedBy }), locks: counted.preamble };
  const job = account.alphaAccountId ? await runtime.jobs.enqueueWrites(locationPublishQueue, { locationId: location.id }) : undefined;
  // The workers' wake-up, once the statement has run.
  const news = new ChangeNews(runtime.events);
  job?.tell(news);
  const write = () => runChange(statementsApart(em), change, [...counted.writes, ...(job?.writes ?? []), ...news.writes()]);
  try {
    await (job ? job.within(write) : write());
  } catch (error) {
    // A raw statement's error is the driver's: PostgreSQL's unique_violation (the account's reference ids), and
    // foreign_key_violation (the account deleted since it was read: as unknown).
    const { code } = error as { code?: unknown };
    if (code === '23505') throw new DomainError('CONFLICT', 'reference_id is already used by another location of the account');
    if (code === '23503') throw DomainError.notFound('Account');
    throw counted.refusal(error) ?? error;
  }
  await news.announced();
  return { result: location, rateLimit: counted.state() };
}

function locationWhere(accountId: string, filter: LocationFilterArgs): ObjectQuery<Location> {
  return { account: accountId, ...(filter.storeCode ? { referenceId: filter.storeCode } : {}) };
}

/**
 * What is left of one answer's budget of location bytes (LOCATION_PAGE_MAX_BYTES), per request: the lists of one
 * request (aliases of one GraphQL document) share it, read one after another, so no answer grows with the number of
 * lists either. Each list still holds at least its first record, so every list moves on.
 */
interface AnswerBytes {
  remaining: number;
  /** The list being read; the next one waits for it. */
  turn: Promise<unknown>;
}

const answerBytes = new WeakMap<RequestScope, AnswerBytes>();

function readWithinAnswerBytes<T>(scope: RequestScope<LocationServiceDeps>, read: (maxBytes: number) => Promise<BoundedPage<T>>): Promise<BoundedPage<T>> {
  let budget = answerBytes.get(scope);
  if (!budget) answerBytes.set(scope, (budget = { remaining: scope.runtime.config.limits.locationPageBytes, turn: Promise.resolve() }));
  const held = budget;
  const page = held.turn.then(async () => {
    const result = await read(Math.max(held.remaining, 0));
    held.remaining -= result.bytes;
    return result;
  });
  // The next list waits for this one, whether it succeeds or not (a failure is this list's to report).
  held.turn = page.catch(() => undefined); // reported to this list's caller through `page`
  return page;
}

/**
 * The page-numbered list of GET /location, in creation order; counted against the per-token read limit. A page ends
 * before the record that would take the answer past its byte budget: `found`, `page` and `perPage` stay what they
 * are, and `nextSkip` says how many records of the page to skip to read on (null when the page is whole).
 */
export async function listLocationsPage(
  scope: RequestScope<LocationServiceDeps>,
  args: LocationsPageArgs,
): Promise<Limited<Page<'locations', Location> & { nextSkip: number | null }>> {
  const accountId = await resolveAccountScope(scope, args.accountId);
  const skip = args.skip ?? 0;
  if (skip >= args.perPage) throw DomainError.badInput('skip must be less than per_page');
  const counted = await countRequest(scope, 'location-reads');
  const page = await withCountedRequest(counted, () =>
    readWithinAnswerBytes(scope, (maxBytes) =>
      findPlainWithinBytes(scope.em, Location, locationWhere(accountId, args), {
        orderBy: { id: 'asc' },
        limit: args.perPage - skip,
        offset: (args.page - 1) * args.perPage + skip,
        byteBudget: { maxBytes, sizeProperty: 'recordBytes' },
        count: true,
      }),
    ),
  );
  return {
    result: { found: page.matched, page: args.page, perPage: args.perPage, locations: page.items, nextSkip: page.cut ? skip + page.items.length : null },
    rateLimit: counted.state,
  };
}

/**
 * Locations of one account, in creation order, a slice at a time; counted against the per-token read limit. A slice
 * ends early at the answer's byte budget, like a page (then `hasMore`).
 */
export async function listLocations(scope: RequestScope<LocationServiceDeps>, filter: LocationFilterArgs, slice: SliceRequest): Promise<Limited<Slice<Location>>> {
  const accountId = await resolveAccountScope(scope, filter.accountId);
  const counted = await countRequest(scope, 'location-reads');
  const where = locationWhere(accountId, filter);
  const [page, totalCount] = await withCountedRequest(counted, () =>
    Promise.all([
      readWithinAnswerBytes(scope, (maxBytes) =>
        findPlainWithinBytes(scope.em, Location, slice.afterId ? { ...where, id: { $gt: slice.afterId } } : where, {
          orderBy: { id: 'asc' },
          limit: slice.first + 1,
          byteBudget: { maxBytes, sizeProperty: 'recordBytes' },
          count: false,
        }),
      ),
      scope.em.count(Location, where),
    ]),
  );
  const whole = sliceOf(page.items, slice.first, totalCount);
  return { result: { ...whole, hasMore: whole.hasMore || page.cut }, rateLimit: counted.state };
}

/** One location of the account (404 otherwise), read plainly. */
export async function getLocation(scope: RequestScope<LocationServiceDeps>, args: { accountId?: string | null; id: string }): Promise<Location> {
  const accountId = await resolveAccountScope(scope, args.accountId);
  const [location] = isId(args.id) ? await findPlain(scope.em, Location, { id: args.id, account: accountId }, { limit: 1 }) : [];
  if (!location) throw DomainError.notFound('Location');
  return location;
}

export interface UpdateLocationOutcome {
  job: LocationUpdateJob;
  message: string;
}

/**
 * Accepts an update of a location: only the fields that change, checked by the location's rules. A location the
 * provider knows gets a QUEUED job that sends the change there and applies it when the provider took it; one it
 * does not know yet is changed at once (its job is SUCCEEDED from the start, and the publish sends the latest).
 * At most one update is QUEUED or RUNNING per location: another is a 409 (a partial unique index decides, so two
 * concurrent requests cannot both pass). Counted against the account's hourly limit.
 */
export async function updateLocation(
  scope: RequestScope<LocationServiceDeps>,
  args: { accountId?: string | null; locationId: string; serviceItemsCombination?: boolean | null; input: UpdateLocationInput },
): Promise<Limited<UpdateLocationOutcome>> {
  const principal = requirePrincipal(scope);
  const { accountId, location: stored } = await findLocationInScope(scope, args.accountId, args.locationId);
  const { fields, changes } = prepareLocationUpdate(stored, args.input, { combineServiceItems: args.serviceItemsCombination === true });
  const now = scope.runtime.clock.now();
  // A connected location never goes back (its account's disconnect deletes it): its update is queued at once.
  if (stored.connected) {
    // Written by its own statement (insertChange): a plain instance, not the ORM's entity.
    const queued = codecOf(scope.em.getMetadata(), LocationUpdateJob).create({
      organization: { id: principal.organizationId },
      account: stored.account,
      location: stored,
      fields,
      changes,
      createdAt: now,
    });
    const rateLimit = await insertUpdateJobWithJob(scope, queued, countRequestInChange(scope, 'location-updates', { accountId }));
    return { result: { job: queued, message: QUEUED_MESSAGE }, rateLimit };
  }
  const counted = await countRequest(scope, 'location-updates', { accountId });
  const job = await withCountedRequest(counted, async () => {
    try {
      // Under the location's row lock (its update and publish jobs write it too); gone meanwhile: as unknown.
      const accepted = await changeLocked(scope.em, Location, { id: stored.id }, async (location, em) => {
        const connected = location.connected;
        const created = em.create(LocationUpdateJob, {
          organization: em.getReference(Organization, principal.organizationId),
          account: location.account,
          location,
          fields,
          changes,
          status: connected ? LocationUpdateStatus.QUEUED : LocationUpdateStatus.SUCCEEDED,
          createdAt: now,
          startedAt: connected ? null : now,
          finishedAt: connected ? null : now,
        });
        if (!connected) applyLocationChanges(location, changes);
        await em.flush();
        if (connected) await scope.runtime.jobs.enqueue(em, locationUpdateQueue, { jobId: created.id });
        announceUpdateJobChange(em, scope.runtime, created, null);
        return created;
      });
      if (!accepted) throw DomainError.notFound('Location');
      return accepted.result;
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw IN_PROGRESS();
      throw error;
    }
  });
  const message = job.status === LocationUpdateStatus.QUEUED ? QUEUED_MESSAGE : 'The location is not connected to the alpha provider: the update was applied at once';
  return { result: { job, message }, rateLimit: counted.state };
}

const QUEUED_MESSAGE = 'The update was added to the update queue';

/** One unfinished update per location at a time: the unique index that says so (migrations). */
const IN_PROGRESS = () => new DomainError('LOCATION_UPDATE_IN_PROGRESS', 'Another update of this location is in progress; try again when it has finished');

/**
 * A queued update job, its activity event, its job and the job's unit of work, in one statement that also counts
 * the update against its rate limit (docs/write-path.md); their news once it has run. The unique index on
 * unfinished jobs refuses a second one. Answers the rate limit's state.
 */
async function insertUpdateJobWithJob(scope: RequestScope<LocationServiceDeps>, queued: LocationUpdateJob, counted: CountedInChange): Promise<RateLimitState> {
  const { runtime, em } = scope;
  const job = await runtime.jobs.enqueueWrites(locationUpdateQueue, { jobId: queued.id });
  const change = { ...insertChange(em.getMetadata(), em.getPlatform(), LocationUpdateJob, queued, { admittedBy: counted.admittedBy }), locks: counted.preamble };
  // The change's news before the wake-up of the worker that moves it on.
  const news = updateJobChangeNews(runtime, queued);
  job.tell(news);
  try {
    await job.within(() =>
      runChange(statementsApart(em), change, [...counted.writes, ...updateJobChangeWrites(runtime, queued, null), ...job.writes, ...news.writes()]),
    );
  } catch (error) {
    // A raw statement's error is the driver's: PostgreSQL's unique_violation.
    if ((error as { code?: unknown }).code === '23505') throw IN_PROGRESS();
    throw counted.refusal(error) ?? error;
  }
  await news.announced();
  return counted.state();
}

/** Updates of the account's locations, newest first, by page (GET /location/updates). */
export async function listUpdateJobs(
  scope: RequestScope<LocationServiceDeps>,
  args: LocationUpdateJobsArgs,
): Promise<Page<'updates', LocationUpdateJob>> {
  const accountId = await resolveAccountScope(scope, args.accountId);
  const where: ObjectQuery<LocationUpdateJob> = { account: accountId };
  if (args.locationId) where.location = isId(args.locationId) ? args.locationId : NO_MATCH_ID;
  if (args.id) where.id = isId(args.id) ? args.id : NO_MATCH_ID;
  if (args.status) where.status = args.status;
  const [updates, found] = await findPlainAndCount(scope.em, LocationUpdateJob, where, {
    orderBy: { createdAt: 'desc', id: 'desc' },
    limit: args.perPage,
    offset: (args.page - 1) * args.perPage,
  });
  return { found, page: args.page, perPage: args.perPage, updates };
}

/** Updates of the account's locations (of one location, in one status, when given), newest first, a slice at a time. */
export async function listUpdateJobSlice(
  scope: RequestScope<LocationServiceDeps>,
  filter: { accountId?: string | null; locationId?: string | null; status?: LocationUpdateStatus | null },
  slice: SliceRequest,
): Promise<Slice<LocationUpdateJob>> {
  const accountId = await resolveAccountScope(scope, filter.accountId);
  const where: ObjectQuery<LocationUpdateJob> = { account: accountId };
  if (filter.locationId) where.location = isId(filter.locationId) ? filter.locationId : NO_MATCH_ID;
  if (filter.status) where.status = filter.status;
  const [rows, totalCount] = await Promise.all([
    findPlain(scope.em, LocationUpdateJob, slice.afterId ? { ...where, id: { $lt: slice.afterId } } : where, { orderBy: { id: 'desc' }, limit: slice.first + 1 }),
    scope.em.count(LocationUpdateJob, where),
  ]);
  return sliceOf(rows, slice.first, totalCount);
}

/** One update of the account's locations (404 otherwise). */
export async function getUpdateJob(scope: RequestScope<LocationServiceDeps>, args: { accountId?: string | null; id: string }): Promise<LocationUpdateJob> {
  const accountId = await resolveAccountScope(scope, args.accountId);
  const [job] = isId(args.id) ? await findPlain(scope.em, LocationUpdateJob, { id: args.id, account: accountId }, { limit: 1 }) : [];
  if (!job) throw DomainError.notFound('Location update');
  return job;
}

/**
 * The account a request names and the location it acts on there, in one read (404 for either otherwise). For other
 * resources' services.
 */
export async function findLocationInScope(scope: RequestScope, accountIdArg: string | null | undefined, locationId: string): Promise<{ accountId: string; location: Location }> {
  const { accountId, account } = accountScopeFilter(scope, accountIdArg);
  // A plain read (src/db/prepared-reads.ts): the caller reads the location, it changes nothing of it.
  const [location] = isId(locationId) ? await findPlain(scope.em, Location, { id: locationId, account }, { limit: 1 }) : [];
  if (location) return { accountId, location };
  await resolveAccountScope(scope, accountIdArg);
  throw DomainError.notFound('Location');
}

/**
 * `findLocationInScope` for a caller whose statement holds the location to its row (a post's creation): a location
 * this process read before comes from memory (src/location/recent-locations.ts), with `unchanged`, the check that
 * statement must make first (`InChangeOptions.checkFirst`); one read now is kept for the next request. A statement
 * refused by the check (`isLocationChanged`) goes again with `findLocationInScope`'s read.
 */
export async function findLocationInScopeOrRecent(
  scope: RequestScope,
  accountIdArg: string | null | undefined,
  locationId: string,
): Promise<{ accountId: string; location: Location; unchanged?: ReturnType<typeof unchangedCheck> }> {
  const recent = recentLocationInScope(scope, accountIdArg, locationId);
  if (recent) return { ...recent, unchanged: unchangedCheck(scope.em.getMetadata(), recent.location) };
  return findLocationInScopeAfresh(scope, accountIdArg, locationId);
}

/** `findLocationInScope`, its location kept for `findLocationInScopeOrRecent` (the memory's copy of it replaced). */
export async function findLocationInScopeAfresh(scope: RequestScope, accountIdArg: string | null | undefined, locationId: string): Promise<{ accountId: string; location: Location }> {
  forgetLocation(scope, locationId);
  const found = await findLocationInScope(scope, accountIdArg, locationId);
  rememberLocation(scope, found.accountId, found.location);
  return found;
}

/**
 * The locations a request acts on (a campaign's), in the account, read in one plain statement, each given to `each`
 * in the order asked: the first that is not there (404, as `findLocationInScope` answers) or that `each` refuses
 * ends the request where it falls, as reading them one by one would.
 */
export async function findLocationsInScope<T>(
  scope: RequestScope,
  accountIdArg: string | null | undefined,
  locationIds: readonly string[],
  each: (location: Location) => T,
): Promise<{ accountId: string; results: T[] }> {
  const { accountId, account } = accountScopeFilter(scope, accountIdArg);
  const ids = locationIds.filter(isId);
  const found = new Map((ids.length > 0 ? await findPlain(scope.em, Location, { id: { $in: ids }, account }) : []).map((location) => [location.id, location]));
  const results: T[] = [];
  for (const id of locationIds) {
    const location = found.get(id);
    if (!location) {
      // Tells an unknown account (or one out of reach) from an unknown location.
      await resolveAccountScope(scope, accountIdArg);
      throw DomainError.notFound('Location');
    }
    results.push(each(location));
  }
  return { accountId, results };
}

/** The location a request acts on, in the account (404 otherwise). For other resources' services. */
export async function findLocationOfAccount(em: EntityManager, accountId: string, locationId: string): Promise<Location> {
  const location = isId(locationId) ? await em.findOne(Location, { id: locationId, account: accountId }) : null;
  if (!location) throw DomainError.notFound('Location');
  return location;
}
