import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type {
  AlphaAccount,
  AlphaLocalPost,
  AlphaLocation,
  AlphaPlace,
  AlphaPostState,
  AlphaReview,
} from '../../src/providers/alpha/alpha.types';
import type { SandboxOAuthClient } from '../shared/oauth-client-auth';
import {
  ProjectQuota,
  startingQuota,
  UNLIMITED_PROJECT_QUOTA,
  type ProjectQuotaExceeded,
  type ProjectQuotaLimits,
  type ProjectQuotaState,
} from '../shared/project-quota';
import { rollingWindowWait } from '../shared/rolling-window';
import { ScriptedFailures, type ScriptedFailure, type TakeOptions } from '../shared/scripted-failures';
import { timerSleeper, type Sleeper } from '../shared/sleeper';
import {
  AlphaSandboxDirectory,
  accountRecordSchema,
  accountView,
  identityInputSchema,
  identitySchema,
  type AccountRecord,
  type AlphaSandboxIdentity,
  type AlphaSandboxIdentityPlan,
} from './alpha-sandbox.accounts';
import { AlphaSandboxGrants, grantsPersistedSchema, type AlphaSandboxGrantCounts } from './alpha-sandbox.grants';
import { validateLocation } from './alpha-sandbox.locations';
import {
  defaultMarket,
  marketSchema,
  placeOfBusiness,
  placeOfLocation,
  rankPlaces,
  syntheticPlaces,
  type AlphaSandboxMarket,
  type PlacesSearch,
} from './alpha-sandbox.places';
import {
  AlphaSandboxReviews,
  reviewNameOf,
  reviewRecordOf,
  reviewRecordSchema,
  type AlphaSandboxReviewPlan,
  type ReviewRecord,
} from './alpha-sandbox.reviews';
import { alphaSandboxSeed } from './alpha-sandbox.seed';
import { FieldViolation, validateLocalPost } from './alpha-sandbox.validation';

/**
 * What the controls can change. `reset` returns to DEFAULT_ALPHA_SANDBOX_CONFIG, with the per-project quota the
 * sandbox was started with. `quotaPerSecond` and `quotaPerMinute`: the per-project quota of the provider API.
 */
export interface AlphaSandboxConfig extends ProjectQuotaLimits {
  /** Added before every provider answer (not the controls'). */
  latencyMs: number;
  /** How long a new post reports PROCESSING before LIVE (or REJECTED). 0: at once. */
  processingMs: number;
  /** A summary containing this becomes REJECTED; null: nothing is rejected. */
  rejectMarker: string | null;
  /** A summary containing this stays PROCESSING for REVIEW_MS (the provider reviewing it); null: none is. */
  reviewMarker: string | null;
  /** Accepted edits per location in any rolling minute of the clock; the next is answered 429. */
  locationEditsPerMinute: number;
  /** Lifetime of the identity provider's access tokens, on the clock. */
  accessTokenTtlSeconds: number;
  /** How long a review reply reports PENDING before APPROVED (or REJECTED). 0: decided at the next read. */
  moderationMs: number;
  /** The OAuth clients the identity provider knows. */
  oauthClients: AlphaSandboxOAuthClient[];
}

export type AlphaSandboxOAuthClient = SandboxOAuthClient;

/** How long a post whose summary holds the review marker stays PROCESSING: a day, as a long manual review. */
export const REVIEW_MS = 24 * 3600_000;

export const DEFAULT_ALPHA_SANDBOX_CONFIG: Readonly<AlphaSandboxConfig> = {
  latencyMs: 0,
  processingMs: 0,
  rejectMarker: '[[reject]]',
  reviewMarker: '[[review]]',
  locationEditsPerMinute: 10,
  accessTokenTtlSeconds: 3600,
  moderationMs: 0,
  oauthClients: [{ clientId: 'listings-gateway-sandbox', clientSecret: 'sandbox-client-secret' }],
  ...UNLIMITED_PROJECT_QUOTA,
};

