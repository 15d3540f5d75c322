import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  parse,
} from 'graphql';
import Fastify from 'fastify';
import { compileRecord, REST_LEAF_SERIALIZERS, serializerSchema, successBodySchema, successSerializerSchema, type JsonSchema } from '../../src/rest/record';
import type { RestRecord, RestRoute } from '../../src/rest/route';
import { domainError } from './refusal';

/**
 * A small schema with what records meet in the real one: an enum whose values differ from its names (as
 * type-graphql registers `PostSource`), a DateTime scalar, nullable and non-null fields, lists and nested objects.
 */
const PostSource = new GraphQLEnumType({ name: 'PostSource', values: { APP: { value: 'app' }, EXTERNAL_API: { value: 'external_api' } } });
const DateTime = new GraphQLScalarType({ name: 'DateTime' });
const CallToAction = new GraphQLObjectType({
  name: 'CallToAction',
  fields: { actionType: { type: new GraphQLNonNull(GraphQLString) }, url: { type: GraphQLString } },
});
const ProviderBody = new GraphQLObjectType({
  name: 'ProviderBody',
  fields: { topicType: { type: GraphQLString }, createTime: { type: DateTime }, source: { type: PostSource }, callToAction: { type: CallToAction } },
});
const Post = new GraphQLObjectType({
  name: 'Post',
  fields: {
    postId: { type: new GraphQLNonNull(GraphQLID) },
    accountId: { type: new GraphQLNonNull(GraphQLString) },
    source: { type: new GraphQLNonNull(PostSource) },
    createdAt: { type: new GraphQLNonNull(DateTime) },
    summary: { type: GraphQLString },
    score: { type: GraphQLFloat },
    views: { type: GraphQLInt },
    published: { type: new GraphQLNonNull(GraphQLBoolean) },
    tags: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))) },
    providerBody: { type: ProviderBody },
  },
});
const PostsPage = new GraphQLObjectType({
  name: 'PostsPage',
  fields: { posts: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Post))) }, found: { type: new GraphQLNonNull(GraphQLInt) } },
});
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: { post: { type: Post, args: { id: { type: GraphQLID } } }, posts: { type: new GraphQLNonNull(PostsPage) } },
  }),
});

const record = (operation: string, rules: Partial<RestRecord> & Pick<RestRecord, 'at'>) =>
  compileRecord(schema, parse(operation), { times: 'iso', ...rules }, 'Route GET /test');

const ajv = new Ajv2020({ strict: true, strictTypes: false });
addFormats(ajv);
/** Whether a presented value is one its own schema describes (the OpenAPI document publishes that schema). */
const conforms = (recordSchema: JsonSchema, value: unknown) => ajv.validate(recordSchema, value) || ajv.errorsText();

const created = '2024-02-29T12:00:00.000Z';

