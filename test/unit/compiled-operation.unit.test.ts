import {
  execute,
  GraphQLError,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  Kind,
  parse,
  type ExecutionResult,
} from 'graphql';
import { compileQuery } from 'graphql-jit';
import pino from 'pino';
import { compiledExecutionGateway } from '../../src/graphql/compiled-execution-gateway';
import { compileOperation } from '../../src/graphql/compiled-operation';

// Counts the compilations; each still compiles.
jest.mock('graphql-jit', () => {
  const actual = jest.requireActual<typeof import('graphql-jit')>('graphql-jit');
  return { ...actual, compileQuery: jest.fn(actual.compileQuery) };
});
const compiles = jest.mocked(compileQuery).mock.calls;

/** A resolver's refusal as services throw them: an Error with extensions of its own. */
class Refusal extends Error {
  readonly extensions = { code: 'NOT_FOUND' };
}

const Item = new GraphQLObjectType({
  name: 'Item',
  fields: {
    id: { type: new GraphQLNonNull(GraphQLString) },
    label: { type: GraphQLString, args: { upper: { type: GraphQLInt, defaultValue: 0 } }, resolve: (item: { id: string }, args: { upper: number }) => (args.upper ? item.id.toUpperCase() : item.id) },
    broken: { type: GraphQLString, resolve: () => Promise.reject(new Error('the database said no')) },
    refused: { type: GraphQLString, resolve: () => { throw new Refusal('No such item'); } },
    missing: { type: new GraphQLNonNull(GraphQLString), resolve: () => null },
  },
});
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: {
      items: {
        type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Item))),
        args: { first: { type: new GraphQLNonNull(GraphQLInt) }, tags: { type: new GraphQLList(new GraphQLNonNull(GraphQLInt)) } },
        resolve: (_root, args: { first: number }) => ['a', 'b', 'c'].slice(0, args.first).map((id) => ({ id })),
      },
    },
  }),
});

/** What a client can tell apart: the JSON of the result, and what the error formatter reads of each error. */
function comparable(result: ExecutionResult) {
  return {
    json: JSON.parse(JSON.stringify(result)) as unknown,
    errors: result.errors?.map((error) => ({
      graphqlJsClass: Object.getPrototypeOf(error) === GraphQLError.prototype,
      extensions: error.extensions,
      originalError: error.originalError,
      path: error.path,
      locations: error.locations,
      // What Apollo and the formatter tell a variable's refusal by.
      ofVariableDefinition: error.nodes?.length === 1 && error.nodes[0]!.kind === Kind.VARIABLE_DEFINITION,
    })),
  };
}

describe('an operation compiled by graphql-jit answers as graphql-js does', () => {
  const cases: Record<string, { query: string; variables?: Record<string, unknown> }> = {
    'data, arguments and their defaults': { query: 'query Q($n: Int!) { items(first: $n) { id label plain: label(upper: 0) up: label(upper: 1) } }', variables: { n: 2 } },
    "a resolver's unexpected error and its refusal, with their paths and locations": { query: '{ items(first: 2) { id broken refused } }' },
    'a null for a non-null field': { query: '{ items(first: 1) { id missing } }' },
    'a variable of the wrong type': { query: 'query Q($n: Int!) { items(first: $n) { id } }', variables: { n: 'two' } },
    'a missing variable': { query: 'query Q($n: Int!) { items(first: $n) { id } }', variables: {} },
    'a list of many bad values (graphql-js stops at 50 errors)': {
      query: 'query Q($tags: [Int!]) { items(first: 1, tags: $tags) { id } }',
      variables: { tags: Array.from({ length: 1000 }, (_, i) => `s${i}`) },
    },
  };
  it.each(Object.entries(cases))('%s', async (_name, { query, variables }) => {
    const document = parse(query);
    const compiled = compileOperation(schema, document);
    expect(compiled.fallbackReason).toBeUndefined();
    const expected = await execute({ schema, document, variableValues: variables });
    expect(comparable(await compiled.run(undefined, variables))).toEqual(comparable(expected));
  });

  it('runs on graphql-js, saying why, where graphql-jit cannot compile it', async () => {
    const document = parse('query A { items(first: 1) { id } }');
    const compiled = compileOperation(schema, document, 'B');
    expect(compiled.fallbackReason).toMatch(/B/);
    expect(comparable(await compiled.run(undefined, {}))).toEqual(comparable(await execute({ schema, document, operationName: 'B' })));
  });
});

describe('the compiled execution gateway', () => {
  async function executorOf(maxDocuments: number) {
    const gateway = compiledExecutionGateway(schema, pino({ level: 'silent' }), maxDocuments);
    const schemas: GraphQLSchema[] = [];
    gateway.onSchemaLoadOrUpdate(({ apiSchema }) => void schemas.push(apiSchema));
    const { executor } = await gateway.load({ apollo: {} });
    expect(schemas).toEqual([schema]);
    const documents = new Map<string, ReturnType<typeof parse>>();
    // Apollo hands over the document it parsed (and keeps) for the query's hash: the same object each time.
    const run = (queryHash: string, query: string) => {
      const document = documents.get(queryHash) ?? parse(query);
      documents.set(queryHash, document);
      return executor!({ request: { query }, queryHash, document, context: {} } as unknown as Parameters<NonNullable<typeof executor>>[0]);
    };
    return { run, stop: () => gateway.stop() };
  }

  it('compiles a document once, and again only after it left the bounded cache', async () => {
    const { run, stop } = await executorOf(2);
    try {
      const before = compiles.length;
      expect(await run('one', '{ items(first: 1) { id } }')).toEqual({ data: { items: [{ id: 'a' }] } });
      await run('one', '{ items(first: 1) { id } }');
      await run('two', '{ items(first: 2) { id } }');
      await run('one', '{ items(first: 1) { id } }');
      expect(compiles.length - before).toBe(2);
      // A third document: the least recently used (two) leaves, one stays.
      await run('three', '{ items(first: 3) { id } }');
      await run('one', '{ items(first: 1) { id } }');
      expect(compiles.length - before).toBe(3);
      await run('two', '{ items(first: 2) { id } }');
      expect(compiles.length - before).toBe(4);
    } finally {
      await stop();
    }
  });
});
