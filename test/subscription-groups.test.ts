import { GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type ExecutionResult } from 'graphql';
import { oncePerResult, SubscriptionGroups } from '../src/graphql/subscription-groups';

/**
 * The sharing itself, on a schema small enough to count executions: a subscription whose events are pushed by
 * the test and whose field resolver counts how often it runs. (Delivery over real sockets, with every scope,
 * is covered by posts.subscription.test.ts, which runs through the same groups.)
 */
function countingSchema() {
  const sinks = new Set<(value: string) => void>();
  let sourcesOpened = 0;
  let sourcesClosed = 0;
  let executions = 0;
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLString } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        ticked: {
          type: GraphQLString,
          subscribe: () => {
            sourcesOpened += 1;
            const queue: string[] = [];
            let waiting: ((step: IteratorResult<string>) => void) | undefined;
            const sink = (value: string) => {
              if (waiting) {
                const resolve = waiting;
                waiting = undefined;
                resolve({ value, done: false });
              } else queue.push(value);
            };
            sinks.add(sink);
            const source: AsyncIterableIterator<string> = {
              next: () =>
                queue.length > 0
                  ? Promise.resolve({ value: queue.shift()!, done: false })
                  : new Promise((resolve) => (waiting = resolve)),
              return: () => {
                sinks.delete(sink);
                sourcesClosed += 1;
                waiting?.({ value: undefined, done: true });
                return Promise.resolve({ value: undefined, done: true });
              },
              [Symbol.asyncIterator]: () => source,
            };
            return source;
          },
          resolve: (value: string) => {
            executions += 1;
            return value.toUpperCase();
          },
        },
      },
    }),
  });
  return {
    schema,
    publish: (value: string) => sinks.forEach((sink) => sink(value)),
    counts: () => ({ sourcesOpened, sourcesClosed, executions }),
  };
}

const document = parse('subscription { ticked }');

async function nextOf(iterator: AsyncIterator<ExecutionResult>): Promise<ExecutionResult> {
  const step = await iterator.next();
  if (step.done) throw new Error('the subscription ended');
  return step.value;
}

describe('subscription groups', () => {
  it('executes each event once per group and gives every member the same result', async () => {
    const { schema, publish, counts } = countingSchema();
    const groups = new SubscriptionGroups();
    const members = (await Promise.all(
      [1, 2, 3].map(() => groups.subscribe('same', { schema, document })),
    )) as AsyncGenerator<ExecutionResult>[];
    const other = (await groups.subscribe('other scope', { schema, document })) as AsyncGenerator<ExecutionResult>;
    expect(groups.size).toBe(2);
    expect(counts().sourcesOpened).toBe(2);

    publish('tick');
    const results = await Promise.all(members.map(nextOf));
    expect(results[0]).toEqual({ data: { ticked: 'TICK' } });
    // One result object, shared: executed once for the three members.
    expect(new Set(results).size).toBe(1);
    expect(await nextOf(other)).toEqual({ data: { ticked: 'TICK' } });
    expect(counts().executions).toBe(2);

    // Members leave one by one; the group's source ends with the last one.
    await members[0]!.return(undefined);
    publish('tock');
    expect(await nextOf(members[1]!)).toEqual({ data: { ticked: 'TOCK' } });
    await members[1]!.return(undefined);
    await members[2]!.return(undefined);
    await other.return(undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(groups.size).toBe(0);
    expect(counts().sourcesClosed).toBe(2);
  });

  it('starts a fresh group for a member that comes after the last one left', async () => {
    const { schema, publish, counts } = countingSchema();
    const groups = new SubscriptionGroups();
    const first = (await groups.subscribe('key', { schema, document })) as AsyncGenerator<ExecutionResult>;
    await first.return(undefined);
    const second = (await groups.subscribe('key', { schema, document })) as AsyncGenerator<ExecutionResult>;
    publish('again');
    expect(await nextOf(second)).toEqual({ data: { ticked: 'AGAIN' } });
    expect(counts().sourcesOpened).toBe(2);
    await second.return(undefined);
  });

  it('answers a subscription graphql-js refuses to its caller alone, keeping no group', async () => {
    const { schema } = countingSchema();
    const groups = new SubscriptionGroups();
    const refused = await groups.subscribe('bad', { schema, document: parse('subscription { nope }') });
    expect((refused as ExecutionResult).errors?.[0]?.message).toMatch(/nope/);
    expect(groups.size).toBe(0);
  });

  it('hands results to a delivery once its transport asks: earlier ones in order, nothing after it left', async () => {
    const { schema, publish } = countingSchema();
    const groups = new SubscriptionGroups();
    const delivered: ExecutionResult[] = [];
    const member = (await groups.subscribe('key', { schema, document }, (result) => delivered.push(result))) as AsyncGenerator<ExecutionResult>;
    const puller = (await groups.subscribe('key', { schema, document })) as AsyncGenerator<ExecutionResult>;
    // Before the transport asks (graphql-ws: before the subscription is registered), results wait.
    publish('one');
    await nextOf(puller);
    expect(delivered).toEqual([]);
    // Asking hands over what waited, then each result as it comes; the generator itself only ends.
    const ended = member.next();
    expect(delivered.map((result) => result.data)).toEqual([{ ticked: 'ONE' }]);
    publish('two');
    const two = await nextOf(puller);
    expect(delivered).toHaveLength(2);
    // One result object for the group: a serialization made for one member serves the others.
    expect(delivered[1]).toBe(two);
    let serialized = 0;
    const serialize = oncePerResult((result) => `${(serialized += 1)}:${JSON.stringify(result)}`);
    expect(serialize(two)).toBe(serialize(delivered[1]!));
    expect(serialized).toBe(1);
    await member.return(undefined);
    await expect(ended).resolves.toEqual({ value: undefined, done: true });
    publish('three');
    await nextOf(puller);
    expect(delivered).toHaveLength(2);
    await puller.return(undefined);
  });

  it('fails only the member whose delivery throws', async () => {
    const { schema, publish } = countingSchema();
    const groups = new SubscriptionGroups();
    const failing = (await groups.subscribe('key', { schema, document }, () => {
      throw new Error('socket write failed');
    })) as AsyncGenerator<ExecutionResult>;
    const puller = (await groups.subscribe('key', { schema, document })) as AsyncGenerator<ExecutionResult>;
    const ended = failing.next();
    publish('boom');
    await expect(ended).rejects.toThrow('socket write failed');
    expect(await nextOf(puller)).toEqual({ data: { ticked: 'BOOM' } });
    await failing.return(undefined);
    await puller.return(undefined);
  });
});
