import { RestCreatePostDocument, RestDeletePostDocument, RestPostDocument, RestPostsDocument } from '../../generated/graphql';
import { accountIdQuery as accountId, bodyFields, defineRoute, header, path, query, type RestRecord } from '../route';

/**
 * The document's post record: the `Post` fields RestPostFields selects, snake_case, times in ms since the epoch,
 * `params` as the provider's body (src/rest/operations/post.graphql).
 */
export const postRecord = {
  times: 'epochMs',
  names: { 'Post.accountId': 'account' },
  verbatim: ['Post.params'],
} as const satisfies Omit<RestRecord, 'at'>;

const tag = 'Posts';

export const postRoutes = [
  defineRoute({
    method: 'POST',
    path: '/post',
    operationId: 'createPost',
    summary: 'Creates a post for one location; it answers at once in SENDING and is published by a job.',
    tag,
    operation: RestCreatePostDocument,
    variables: {
      accountId,
      idempotencyKey: header('Idempotency-Key', 'same key and same body within 24 h: the original post again'),
      input: bodyFields(
        {
          locationId: 'location_id',
          params: 'params',
          useLocationWebsiteUrl: 'use_location_website_url',
          parameterMask: 'parameterMask',
          parameters: 'parameters',
        },
        // params is the provider's local-post body, in its own names (as the record presents it).
        { verbatim: ['CreatePostInput.params'] },
      ),
    },
    successStatus: 202,
    payload: { ...postRecord, at: 'createPost.post' },
    errors: ['IDEMPOTENCY_KEY_REUSED', 'RATE_LIMIT_EXCEEDED', 'QUOTA_REACHED'],
  }),
  defineRoute({
    method: 'GET',
    path: '/post',
    operationId: 'listPosts',
    summary: 'Lists posts of the account, newest first; campaign posts never, deleted ones only with state=DELETED.',
    tag,
    operation: RestPostsDocument,
    variables: {
      accountId,
      locationId: query('location_id', 'only this location'),
      state: query('state', 'SENDING, SCHEDULED, LIVE, PROCESSING, REJECTED, ERROR or DELETED'),
      source: query('source', 'app or external_api'),
      q: query('q', 'full-text search on the summary'),
      page: query('page', '1-based, default 1'),
      perPage: query('per_page', '1 to 100, default 20'),
    },
    successStatus: 200,
    payload: { ...postRecord, at: 'postsPage' },
  }),
  defineRoute({
    method: 'GET',
    path: '/post/:id',
    operationId: 'getPost',
    summary: 'One post: the polling operation for creation and deletion.',
    tag,
    operation: RestPostDocument,
    variables: { accountId, id: path('id', 'the post id') },
    successStatus: 200,
    payload: { ...postRecord, at: 'post' },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/post/:id',
    operationId: 'deletePost',
    summary: 'Deletes a post: at once if it never reached the provider, else queued (state SENDING) until DELETED.',
    tag,
    operation: RestDeletePostDocument,
    variables: { accountId, id: path('id', 'the post id') },
    successStatus: 202,
    payload: { ...postRecord, at: 'deletePost' },
  }),
];