export type AlphaSandboxPostCallKind = 'create' | 'get' | 'list' | 'delete';
export type AlphaSandboxLocationCallKind = 'location-create' | 'location-get' | 'location-update' | 'location-list';
export type AlphaSandboxAccountCallKind = 'account-list' | 'account-get';
export type AlphaSandboxReviewCallKind = 'review-list' | 'review-get' | 'review-reply' | 'review-reply-delete';
export type AlphaSandboxPlacesCallKind = 'places-search';
export type AlphaSandboxCallKind =
  | AlphaSandboxPostCallKind
  | AlphaSandboxLocationCallKind
  | AlphaSandboxAccountCallKind
  | AlphaSandboxReviewCallKind
  | AlphaSandboxPlacesCallKind;

/** A control's request the sandbox refuses as it stands (an id taken, a location that does not exist). */
export class AlphaSandboxControlRefusal extends Error {
  constructor(
    readonly status: 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

/** A scripted failure: the next `count` matching calls fail with `status` (see ScriptedFailure). */
export type AlphaSandboxFailure = ScriptedFailure;

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
   * Provider calls received since the last reset, failed ones included. The post kinds are always present; the
   * others only once called, so the state of a sandbox used for posts alone reads as it always has.
   */
  calls: Record<AlphaSandboxPostCallKind, number> &
    Partial<Record<Exclude<AlphaSandboxCallKind, AlphaSandboxPostCallKind>, number>>;
  config: AlphaSandboxConfig;
  /** Scripted failures not used up yet. */
  failures: AlphaSandboxFailure[];
  /** Provider calls held by a delay (the configured latency or a scripted delayMs) at this moment. */
  held: number;
  /** The identity provider's people, with the names of the accounts each owns. */
  identities: (AlphaSandboxIdentity & { accounts: string[] })[];
  /** Every account, oldest first, with its owner. */
  accounts: (AlphaAccount & { ownerSub: string })[];
  /** Every review that exists now, oldest created first, as the provider shows it now. */
  reviews: (AlphaReview & { accountId: string; locationId: string })[];
  /** Codes and tokens: how many were issued since the reset, and how many are usable now. The tokens themselves never. */
  oauth: AlphaSandboxGrantCounts;
  /** The places market beyond the sandbox's own locations: the explicit businesses, and whether synthetic ones join. */
  market: AlphaSandboxMarket;
  /** The per-project quota's counters: calls admitted and refused, and the latest refusals. */
  quota: ProjectQuotaState;
}

/** What POST /_control/identities made. */
export interface AlphaSandboxIdentityResult {
  identity: AlphaSandboxIdentity;
  accounts: AlphaAccount[];
  locations: AlphaLocation[];
  reviews: AlphaReview[];
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

/**
 * What a state file holds: the resources, the people, their codes and tokens (hashed), the places market and the name
 * sequence; not the configuration, failures or counters. Version 1 files (posts and locations only) and version 2
 * files (without the market) are still read.
 */
const persistedV1Schema = z.object({
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

const persistedV2Schema = persistedV1Schema.extend({
  version: z.literal(2),
  identities: z.array(identitySchema),
  accounts: z.array(accountRecordSchema),
  reviews: z.array(reviewRecordSchema),
  oauth: grantsPersistedSchema,
});

const persistedV3Schema = persistedV2Schema.extend({
  version: z.literal(3),
  market: marketSchema,
});

const persistedSchema = z.discriminatedUnion('version', [persistedV1Schema, persistedV2Schema, persistedV3Schema]);

export type AlphaSandboxPersisted = z.input<typeof persistedV3Schema>;

export interface AlphaSandboxStoreOptions {
  /**
   * Start with, and reset to, the seeded identities, accounts, locations and reviews (alpha-sandbox.seed.ts).
   * Default true.
   */
  seed?: boolean;
  /** What waits out latencies and scripted delays (the plugin's cuts them short when it closes); default a timer. */
  sleeper?: Sleeper;
  /** The per-project quota it starts with and a reset returns to; default unlimited. */
  quota?: Partial<ProjectQuotaLimits>;
}

const SEARCH_URL_BASE = 'https://alpha.example/search?post=';
const MAPS_URI_BASE = 'https://maps.alpha.example/?cid=';
const EDIT_WINDOW_MS = 60_000;

/**
 * The simulated provider's memory: posts, locations, requestIds seen, identities and their accounts, reviews, codes
 * and tokens, configuration, scripted failures and counters.
 */
export class AlphaSandboxStore {
  config: AlphaSandboxConfig;
  market: AlphaSandboxMarket = defaultMarket();
  readonly directory = new AlphaSandboxDirectory();
  readonly reviews: AlphaSandboxReviews;
  readonly grants: AlphaSandboxGrants;
  private readonly seeded: boolean;
  private readonly sleeper: Sleeper;
  private readonly failures = new ScriptedFailures();
  /** What a reset returns to: the defaults, with the quota the sandbox was started with. */
  private readonly startConfig: Readonly<AlphaSandboxConfig>;
  private readonly quota = new ProjectQuota();
  private calls: Record<AlphaSandboxCallKind, number> = zeroCalls();
  private publishes = 0;
  private readonly posts = new Map<string, PostRecord>();
  private readonly byRequestId = new Map<string, string>();
  private readonly locations = new Map<string, LocationRecord>();
  private readonly locationsByRequestId = new Map<string, string>();
  // Never reset: a name handed out before a reset must not come back for a different resource.
  private nextSeq = 1;

  constructor(
    private readonly clock: () => number,
    options: AlphaSandboxStoreOptions = {},
  ) {
    this.reviews = new AlphaSandboxReviews(clock);
    this.grants = new AlphaSandboxGrants(clock);
    this.sleeper = options.sleeper ?? timerSleeper;
    this.seeded = options.seed ?? true;
    this.startConfig = { ...DEFAULT_ALPHA_SANDBOX_CONFIG, ...startingQuota(options.quota) };
    this.config = structuredClone(this.startConfig);
    if (this.seeded) this.seed();
  }

  reset(): void {
    this.config = structuredClone(this.startConfig);
    this.market = defaultMarket();
    this.failures.clear();
    this.quota.clear();
    this.calls = zeroCalls();
    this.publishes = 0;
    this.posts.clear();
    this.byRequestId.clear();
    this.locations.clear();
    this.locationsByRequestId.clear();
    this.directory.clear();
    this.reviews.clear();
    this.grants.clear();
    if (this.seeded) this.seed();
  }

  configure(patch: Partial<AlphaSandboxConfig>): AlphaSandboxConfig {
    this.config = { ...this.config, ...structuredClone(patch) };
    return structuredClone(this.config);
  }

  /** Replaces the explicit market (checked by marketSchema); answers it as stored. */
  setMarket(market: AlphaSandboxMarket): AlphaSandboxMarket {
    this.market = structuredClone(market);
    return structuredClone(this.market);
  }

  /** Back to the default market: synthetic businesses only, besides the sandbox's own locations. */
  resetMarket(): AlphaSandboxMarket {
    this.market = defaultMarket();
    return structuredClone(this.market);
  }

  /**
   * The places API's nearby text search over the market: every location with coordinates (its reviews' average and
   * count, whether it has a LIVE post), the explicit businesses, and the synthetic ones when they are on.
   */
  searchPlaces(search: PlacesSearch): AlphaPlace[] {
    const ratings = this.reviews.ratings();
    const withLivePosts = this.locationsWithLivePosts();
    const noReviews = { averageRating: 0, totalReviewCount: 0 };
    const own = [...this.locations.values()].flatMap((record) => {
      const name = locationNameOf(record);
      const place = placeOfLocation(locationView(record), ratings.get(name) ?? noReviews, withLivePosts.has(name));
      return place ? [place] : [];
    });
    // A location is the business it is: an explicit one with its place ID would be a second copy.
    const ownIds = new Set(own.map((place) => place.id));
    const explicit = this.market.businesses.filter((business) => !ownIds.has(business.id)).map(placeOfBusiness);
    const synthetic = this.market.synthetic ? syntheticPlaces(search) : [];
    return rankPlaces(search, [...own, ...explicit, ...synthetic]);
  }

  addFailure(failure: AlphaSandboxFailure): void {
    this.failures.add(failure);
  }

  countCall(kind: AlphaSandboxCallKind): void {
    this.calls[kind] += 1;
  }

  /** Charges a provider call to the per-project quota: undefined when admitted, otherwise what its 429 says. */
  takeQuota(): ProjectQuotaExceeded | undefined {
    return this.quota.take(this.config, this.clock());
  }

  /** Uses up one call of the first scripted failure that matches, if any (see ScriptedFailures.take). */
  takeFailure(method: string, url: string, options: TakeOptions = {}): AlphaSandboxFailure | undefined {
    return this.failures.take(method, url, options);
  }

  /** Waits `ms` (the configured latency plus a scripted delay), counted in the state's `held` meanwhile. */
  hold(ms: number): Promise<void> {
    return this.failures.hold(ms, this.sleeper);
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
    const { processingMs, rejectMarker, reviewMarker } = this.config;
    const summary = input.content.summary ?? '';
    // Per post, not a setting: a post under review holds up no other post made meanwhile.
    const processing = reviewMarker !== null && summary.includes(reviewMarker) ? REVIEW_MS : processingMs;
    const record: PostRecord = {
      seq: this.nextSeq++,
      id: randomBytes(8).readBigUInt64BE().toString(),
      accountId: input.accountId,
      locationId: input.locationId,
      requestId: input.requestId,
      content: input.content,
      createdAt: now,
      processingUntil: processing > 0 ? now + processing : undefined,
      rejected: rejectMarker !== null && summary.includes(rejectMarker),
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

  /**
   * A new location, or the one this account already created for `requestId` (`created` false). `id` is for seeds
   * and controls that name their locations; the location API always gets a new random one.
   */
  createLocation(input: { accountId: string; requestId: string | null; content: AlphaLocation; id?: string }): {
    location: AlphaLocation;
    created: boolean;
  } {
    const requestKey = input.requestId === null ? undefined : JSON.stringify([input.accountId, input.requestId]);
    const existingName = requestKey === undefined ? undefined : this.locationsByRequestId.get(requestKey);
    const existing = existingName === undefined ? undefined : this.locations.get(existingName);
    if (existing) return { location: locationView(existing), created: false };

    const record: LocationRecord = {
      seq: this.nextSeq++,
      id: input.id ?? randomNumericId(),
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
    const waitMs = rollingWindowWait(record.recentEdits, this.config.locationEditsPerMinute, EDIT_WINDOW_MS, now);
    if (waitMs > 0) return { retryAfterMs: waitMs };
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

  /**
   * A new identity with its accounts, their locations and the reviews on them. Everything is checked before anything
   * is made: a refused request (400 naming the field, 409 for an id or email taken) changes nothing.
   */
  addIdentity(plan: AlphaSandboxIdentityPlan): AlphaSandboxIdentityResult {
    const now = this.clock();
    const sub = plan.sub ?? `alpha-user-${randomBytes(6).toString('hex')}`;
    if (this.directory.identity(sub)) throw new AlphaSandboxControlRefusal(409, `identity ${sub} exists already`);
    if (this.directory.hasEmail(plan.email)) {
      throw new AlphaSandboxControlRefusal(409, `an identity with email ${plan.email} exists already`);
    }

    const accountIds = new Set<string>();
    const prepared = plan.accounts.map((account, accountIndex) => {
      const accountId = account.accountId ?? randomNumericId();
      if (this.directory.account(accountId) || accountIds.has(accountId)) {
        throw new AlphaSandboxControlRefusal(409, `account accounts/${accountId} exists already`);
      }
      accountIds.add(accountId);
      const locationIds = new Set<string>();
      const locations = account.locations.map((entry, locationIndex) => {
        const at = `accounts[${accountIndex}].locations[${locationIndex}]`;
        const content = underField(`${at}.location`, () => validateLocation(entry.location));
        const locationId = entry.locationId ?? randomNumericId();
        if (locationIds.has(locationId) || this.locations.has(`accounts/${accountId}/locations/${locationId}`)) {
          const name = `accounts/${accountId}/locations/${locationId}`;
          throw new AlphaSandboxControlRefusal(409, `location ${name} exists already`);
        }
        locationIds.add(locationId);
        const reviews = this.prepareReviews(accountId, locationId, entry.reviews, `${at}.reviews`, now);
        return { locationId, content, reviews };
      });
      return { account, accountId, locations };
    });

    const identity: AlphaSandboxIdentity = {
      sub,
      email: plan.email,
      name: plan.name,
      picture: plan.picture ?? `https://alpha.example/avatars/${sub}.png`,
    };
    this.directory.addIdentity(identity);
    const result: AlphaSandboxIdentityResult = { identity: { ...identity }, accounts: [], locations: [], reviews: [] };
    for (const { account, accountId, locations } of prepared) {
      const record: AccountRecord = {
        seq: this.nextSeq++,
        id: accountId,
        accountName: account.accountName,
        type: account.type,
        verificationState: account.verificationState,
        ownerSub: sub,
      };
      this.directory.addAccount(record);
      result.accounts.push(accountView(record));
      for (const { locationId, content, reviews } of locations) {
        result.locations.push(this.createLocation({ accountId, requestId: null, content, id: locationId }).location);
        for (const review of reviews) result.reviews.push(this.reviews.add({ ...review, seq: this.nextSeq++ }));
      }
    }
    return result;
  }

  /** New reviews on an existing location (404 otherwise), all checked before any is added. */
  addReviews(locationName: string, plans: AlphaSandboxReviewPlan[]): AlphaReview[] {
    const location = this.locations.get(locationName);
    if (!location) throw new AlphaSandboxControlRefusal(404, `no location ${locationName}`);
    const records = this.prepareReviews(location.accountId, location.id, plans, 'reviews', this.clock());
    return records.map((record) => this.reviews.add({ ...record, seq: this.nextSeq++ }));
  }

  /** The resources, for a state file. */
  persisted(): AlphaSandboxPersisted {
    const { identities, accounts } = this.directory.persisted();
    return {
      version: 3,
      nextSeq: this.nextSeq,
      posts: [...this.posts.values()].sort((a, b) => a.seq - b.seq),
      locations: [...this.locations.values()].sort((a, b) => a.seq - b.seq),
      identities,
      accounts,
      reviews: this.reviews.persisted(),
      oauth: this.grants.persisted(),
      market: structuredClone(this.market),
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
    const v2 = parsed.version === 1 ? undefined : parsed;
    const market = parsed.version === 3 ? parsed.market : defaultMarket();
    const identities = v2?.identities ?? [];
    const accounts: AccountRecord[] = v2?.accounts ?? [];
    const reviews: ReviewRecord[] = v2?.reviews ?? [];
    const grants = v2?.oauth ?? { codes: [], refreshTokens: [], accessTokens: [] };
    checkReferences({ identities, accounts, locations, reviews, grants });
    const seqs = [...posts, ...locations, ...accounts, ...reviews].map((record) => record.seq);
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
    this.directory.replace(identities, accounts);
    this.reviews.replace(reviews);
    this.grants.replace(grants);
    this.market = market;
    this.nextSeq = Math.max(parsed.nextSeq, ...seqs.map((seq) => seq + 1));
    // A file from before identities existed: its posts and locations, and the people a fresh start would have.
    if (parsed.version === 1 && this.seeded) this.seed();
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
      config: structuredClone(this.config),
      failures: this.failures.list(),
      held: this.failures.held,
      identities: this.directory.snapshotIdentities(),
      accounts: this.directory.snapshotAccounts(),
      reviews: this.reviews.snapshot(),
      oauth: this.grants.counts(),
      market: structuredClone(this.market),
      quota: this.quota.snapshot(),
    };
  }

  /** Names of the locations with at least one post LIVE now. */
  private locationsWithLivePosts(): Set<string> {
    const now = this.clock();
    const names = new Set<string>();
    for (const record of this.posts.values()) {
      if (stateAt(record, now).state === 'LIVE') names.add(`accounts/${record.accountId}/locations/${record.locationId}`);
    }
    return names;
  }

  private seed(): void {
    for (const input of alphaSandboxSeed(this.clock())) this.addIdentity(identityInputSchema.parse(input));
  }

  /** Review records for one location, checked (ids unused, times in order) but not added; their seq is set on adding. */
  private prepareReviews(
    accountId: string,
    locationId: string,
    plans: AlphaSandboxReviewPlan[],
    field: string,
    now: number,
  ): ReviewRecord[] {
    const names = new Set<string>();
    return plans.map((plan, index) => {
      const id = plan.reviewId ?? randomBytes(12).toString('base64url');
      const name = reviewNameOf({ accountId, locationId, id });
      if (names.has(name) || this.reviews.has(name)) {
        throw new AlphaSandboxControlRefusal(409, `review ${name} exists already`);
      }
      names.add(name);
      return underField(`${field}[${index}]`, () => reviewRecordOf(plan, { seq: 0, id, accountId, locationId, now }));
    });
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
    'account-list': 0,
    'account-get': 0,
    'review-list': 0,
    'review-get': 0,
    'review-reply': 0,
    'review-reply-delete': 0,
    'places-search': 0,
  };
}

/** Shaped like the provider's numeric ids. */
function randomNumericId(): string {
  return randomBytes(8).readBigUInt64BE().toString();
}

/** A field violation of a nested value, named from the top of the control's body. */
function underField<T>(field: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof FieldViolation) throw new FieldViolation(`${field}.${error.field}`, error.description);
    throw error;
  }
}

/**
 * What a state file's records must agree on beyond their own shapes: one identity per sub, accounts owned by known
 * identities, reviews on locations that exist, tokens of known identities.
 */
function checkReferences(data: {
  identities: AlphaSandboxIdentity[];
  accounts: AccountRecord[];
  locations: LocationRecord[];
  reviews: ReviewRecord[];
  grants: z.infer<typeof grantsPersistedSchema>;
}): void {
  const subs = new Set(data.identities.map((identity) => identity.sub));
  if (subs.size !== data.identities.length) throw new Error('two identities share a sub');
  const accountIds = new Set(data.accounts.map((account) => account.id));
  if (accountIds.size !== data.accounts.length) throw new Error('two accounts share an id');
  for (const account of data.accounts) {
    if (!subs.has(account.ownerSub)) throw new Error(`account ${account.id} is owned by an unknown identity`);
  }
  const locationNames = new Set(data.locations.map(locationNameOf));
  const reviewNames = new Set<string>();
  for (const review of data.reviews) {
    if (!locationNames.has(`accounts/${review.accountId}/locations/${review.locationId}`)) {
      throw new Error(`review ${review.id} is on an unknown location`);
    }
    const name = reviewNameOf(review);
    if (reviewNames.has(name)) throw new Error(`two reviews are named ${name}`);
    reviewNames.add(name);
  }
  const { codes, refreshTokens, accessTokens } = data.grants;
  for (const grant of [...codes, ...refreshTokens, ...accessTokens]) {
    if (!subs.has(grant.sub)) throw new Error('a code or token belongs to an unknown identity');
  }
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
