import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { AlphaLocalPost, AlphaLocation, AlphaPostState } from '../../providers/alpha/alpha.types';
import { validateLocation } from './alpha-sandbox.locations';
import { validateLocalPost } from './alpha-sandbox.validation';

/** What the controls can change. `reset` returns to DEFAULT_ALPHA_SANDBOX_CONFIG. */
export interface AlphaSandboxConfig {
  /** Added before every provider answer (not the controls'). */
  latencyMs: number;
  /** How long a new post reports PROCESSING before LIVE (or REJECTED). 0: at once. */
  processingMs: number;
  /** A summary containing this becomes REJECTED; null: nothing is rejected. */
  rejectMarker: string | null;
  /** Accepted edits per location in any rolling minute of the clock; the next is answered 429. */
  locationEditsPerMinute: number;
}

export const DEFAULT_ALPHA_SANDBOX_CONFIG: Readonly<AlphaSandboxConfig> = {
  latencyMs: 0,
  processingMs: 0,
  rejectMarker: '[[reject]]',
  locationEditsPerMinute: 10,
};

export type AlphaSandboxPostCallKind = 'create' | 'get' | 'list' | 'delete';
export type AlphaSandboxLocationCallKind = 'location-create' | 'location-get' | 'location-update' | 'location-list';
export type AlphaSandboxCallKind = AlphaSandboxPostCallKind | AlphaSandboxLocationCallKind;

/** A scripted failure: the next `count` provider calls that match fail with `status`. */
export interface AlphaSandboxFailure {
  count: number;
  /** An HTTP status from 400 to 599, or 0: the connection is dropped without an answer. */
  status: number;
  /** Matches the HTTP method, case-insensitively; absent: any. */
  method?: string;
  /** Matches when the request's path and query contain it; absent: any. */
  pathContains?: string;
  /**
   * before (default): the call fails without effect. after: the call takes effect, then its answer fails, as when a
   * create succeeds but its response is lost.
   */
  when: 'before' | 'after';
}

export interface AlphaSandboxPostSnapshot extends AlphaLocalPost {
  name: string;
  state: AlphaPostState;
  accountId: string;
  locationId: string;
  /** The requestId the post was created with; null when the create carried none. */
  requestId: string | null;
}

export interface AlphaSandboxLocationSnapshot extends AlphaLocation {
  name: string;
  accountId: string;
  /** The requestId the location was created with; null when the create carried none. */
  requestId: string | null;
  /** Edits accepted since the location was created. */
  edits: number;
}

/** The answer of GET /_control/state. */
export interface AlphaSandboxState {
  /** Every post that exists now, oldest first. */
  posts: AlphaSandboxPostSnapshot[];
  /** Distinct posts created since the last reset (a replayed requestId is not one; a deleted post still counts). */
  publishes: number;
  /** Every location that exists now, oldest first. */
  locations: AlphaSandboxLocationSnapshot[];
  /**
   * Provider calls received since the last reset, failed ones included. The post kinds are always present; a
   * location kind only once it has been called, so the state of a sandbox used for posts alone reads as it always has.
   */
  calls: Record<AlphaSandboxPostCallKind, number> & Partial<Record<AlphaSandboxLocationCallKind, number>>;
  config: AlphaSandboxConfig;
  /** Scripted failures not used up yet. */
  failures: AlphaSandboxFailure[];
}

interface PostRecord {
  /** Creation order: newest-first listing and page tokens rely on it. */
  seq: number;
  id: string;
  accountId: string;
  locationId: string;
  requestId: string | null;
  content: AlphaLocalPost;
  createdAt: number;
  /** Set when the post was created during a processing period. */
  processingUntil: number | undefined;
  rejected: boolean;
  scheduledAt: number | undefined;
}

interface LocationRecord {
  /** Creation order: oldest-first listing and page tokens rely on it. */
  seq: number;
  id: string;
  accountId: string;
  requestId: string | null;
  content: AlphaLocation;
  edits: number;
  /** Clock times of the accepted edits still inside the rolling minute, oldest first. */
  recentEdits: number[];
}