describe('a REST record', () => {
  it('writes field names in snake_case, unless the route renames them', () => {
    const post = record('query { post(id: "1") { postId accountId summary } }', { at: 'post', names: { 'Post.accountId': 'account' } });
    expect(post.present({ post: { postId: 'p1', accountId: 'acc1', summary: 'Hello' } })).toEqual({ post_id: 'p1', account: 'acc1', summary: 'Hello' });
  });

  it('writes times as the route document does', () => {
    const operation = 'query { post(id: "1") { createdAt } }';
    // 2024-02-29T12:00Z is 19782 days and 12 hours after the epoch: (19782 × 24 + 12) × 3600 × 1000 ms.
    expect(record(operation, { at: 'post', times: 'epochMs' }).present({ post: { createdAt: created } })).toEqual({ created_at: 1709208000000 });
    expect(record(operation, { at: 'post', times: 'iso' }).present({ post: { createdAt: created } })).toEqual({ created_at: created });
    // A compiled operation hands the record the Date itself (REST_LEAF_SERIALIZERS): the same ms; an ISO time is
    // left to the serializer, which writes a Date as its ISO string.
    const date = new Date(created);
    expect(record(operation, { at: 'post', times: 'epochMs' }).present({ post: { createdAt: date } })).toEqual({ created_at: 1709208000000 });
    expect(JSON.stringify(record(operation, { at: 'post', times: 'iso' }).present({ post: { createdAt: date } }))).toBe(`{"created_at":"${created}"}`);
  });

  it('gets times from compiled operations as the DateTime scalar checks them, as Dates', () => {
    const serialize = REST_LEAF_SERIALIZERS.DateTime!;
    const date = new Date(created);
    expect(serialize(date)).toBe(date);
    expect(serialize(created)).toEqual(date);
    expect(serialize(1709208000000)).toEqual(date);
    expect(() => serialize(new Date(Number.NaN))).toThrow('DateTime cannot represent an invalid Date instance');
    expect(() => serialize('yesterday')).toThrow('DateTime cannot represent an invalid date-time-string yesterday');
    expect(() => serialize(8.64e15 + 1)).toThrow('Invalid time value');
  });

  it('writes an enum as its value, the documented spelling', () => {
    const post = record('query { post(id: "1") { source } }', { at: 'post' });
    expect(post.present({ post: { source: 'EXTERNAL_API' } })).toEqual({ source: 'external_api' });
    expect(post.schema).toMatchObject({ properties: { source: { enum: ['app', 'external_api'] } } });
  });

  it('writes null as null, or leaves the field out where the route says it is absent when unset', () => {
    const operation = 'query { post(id: "1") { postId summary score } }';
    expect(record(operation, { at: 'post' }).present({ post: { postId: 'p1', summary: null, score: null } })).toEqual({ post_id: 'p1', summary: null, score: null });
    const sparse = record(operation, { at: 'post', absentWhenNull: ['Post.summary'] });
    expect(sparse.present({ post: { postId: 'p1', summary: null, score: null } })).toEqual({ post_id: 'p1', score: null });
    expect(sparse.present({ post: { postId: 'p1', summary: 'Hi', score: 1.5 } })).toEqual({ post_id: 'p1', summary: 'Hi', score: 1.5 });
    // Absent when unset: not required, and never null when present.
    expect(sparse.schema).toMatchObject({ required: ['post_id', 'score'], properties: { summary: { type: 'string' }, score: { type: ['number', 'null'] } } });
  });

  it('passes the provider body through verbatim: its names, no conversion, null fields left out', () => {
    const post = record('query { post(id: "1") { postId providerBody { topicType createTime source callToAction { actionType url } } } }', {
      at: 'post',
      times: 'epochMs',
      verbatim: ['Post.providerBody'],
    });
    const body = { topicType: 'EVENT', createTime: created, source: 'APP', callToAction: { actionType: 'CALL', url: null } };
    expect(post.present({ post: { postId: 'p1', providerBody: body } })).toEqual({
      post_id: 'p1',
      provider_body: { topicType: 'EVENT', createTime: created, source: 'APP', callToAction: { actionType: 'CALL' } },
    });
    expect(post.present({ post: { postId: 'p1', providerBody: null } })).toEqual({ post_id: 'p1', provider_body: null });
  });

  it('names an alias in snake_case, as the operation chose it', () => {
    const post = record('query { post(id: "1") { id: postId createdOn: createdAt accountId } }', { at: 'post', names: { 'Post.accountId': 'account' } });
    expect(post.present({ post: { id: 'p1', createdOn: created, accountId: 'acc1' } })).toEqual({ id: 'p1', created_on: created, account: 'acc1' });
  });

  it('expands fragments and inline fragments', () => {
    const post = record('query { post(id: "1") { ...Ids ... on Post { published } } } fragment Ids on Post { postId }', { at: 'post' });
    expect(post.present({ post: { postId: 'p1', published: true } })).toEqual({ post_id: 'p1', published: true });
  });

  describe('at several paths', () => {
    const operation = 'query ($full: Boolean!) { full: post(id: "1") @include(if: $full) { postId summary } brief: post(id: "1") @skip(if: $full) { postId } }';
    const post = record(operation, { at: ['full', 'brief'] });

    it('is the first one present', () => {
      expect(post.present({ brief: { postId: 'p1' } })).toEqual({ post_id: 'p1' });
      expect(post.present({ full: { postId: 'p1', summary: null } })).toEqual({ post_id: 'p1', summary: null });
      expect(post.schema).toEqual({ oneOf: [expect.objectContaining({ required: ['post_id', 'summary'] }), expect.objectContaining({ required: ['post_id'] })] });
    });

    it('is an error of ours when none is present', () => {
      expect(() => post.present({})).toThrow("Route GET /test: the operation's data has no payload at full or brief");
    });
  });

  describe('of a list', () => {
    const operation = 'query { posts { found posts { postId createdAt } } }';

    it('names the fields of its items', () => {
      const page = record(operation, { at: 'posts' });
      expect(page.itemFields('posts')).toEqual(['post_id', 'created_at']);
      expect(page.itemFields('found')).toBeUndefined();
      expect(page.itemFields('nothing')).toBeUndefined();
    });

    it('answers an empty list with the route error when it has one', () => {
      const page = record(operation, { at: 'posts.posts', emptyList: { code: 'NOT_FOUND', message: 'No posts found' } });
      expect(page.present({ posts: { found: 1, posts: [{ postId: 'p1', createdAt: created }] } })).toEqual([{ post_id: 'p1', created_at: created }]);
      expect(() => page.present({ posts: { found: 0, posts: [] } })).toThrow(domainError('NOT_FOUND', 'No posts found'));
      expect(record(operation, { at: 'posts.posts' }).present({ posts: { found: 0, posts: [] } })).toEqual([]);
    });
  });

  it('describes what it presents', () => {
    const operation = 'query { post(id: "1") { postId source createdAt summary score views published tags providerBody { topicType source callToAction { actionType url } } } }';
    const post = record(operation, { at: 'post', times: 'epochMs', verbatim: ['Post.providerBody'], absentWhenNull: ['Post.views'] });
    // The payload itself is never null: a missing one is the route's 404, not a null record.
    expect(post.schema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(post.schema.properties).toMatchObject({
      created_at: { type: 'integer' },
      tags: { type: 'array', items: { type: 'string' } },
      source: { enum: ['app', 'external_api'] },
      // The provider body may be null; inside it nothing is required and nothing is null (unset fields are left out).
      provider_body: {
        type: ['object', 'null'],
        required: [],
        properties: { source: { enum: ['APP', 'EXTERNAL_API'] }, callToAction: { required: [], properties: { url: { type: 'string' } } } },
      },
    });
    const full = {
      post: {
        postId: 'p1',
        source: 'APP',
        createdAt: created,
        summary: null,
        score: 4.5,
        views: null,
        published: false,
        tags: ['bread'],
        providerBody: { topicType: null, source: 'APP', callToAction: { actionType: 'BOOK', url: 'https://bakery.example/' } },
      },
    };
    expect(conforms(post.schema, post.present(full))).toBe(true);
    expect(conforms(post.schema, post.present({ post: { ...full.post, views: 12, providerBody: null } }))).toBe(true);
  });

  describe("'s serializer", () => {
    const route = (payload: RestRecord, envelope?: RestRoute['envelope']) => ({ payload, envelope }) as unknown as RestRoute;
    /** The body as the route's compiled serializer writes it: Fastify's response schema, as src/rest/adapter.ts sets it. */
    const written = async (body: JsonSchema, value: unknown) => {
      const schema = serializerSchema(body);
      if (!schema) throw new Error('not compiled');
      const app = Fastify();
      app.get('/', { schema: { response: { 200: schema } } }, async () => value);
      const response = await app.inject({ method: 'GET', url: '/' });
      await app.close();
      return response.body;
    };
    const operation =
      'query { posts { found posts { views postId createdAt summary score published tags source providerBody { topicType createTime callToAction { url actionType } } } } }';
    const post = {
      views: 3,
      postId: 'p1',
      createdAt: new Date(created),
      summary: 'Crème "brûlée" \\ 🍮 \u0001 \ud800 and a long line of text past forty-two characters',
      score: 4.25,
      published: true,
      tags: ['bread', 'é'],
      source: 'APP',
      providerBody: { topicType: null, createTime: new Date(created), callToAction: { url: null, actionType: 'CALL' } },
    };

    it("writes the bytes JSON.stringify writes, in the record's order, absent members included", async () => {
      const rules: RestRecord = { at: 'posts', times: 'epochMs', verbatim: ['Post.providerBody'], absentWhenNull: ['Post.views'] };
      const page = record(operation, rules);
      const data = { posts: { found: 3, posts: [post, { ...post, views: null, summary: null, providerBody: null }, { ...post, tags: [] }] } };
      for (const envelope of ['payload', 'spread'] as const) {
        const body = successBodySchema(route(rules, envelope), page.schema);
        const presented = page.present(data) as Record<string, unknown>;
        const enveloped = envelope === 'spread' ? { success: true, ...presented } : { success: true, payload: presented };
        // `views` (absent when null) comes first: the serializer would write required members first without this.
        expect(await written(body, enveloped)).toBe(JSON.stringify(enveloped));
      }
      const iso = record(operation, { ...rules, times: 'iso' });
      const isoBody = { success: true, payload: iso.present(data) };
      expect(await written(successBodySchema(route({ ...rules, times: 'iso' }), iso.schema), isoBody)).toBe(JSON.stringify(isoBody));
    });

    it('writes the items of a field selection with the fields kept', async () => {
      const rules: RestRecord = { at: 'posts', times: 'epochMs', fieldSelection: { parameter: 'include_fields', list: 'posts', always: ['post_id'] } };
      const page = record(operation, rules);
      const body = { success: true, ...(page.present({ posts: { found: 1, posts: [post] } }) as object) };
      const kept = { ...body, posts: [{ views: 3, post_id: 'p1', tags: ['bread', 'é'] }] };
      expect(await written(successBodySchema(route(rules, 'spread'), page.schema), kept)).toBe(JSON.stringify(kept));
    });

    it('is not compiled for a payload at several paths', () => {
      const operation = 'query ($full: Boolean!) { full: post(id: "1") @include(if: $full) { postId } brief: post(id: "1") @skip(if: $full) { postId } }';
      const rules: RestRecord = { at: ['full', 'brief'], times: 'iso' };
      expect(serializerSchema(successBodySchema(route(rules), record(operation, rules).schema))).toBeUndefined();
    });

    it('is not used where the route writes with JSON.stringify', () => {
      const rules: RestRecord = { at: 'post', times: 'iso' };
      const post = record('query { post(id: "1") { postId } }', rules);
      expect(successSerializerSchema(route(rules), post.schema)).toMatchObject({ properties: { payload: { properties: { post_id: { type: 'string' } } } } });
      expect(successSerializerSchema(route({ ...rules, writer: 'JSON.stringify' }), post.schema)).toBeUndefined();
    });
  });

  it.each([
    ['a path the operation does not select', 'query { post(id: "1") { postId } }', 'posts', 'Route GET /test: posts is not selected by the operation'],
    ['a path through a leaf', 'query { post(id: "1") { postId } }', 'post.postId.more', 'Route GET /test: post.postId.more does not lead to a field'],
    ['an object without a selection', 'query { post(id: "1") }', 'post', 'Route GET /test: Query.post is an object without a selection'],
    ['an unknown fragment', 'query { post(id: "1") { ...Missing } }', 'post', 'Route GET /test: unknown fragment Missing'],
    ['no operation', 'fragment Ids on Post { postId }', 'post', 'Route GET /test: no operation'],
  ])('refuses at start-up %s', (_what, operation, at, message) => {
    expect(() => record(operation, { at })).toThrow(message);
  });
});
