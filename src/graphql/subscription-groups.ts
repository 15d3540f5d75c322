import { subscribe, type ExecutionArgs, type ExecutionResult } from 'graphql';

/**
 * Subscriptions that would compute the same results share one execution: sockets with the same document,
 * operation, variables and scope (what resolvers and the filter can see of the caller) form a group, and each event
 * is filtered, executed and serialized (oncePerResult) once for it; without this, 1,000 dashboards of one organization
 * cost 1,000 executions of every event. The group runs with the context of the member that opened it (its scope is
 * every member's); a member receives the events after it joined, and the last to leave ends the execution.
 */

/**
 * Where a member's results go when its transport writes them itself rather than pulling them one by one (graphql-ws:
 * the group's result serialized once, each socket's frame written at once; src/graphql/websocket.ts). Called in
 * order, synchronously, for each result; a throw fails that member alone.
 */
export type Delivery = (result: ExecutionResult) => void;

/**
 * A serialization of a group's results made once per event: the group hands the same result object to every member,
 * so what was made for the first member is reused for the others, looked up by that object (and dropped with it).
 */
export function oncePerResult<T>(serialize: (result: ExecutionResult) => T): (result: ExecutionResult) => T {
  const made = new WeakMap<ExecutionResult, T>();
  return (result) => {
    let value = made.get(result);
    if (value === undefined) {
      value = serialize(result);
      made.set(result, value);
    }
    return value;
  };
}

/**
 * One subscriber's view of its group: an async generator its transport drives, fed by the group. With a Delivery,
 * results are queued only until the transport first asks for one (graphql-ws does once the subscription is
 * registered, so nothing is written for an id before that, nor after the client completed it); from then on each
 * result is handed to the Delivery as it comes, and the generator only ends (or fails) when the group does.
 */
class Member implements AsyncGenerator<ExecutionResult> {
  private readonly queue: ExecutionResult[] = [];
  private waiting: ((result: IteratorResult<ExecutionResult>) => void) | undefined;
  private failWaiting: ((error: unknown) => void) | undefined;
  private done = false;
  private failure: { error: unknown } | undefined;
  /** With a Delivery: the transport asked for a result, results are handed over as they come. */
  private delivering = false;

  constructor(
    private readonly leave: (member: Member) => void,
    private readonly deliver?: Delivery,
  ) {}

  push(result: ExecutionResult): void {
    if (this.done) return;
    if (this.delivering) {
      this.handOver(result);
    } else if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = this.failWaiting = undefined;
      resolve({ value: result, done: false });
    } else {
      this.queue.push(result);
    }
  }

  fail(error: unknown): void {
    if (this.done) return;
    if (this.failWaiting) {
      const reject = this.failWaiting;
      this.waiting = this.failWaiting = undefined;
      this.done = true;
      reject(error);
    } else {
      this.failure = { error };
    }
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.queue.length = 0;
    const resolve = this.waiting;
    this.waiting = this.failWaiting = undefined;
    resolve?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    if (this.deliver && !this.delivering && !this.done) {
      this.delivering = true;
      // What arrived before the transport was ready, in order; the promise below then waits for the end.
      for (const queued of this.queue.splice(0)) this.handOver(queued);
    }
    const queued = this.queue.shift();
    if (queued) return Promise.resolve({ value: queued, done: false });
    if (this.failure) {
      this.done = true;
      const { error } = this.failure;
      this.failure = undefined;
      return Promise.reject(error);
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
  }

  private handOver(result: ExecutionResult): void {
    if (this.failure) return;
    try {
      this.deliver!(result);
    } catch (error) {
      // This member's transport failed, not the group: it ends with that error (graphql-ws sends it as `error`, and
      // does not return the generator after that) and leaves the group.
      this.fail(error);
      this.leave(this);
    }
  }

  return(): Promise<IteratorResult<ExecutionResult>> {
    this.end();
    this.leave(this);
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error: unknown): Promise<IteratorResult<ExecutionResult>> {
    this.end();
    this.leave(this);
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }
}

interface Group {
  members: Set<Member>;
  /** Resolves to the shared source once graphql-js has set it up; an ExecutionResult when it refused. */
  source: Promise<AsyncGenerator<ExecutionResult> | AsyncIterable<ExecutionResult> | ExecutionResult>;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<ExecutionResult> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })?.[Symbol.asyncIterator] === 'function';
}

export class SubscriptionGroups {
  private readonly groups = new Map<string, Group>();

  /** How many groups run now (for tests and benchmarks: sockets of one scope and document share one). */
  get size(): number {
    return this.groups.size;
  }

  /**
   * graphql-ws's `subscribe`: joins the group of `key` (opening it with `args` when it is the first) and returns
   * this member's results, pulled from the generator or, with `deliver`, handed to it (see Member). A subscription
   * graphql-js refuses (an ExecutionResult) is answered to that caller alone, and no group is kept.
   */
  async subscribe(key: string, args: ExecutionArgs, deliver?: Delivery): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
    let group = this.groups.get(key);
    if (!group) {
      const opened: Group = { members: new Set(), source: Promise.resolve(subscribe(args)) };
      group = opened;
      this.groups.set(key, opened);
      void opened.source.then(
        (source) => {
          if (isAsyncIterable(source)) void this.pump(key, opened, source);
          else if (this.groups.get(key) === opened) this.groups.delete(key);
        },
        () => {
          if (this.groups.get(key) === opened) this.groups.delete(key);
        },
      );
    }
    const source = await group.source;
    if (!isAsyncIterable(source)) return source;
    const joined = group;
    const member = new Member((leaving) => this.leave(key, joined, leaving), deliver);
    joined.members.add(member);
    return member;
  }

  private async pump(key: string, group: Group, source: AsyncIterable<ExecutionResult>): Promise<void> {
    try {
      for await (const result of source) {
        for (const member of group.members) member.push(result);
        if (group.members.size === 0 && this.groups.get(key) !== group) break;
      }
      for (const member of group.members) member.end();
    } catch (error) {
      for (const member of group.members) member.fail(error);
    } finally {
      if (this.groups.get(key) === group) this.groups.delete(key);
    }
  }

  private leave(key: string, group: Group, member: Member): void {
    group.members.delete(member);
    if (group.members.size > 0) return;
    // The last member left: no one needs the group's execution any more.
    if (this.groups.get(key) === group) this.groups.delete(key);
    void group.source.then((source) => {
      const generator = source as Partial<AsyncGenerator<ExecutionResult>>;
      if (typeof generator.return === 'function') void generator.return(undefined);
    });
  }
}