/** What a state file holds: the resources and the name sequence, not the configuration, failures or counters. */
const persistedSchema = z.object({
  version: z.literal(1),
  nextSeq: z.number().int().min(1),
  posts: z.array(
    z.object({
      seq: z.number().int().min(1),
      id: z.string().regex(/^[^/]+$/),
      accountId: z.string().regex(/^[^/]+$/),
      locationId: z.string().regex(/^[^/]+$/),
      requestId: z.string().nullable(),
      // Checked by the create rules below, as it was when it was created.
      content: z.unknown(),
      createdAt: z.number(),
      processingUntil: z.number().optional(),
      rejected: z.boolean(),
      scheduledAt: z.number().optional(),
    }),
  ),
  locations: z.array(
    z.object({
      seq: z.number().int().min(1),
      id: z.string().regex(/^[^/]+$/),
      accountId: z.string().regex(/^[^/]+$/),
      requestId: z.string().nullable(),
      content: z.unknown(),
      edits: z.number().int().min(0),
      recentEdits: z.array(z.number()),
    }),
  ),
});

export type AlphaSandboxPersisted = z.input<typeof persistedSchema>;

const SEARCH_URL_BASE = 'https://alpha.example/search?post=';
const MAPS_URI_BASE = 'https://maps.alpha.example/?cid=';
const EDIT_WINDOW_MS = 60_000;

/** The simulated provider's memory: posts, locations, requestIds seen, configuration, scripted failures and counters. */
export class AlphaSandboxStore {
  config: AlphaSandboxConfig = { ...DEFAULT_ALPHA_SANDBOX_CONFIG };
  private failures: AlphaSandboxFailure[] = [];
  private calls: Record<AlphaSandboxCallKind, number> = zeroCalls();
  private publishes = 0;
  private readonly posts = new Map<string, PostRecord>();
  private readonly byRequestId = new Map<string, string>();
  private readonly locations = new Map<string, LocationRecord>();
  private readonly locationsByRequestId = new Map<string, string>();
  // Never reset: a name handed out before a reset must not come back for a different resource.
  private nextSeq = 1;

  constructor(private readonly clock: () => number) {}

  reset(): void {
    this.config = { ...DEFAULT_ALPHA_SANDBOX_CONFIG };
    this.failures = [];
    this.calls = zeroCalls();
    this.publishes = 0;
    this.posts.clear();
    this.byRequestId.clear();
    this.locations.clear();
    this.locationsByRequestId.clear();
  }

  configure(patch: Partial<AlphaSandboxConfig>): AlphaSandboxConfig {
    this.config = { ...this.config, ...patch };
    return this.config;
  }

  addFailure(failure: AlphaSandboxFailure): void {
    this.failures.push(failure);
  }

  countCall(kind: AlphaSandboxCallKind): void {
    this.calls[kind] += 1;
  }

  /** Uses up one call of the first scripted failure that matches, if any. */
  takeFailure(method: string, url: string): AlphaSandboxFailure | undefined {
    const index = this.failures.findIndex(
      (failure) =>
        (failure.method === undefined || failure.method.toUpperCase() === method.toUpperCase()) &&
        (failure.pathContains === undefined || url.includes(failure.pathContains)),
    );
    if (index < 0) return undefined;
    const failure = this.failures[index]!;
    if (failure.count <= 1) this.failures.splice(index, 1);
    else this.failures[index] = { ...failure, count: failure.count - 1 };
    return failure;
  }

  /** A new post, or the one this location already created for `requestId` (`created` false). */
  create(input: { accountId: string; locationId: string; requestId: string | null; content: AlphaLocalPost }): {
    post: AlphaLocalPost;
    created: boolean;
  } {
    const requestKey = input.requestId === null ? undefined : JSON.stringify([input.accountId, input.locationId, input.requestId]);
    const existingName = requestKey === undefined ? undefined : this.byRequestId.get(requestKey);
    const existing = existingName === undefined ? undefined : this.posts.get(existingName);
    if (existing) return { post: this.view(existing), created: false };

    const now = this.clock();
    const { processingMs, rejectMarker } = this.config;
    const record: PostRecord = {
      seq: this.nextSeq++,
      id: randomBytes(8).readBigUInt64BE().toString(),
      accountId: input.accountId,
      locationId: input.locationId,
      requestId: input.requestId,
      content: input.content,
      createdAt: now,
      processingUntil: processingMs > 0 ? now + processingMs : undefined,
      rejected: rejectMarker !== null && (input.content.summary ?? '').includes(rejectMarker),
      scheduledAt: input.content.scheduledTime === undefined ? undefined : Date.parse(input.content.scheduledTime),
    };
    const name = nameOf(record);
    this.posts.set(name, record);
    if (requestKey !== undefined) this.byRequestId.set(requestKey, name);
    this.publishes += 1;
    return { post: this.view(record), created: true };
  }

  get(name: string): AlphaLocalPost | undefined {
    const record = this.posts.get(name);
    return record && this.view(record);
  }

