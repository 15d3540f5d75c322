import {
  RestCreatePostDocument,
  RestDeletePostDocument,
  RestPostDocument,
  RestPostsDocument,
  type RestPostFieldsFragment,
} from '../../generated/graphql';
import { epochMs } from '../presenters';
import { bodyFields, defineRoute, header, path, query } from '../route';

/** Absent content fields stay absent in the record, as the provider's body has them. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]));
  }
  return value;
}

/** GraphQL enum names -> the document's source values. */
const SOURCE_VALUES: Record<string, string> = { APP: 'app', EXTERNAL_API: 'external_api' };

/** The document's post record: snake_case, times in ms since the epoch. */
export function presentPost(post: RestPostFieldsFragment) {
  return {
    id: post.id,
    post_id: post.postId,
    location_id: post.locationId,
    account: post.accountId,
    state: post.state,
    source: SOURCE_VALUES[post.source] ?? post.source,
    create_time: epochMs(post.createTime),
    published_time: epochMs(post.publishedTime),
    update_time: epochMs(post.updateTime),
    scheduled_time: epochMs(post.scheduledTime),
    search_url: post.searchUrl,
    last_error: post.lastError
      ? {
          status: post.lastError.status,
          reason: post.lastError.reason,
          message: post.lastError.message,
          details: post.lastError.details,
          at: epochMs(post.lastError.at),
        }
      : null,
    params: withoutNulls(post.params),
  };
}

const ms = { type: ['integer', 'null'], description: 'milliseconds since epoch' };
const postSchema = {
  type: 'object',
  required: ['id', 'post_id', 'location_id', 'account', 'state', 'source', 'create_time', 'params'],
  properties: {
    id: { type: 'string' },
    post_id: { type: ['string', 'null'], description: 'accounts/<a>/locations/<l>/localPosts/<p>; null until published' },
    location_id: { type: 'string' },
    account: { type: 'string' },
    state: { enum: ['SENDING', 'SCHEDULED', 'LIVE', 'PROCESSING', 'REJECTED', 'ERROR', 'DELETED'] },
    source: { enum: ['app', 'external_api'] },
    create_time: { type: 'integer' },
    published_time: ms,
    update_time: ms,
    scheduled_time: ms,
    search_url: { type: ['string', 'null'] },
    last_error: {
      type: ['object', 'null'],
      properties: {
        status: { type: 'integer' },
        reason: { type: 'string' },
        message: { type: 'string' },
        details: { type: 'array' },
        at: { type: 'integer' },
      },
    },
    params: { type: 'object', description: "the alpha provider's local-post body" },
  },
};

const tag = 'Posts';
const accountId = query('account_id', 'required with an organization token; ignored with an account token');

export const postRoutes = [
  defineRoute({
    method: 'POST',
    path: '/post',
    summary: 'Creates a post for one location; it answers at once in SENDING and is published by a job.',
    tag,
    operation: RestCreatePostDocument,
    variables: {
      accountId,
      idempotencyKey: header('Idempotency-Key', 'same key and same body within 24 h: the original post again'),
      input: bodyFields({
        locationId: 'location_id',
        params: 'params',
        useLocationWebsiteUrl: 'use_location_website_url',
        parameterMask: 'parameterMask',
        parameters: 'parameters',
      }),
    },
    successStatus: 202,
    present: (data) => presentPost(data.createPost.post),
    payloadSchema: postSchema,
  }),
  defineRoute({
    method: 'GET',
    path: '/post',
    summary: 'Lists posts of the account, newest first; campaign posts never, deleted ones only with state=DELETED.',
    tag,
    operation: RestPostsDocument,
    variables: {
      accountId,
      locationId: query('location_id', 'only this location'),
      state: query('state', 'SENDING, SCHEDULED, LIVE, PROCESSING, REJECTED, ERROR or DELETED'),
      source: query('source', 'app or external_api', { restValues: ['app', 'external_api'], toGraphQL: (value) => value.toUpperCase() }),
      q: query('q', 'full-text search on the summary'),
      page: query('page', '1-based, default 1'),
      perPage: query('per_page', '1 to 100, default 20'),
    },
    successStatus: 200,
    present: (data) => ({
      found: data.postsPage.found,
      page: data.postsPage.page,
      per_page: data.postsPage.perPage,
      posts: data.postsPage.posts.map(presentPost),
    }),
    payloadSchema: {
      type: 'object',
      required: ['found', 'page', 'per_page', 'posts'],
      properties: { found: { type: 'integer' }, page: { type: 'integer' }, per_page: { type: 'integer' }, posts: { type: 'array', items: postSchema } },
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/post/:id',
    summary: 'One post: the polling operation for creation and deletion.',
    tag,
    operation: RestPostDocument,
    variables: { accountId, id: path('id', 'the post id') },
    successStatus: 200,
    present: (data) => presentPost(data.post),
    payloadSchema: postSchema,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/post/:id',
    summary: 'Deletes a post: at once if it never reached the provider, else queued (state SENDING) until DELETED.',
    tag,
    operation: RestDeletePostDocument,
    variables: { accountId, id: path('id', 'the post id') },
    successStatus: 202,
    present: (data) => ({
      id: data.deletePost.id,
      post_id: data.deletePost.postId,
      state: data.deletePost.state,
      message: data.deletePost.message,
    }),
    payloadSchema: {
      type: 'object',
      required: ['id', 'post_id', 'state', 'message'],
      properties: { id: { type: 'string' }, post_id: { type: ['string', 'null'] }, state: { type: 'string' }, message: { type: 'string' } },
    },
  }),
];
