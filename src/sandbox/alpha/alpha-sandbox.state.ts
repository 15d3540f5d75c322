import { randomBytes } from 'node:crypto';
import type { AlphaLocalPost, AlphaPostState } from '../../providers/alpha/alpha.types';

/** What the controls can change. `reset` returns to DEFAULT_ALPHA_SANDBOX_CONFIG. */
export interface AlphaSandboxConfig {
  /** Added before every provider answer (not the controls'). */
  latencyMs: number;
  /** How long a new post reports PROCESSING before LIVE (or REJECTED). 0: at once. */
  processingMs: number;
  /** A summary containing this becomes REJECTED; null: nothing is rejected. */
  rejectMarker: string | null;
}

export const DEFAULT_ALPHA_SANDBOX_CONFIG: Readonly<AlphaSandboxConfig> = {
  latencyMs: 0,
  processingMs: 0,
  rejectMarker: '[[reject]]',
};

export type AlphaSandboxCallKind = 'create' | 'get' | 'list' | 'delete';

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

/** The answer of GET /_control/state. */
export interface AlphaSandboxState {
  /** Every post that exists now, oldest first. */
  posts: AlphaSandboxPostSnapshot[];
  /** Distinct posts created since the last reset (a replayed requestId is not one; a deleted post still counts). */
  publishes: number;
  /** Provider calls received since the last reset, failed ones included. */
  calls: Record<AlphaSandboxCallKind, number>;
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

const SEARCH_URL_BASE = 'https://alpha.example/search?post=';

/** The simulated provider's memory: posts, requestIds seen, configuration, scripted failures and counters. */
export class AlphaSandboxStore {
  config: AlphaSandboxConfig = { ...DEFAULT_ALPHA_SANDBOX_CONFIG };
  private failures: AlphaSandboxFailure[] = [];
  private calls: Record<AlphaSandboxCallKind, number> = zeroCalls();
  private publishes = 0;
  private readonly posts = new Map<string, PostRecord>();
  private readonly byRequestId = new Map<string, string>();
  // Never reset: a name handed out before a reset must not come back for a different post.
  private nextSeq = 1;

  constructor(private readonly clock: () => number) {}

  reset(): void {
    this.config = { ...DEFAULT_ALPHA_SANDBOX_CONFIG };
    this.failures = [];
    this.calls = zeroCalls();
    this.publishes = 0;
    this.posts.clear();
    this.byRequestId.clear();
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

  snapshot(): AlphaSandboxState {
    const posts = [...this.posts.values()]
      .sort((a, b) => a.seq - b.seq)
      .map((record) => ({
        ...this.view(record),
        accountId: record.accountId,
        locationId: record.locationId,
        requestId: record.requestId,
      }));
    return {
      posts,
      publishes: this.publishes,
      calls: { ...this.calls },
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
  return { create: 0, get: 0, list: 0, delete: 0 };
}