  /** Newest first. `beforeSeq` is the position a page token carries: the page starts after it. */
  list(input: { accountId: string; locationId: string; pageSize: number; beforeSeq?: number }): {
    posts: AlphaLocalPost[];
    nextBeforeSeq?: number;
  } {
    const matching = [...this.posts.values()]
      .filter((record) => record.accountId === input.accountId && record.locationId === input.locationId)
      .filter((record) => input.beforeSeq === undefined || record.seq < input.beforeSeq)
      .sort((a, b) => b.seq - a.seq);
    const page = matching.slice(0, input.pageSize);
    const posts = page.map((record) => this.view(record));
    return matching.length > page.length ? { posts, nextBeforeSeq: page[page.length - 1]!.seq } : { posts };
  }

  /** False when there is no such post. Its requestId is forgotten with it. */
  delete(name: string): boolean {
    const record = this.posts.get(name);
    if (!record) return false;
    this.posts.delete(name);
    if (record.requestId !== null) {
      this.byRequestId.delete(JSON.stringify([record.accountId, record.locationId, record.requestId]));
    }
    return true;
  }

  /** A new location, or the one this account already created for `requestId` (`created` false). */
  createLocation(input: { accountId: string; requestId: string | null; content: AlphaLocation }): {
    location: AlphaLocation;
    created: boolean;
  } {
    const requestKey = input.requestId === null ? undefined : JSON.stringify([input.accountId, input.requestId]);
    const existingName = requestKey === undefined ? undefined : this.locationsByRequestId.get(requestKey);
    const existing = existingName === undefined ? undefined : this.locations.get(existingName);
    if (existing) return { location: locationView(existing), created: false };

    const record: LocationRecord = {
      seq: this.nextSeq++,
      id: randomBytes(8).readBigUInt64BE().toString(),
      accountId: input.accountId,
      requestId: input.requestId,
      content: input.content,
      edits: 0,
      recentEdits: [],
    };
    const name = locationNameOf(record);
    this.locations.set(name, record);
    if (requestKey !== undefined) this.locationsByRequestId.set(requestKey, name);
    return { location: locationView(record), created: true };
  }

  getLocation(name: string): AlphaLocation | undefined {
    const record = this.locations.get(name);
    return record && locationView(record);
  }

  /**
   * Replaces the location's content with what `change` makes of it, if the edit quota allows. `change` may throw
   * (a refused update): nothing changes then. undefined: no such location.
   */
  updateLocation(
    name: string,
    change: (current: AlphaLocation) => AlphaLocation,
  ): { location: AlphaLocation } | { retryAfterMs: number } | undefined {
    const record = this.locations.get(name);
    if (!record) return undefined;
    const now = this.clock();
    record.recentEdits = record.recentEdits.filter((at) => at > now - EDIT_WINDOW_MS);
    if (record.recentEdits.length >= this.config.locationEditsPerMinute) {
      // Free again when enough of the oldest edits have left the window for one more to fit.
      const freeing = record.recentEdits[record.recentEdits.length - this.config.locationEditsPerMinute]!;
      return { retryAfterMs: freeing + EDIT_WINDOW_MS - now };
    }
    record.content = change(structuredClone(record.content));
    record.edits += 1;
    record.recentEdits.push(now);
    return { location: locationView(record) };
  }

  /** Oldest first. `afterSeq` is the position a page token carries: the page starts after it. */
  listLocations(input: { accountId: string; pageSize: number; afterSeq?: number }): {
    locations: AlphaLocation[];
    nextAfterSeq?: number;
  } {
    const matching = [...this.locations.values()]
      .filter((record) => record.accountId === input.accountId)
      .filter((record) => input.afterSeq === undefined || record.seq > input.afterSeq)
      .sort((a, b) => a.seq - b.seq);
    const page = matching.slice(0, input.pageSize);
    const locations = page.map(locationView);
    return matching.length > page.length ? { locations, nextAfterSeq: page[page.length - 1]!.seq } : { locations };
  }

  /** The resources, for a state file. */
  persisted(): AlphaSandboxPersisted {
    return {
      version: 1,
      nextSeq: this.nextSeq,
      posts: [...this.posts.values()].sort((a, b) => a.seq - b.seq),
      locations: [...this.locations.values()].sort((a, b) => a.seq - b.seq),
    };
  }

  /**
   * Replaces the resources with those of a state file. Throws, changing nothing, when `data` is not one: a file
   * edited by hand or written by another version must not serve what the provider would never have accepted.
   */
  restore(data: unknown): void {
    const parsed = persistedSchema.parse(data);
    const posts = parsed.posts.map(
      (post): PostRecord => ({
        ...post,
        content: validateLocalPost(post.content),
        processingUntil: post.processingUntil,
        scheduledAt: post.scheduledAt,
      }),
    );
    const locations = parsed.locations.map(
      (location): LocationRecord => ({ ...location, content: validateLocation(location.content) }),
    );
    const seqs = [...posts, ...locations].map((record) => record.seq);
    if (new Set(seqs).size !== seqs.length) throw new Error('two resources share a sequence number');

    this.posts.clear();
    this.byRequestId.clear();
    this.locations.clear();
    this.locationsByRequestId.clear();
    for (const record of posts) {
      const name = nameOf(record);
      this.posts.set(name, record);
      if (record.requestId !== null) {
        this.byRequestId.set(JSON.stringify([record.accountId, record.locationId, record.requestId]), name);
      }
    }
    for (const record of locations) {
      const name = locationNameOf(record);
      this.locations.set(name, record);
      if (record.requestId !== null) this.locationsByRequestId.set(JSON.stringify([record.accountId, record.requestId]), name);
    }
    this.nextSeq = Math.max(parsed.nextSeq, ...seqs.map((seq) => seq + 1));
  }

  snapshot(): AlphaSandboxState {
    const posts = [...this.posts.values()]
      .sort((a, b) => a.seq - b.seq)
      .map((record) => ({
        ...this.view(record),
        accountId: record.accountId,
        locationId: record.locationId,
        requestId: record.requestId,
      }));
    const locations = [...this.locations.values()]
      .sort((a, b) => a.seq - b.seq)
      .map((record) => ({
        ...locationView(record),
        accountId: record.accountId,
        requestId: record.requestId,
        edits: record.edits,
      }));
    const { create, get, list, delete: remove, ...locationCalls } = this.calls;
    return {
      posts,
      locations,
      publishes: this.publishes,
      calls: {
        create,
        get,
        list,
        delete: remove,
        ...Object.fromEntries(Object.entries(locationCalls).filter(([, count]) => count > 0)),
      },
      config: { ...this.config },
      failures: this.failures.map((failure) => ({ ...failure })),
    };
  }

  /** The post as the provider shows it now: its state is worked out from the clock on every read. */
  private view(record: PostRecord): AlphaLocalPost & { name: string; state: AlphaPostState } {
    const { state, since } = stateAt(record, this.clock());
    return {
      name: nameOf(record),
      ...record.content,
      state,
      ...(state === 'LIVE' ? { searchUrl: `${SEARCH_URL_BASE}${record.id}` } : {}),
      createTime: new Date(record.createdAt).toISOString(),
      updateTime: new Date(since).toISOString(),
    };
  }
}

/** Review first (PROCESSING, then REJECTED or on), then the schedule (PROCESSING until its time), then LIVE. */
function stateAt(record: PostRecord, now: number): { state: AlphaPostState; since: number } {
  const reviewedAt = record.processingUntil ?? record.createdAt;
  if (now < reviewedAt) return { state: 'PROCESSING', since: record.createdAt };
  if (record.rejected) return { state: 'REJECTED', since: reviewedAt };
  if (record.scheduledAt !== undefined && now < record.scheduledAt) return { state: 'PROCESSING', since: reviewedAt };
  return { state: 'LIVE', since: Math.max(reviewedAt, record.scheduledAt ?? reviewedAt) };
}

function nameOf(record: PostRecord): string {
  return `accounts/${record.accountId}/locations/${record.locationId}/localPosts/${record.id}`;
}

function zeroCalls(): Record<AlphaSandboxCallKind, number> {
  return {
    create: 0,
    get: 0,
    list: 0,
    delete: 0,
    'location-create': 0,
    'location-get': 0,
    'location-update': 0,
    'location-list': 0,
  };
}

function locationNameOf(record: LocationRecord): string {
  return `accounts/${record.accountId}/locations/${record.id}`;
}

/** The location as the provider shows it, with what the provider knows of the place. */
function locationView(record: LocationRecord): AlphaLocation & { name: string } {
  const name = locationNameOf(record);
  return {
    name,
    ...structuredClone(record.content),
    // Derived from the name, so a location keeps its place across restarts of a persisted sandbox.
    metadata: { placeId: placeIdOf(name), mapsUri: `${MAPS_URI_BASE}${record.id}` },
  };
}

/** Shaped like the provider's place IDs (27 characters, starting ChIJ). */
function placeIdOf(name: string): string {
  return `ChIJ${createHash('sha256').update(name).digest('base64url').slice(0, 23)}`;
}
