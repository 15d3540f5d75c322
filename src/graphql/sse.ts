import { PassThrough } from 'node:stream';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, OperationTypeNode, type ExecutionResult, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { isDependencyUnavailable } from '../errors/dependency-unavailable';
import { DomainError, errorCatalogue, errorCodeForStatus, type ErrorCode } from '../errors/domain-error';
import { limitHeaders } from '../http/limit-headers';
import { errorCodeLabel } from '../observability/metrics';
import type { Runtime } from '../runtime';
import type { Context } from './context';
import type { TrustedDocuments } from './trusted-documents';
import { toGraphQLError } from './errors';
import { classifyError, formatGraphQLError } from './format-error';
import { checkOperation, documentChecker, internalError, rootFieldOf, subscriptionGroupKey, unauthenticatedError, type OperationRequest } from './operation-checks';
import { oncePerResult, SubscriptionGroups } from './subscription-groups';

/** What GraphQL over Server-Sent Events uses: the schema, the one context factory, and where revocations arrive. */
export interface SseDependencies {
  schema: GraphQLSchema;
  /** The one context factory (src/context.ts), per request, with the request's logger. */
  createContext(authorization: unknown, log: FastifyBaseLogger): Promise<Context>;
  runtime: Pick<Runtime, 'events' | 'metrics'>;
  /** Trusted documents only, when set: an operation must be one of the manifests' (src/graphql/trusted-documents.ts). */
  trusted?: TrustedDocuments;
  /** Production hides graphql-js's "Did you mean" hints (they name schema fields). */
  hideSuggestions: boolean;
}

/** Where subscriptions are served over Server-Sent Events (graphql-sse's distinct connections mode). */
export const SSE_PATH = '/graphql/stream';

/**
 * How often an open stream sends a comment line when nothing else is sent: proxies and load balancers close a
 * response that stays silent (nginx and AWS load balancers after 60 s, Heroku after 55 s, Google's after 30 s).
 */
export const SSE_KEEP_ALIVE_MS = 15_000;

/** Seconds a client is told to wait when its stream was being set up while the server stopped. */
const RETRY_AFTER_STOPPING_SECONDS = 5;

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  // Never stored, never transformed (compressing proxies buffer), never buffered by nginx.
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/** graphql-sse's messages (PROTOCOL.md, distinct connections mode): `next` carries one result, `complete` ends. */
const nextMessage = (result: ExecutionResult | { errors: readonly GraphQLFormattedError[] }) => `event: next\ndata: ${JSON.stringify(result)}\n\n`;
const COMPLETE_MESSAGE = 'event: complete\ndata:\n\n';
/** A comment: ignored by every SSE client, it keeps the response from looking idle. */
const KEEP_ALIVE_MESSAGE = ':\n\n';

/**
 * Subscriptions over Server-Sent Events, beside graphql-ws, for clients whose proxies strip WebSocket upgrades: the
 * graphql-sse protocol in its distinct connections mode (one HTTP request per subscription) at `GET` or `POST
 * /graphql/stream` with `Accept: text/event-stream`. The same rules as graphql-ws (src/graphql/websocket.ts):
 *
 * - the bearer token of the `Authorization` header, through the one context factory; refused with 401 before any
 *   stream starts, 503 (Retry-After) while a dependency is down;
 * - the same parse limits, validation and cost rules and variable checks (operation-checks.ts), answered before
 *   any stream starts as 400 with the GraphQL error list, through the one formatter; subscriptions only (queries
 *   and mutations: 400, they are served by /graphql);
 * - the same scoping (the subscriptions' filters scope by principal) and the same sharing of one execution among
 *   identical subscriptions of one visibility;
 * - a revoked token's streams (in any process, through the event bus) end with an UNAUTHENTICATED error and
 *   `complete`; a stopping server ends every stream without `complete`, so clients reconnect (to another instance);
 * - a comment every SSE_KEEP_ALIVE_MS; running subscriptions and operations counted with transport `sse`.
 */
export function registerGraphQLOverSse(app: FastifyInstance, dependencies: SseDependencies): void {
  const { schema, runtime, hideSuggestions } = dependencies;
  const { metrics } = runtime;
  const checkDocument = documentChecker(schema);
  // Identical subscriptions of one visibility share one execution per event.
  const groups = new SubscriptionGroups();
  // A group's result without errors, as the `next` message every stream of the group writes: serialized once per
  // event. (Errors go through each request's formatter, which logs with that request's id.)
  const sharedNextMessage = oncePerResult(nextMessage);
  // Streams set up or running: by token, so a revocation (in any process) ends them; all, so a stop ends them.
  const streams = new Set<EventStream>();
  const streamsByToken = new Map<string, Set<EventStream>>();
  let stopping = false;

  const stopWatchingRevocations = runtime.events.subscribe('token.revoked', ({ tokenId }) => {
    for (const stream of streamsByToken.get(tokenId) ?? []) stream.revoke();
  });
  // Before the server waits for requests in flight: an open stream would hold the stop for as long as its client.
  app.addHook('preClose', async () => {
    stopping = true;
    stopWatchingRevocations();
    for (const stream of [...streams]) stream.stop();
  });

  const track = (stream: EventStream, tokenId: string) => {
    streams.add(stream);
    let ofToken = streamsByToken.get(tokenId);
    if (!ofToken) streamsByToken.set(tokenId, (ofToken = new Set()));
    ofToken.add(stream);
    return () => {
      streams.delete(stream);
      ofToken.delete(stream);
      if (ofToken.size === 0 && streamsByToken.get(tokenId) === ofToken) streamsByToken.delete(tokenId);
    };
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const started = performance.now();
    const format = (error: GraphQLError) => formatGraphQLError(error, { log: request.log, hideSuggestions });
    const refuse = (errors: readonly GraphQLError[], headers: Record<string, string> = {}) => sendErrors(reply, errors, format, headers);

    if (!acceptsEventStream(request.headers.accept)) {
      return refuse([domainError('NOT_ACCEPTABLE', `${SSE_PATH} answers text/event-stream only (send Accept: text/event-stream); other operations are served at /graphql`)]);
    }
    // Who is calling, before anything of the request is looked at.
    let context: Context;
    try {
      context = await dependencies.createContext(request.headers.authorization, request.log);
    } catch (error) {
      // A dependency that is down answers 503 with Retry-After (the formatter logs it as a warning); else a masked 500.
      return refuse([internalError(error)]);
    }
    const { principal } = context;
    if (!principal) return refuse([unauthenticatedError()]);

    const params = operationRequestOf(request);
    if (params instanceof DomainError) return refuse([toGraphQLError(params)]);
    const count = (type: string, errors?: readonly GraphQLError[], name?: string) =>
      metrics?.countOperation({ name: params.operationName ?? name, type, transport: 'sse', errorCode: errorCodeLabel(errors?.[0]), started });

    const checked = checkOperation(schema, checkDocument, params, dependencies.trusted);
    if (Array.isArray(checked)) {
      count('unknown', checked);
      return refuse(checked);
    }
    const { document, operation } = checked;
    if (operation.operation !== OperationTypeNode.SUBSCRIPTION) {
      const errors = [domainError('BAD_REQUEST', `${SSE_PATH} serves subscriptions only: send queries and mutations to /graphql`)];
      count(operation.operation, errors, operation.name?.value);
      return refuse(errors);
    }

    const stream = new EventStream(request.log, format, sharedNextMessage);
    const untrack = track(stream, principal.tokenId);
    let source: AsyncGenerator<ExecutionResult> | ExecutionResult;
    try {
      source = await groups.subscribe(subscriptionGroupKey(params, principal), {
        schema,
        document,
        operationName: params.operationName,
        variableValues: params.variables,
        contextValue: context,
      });
    } catch (error) {
      untrack();
      count(operation.operation, [internalError(error)], operation.name?.value);
      return refuse([internalError(error)]);
    }
    if (!(Symbol.asyncIterator in source)) {
      // graphql-js refused the subscription itself (its source stream could not be made): answered, never streamed.
      untrack();
      const errors = source.errors ?? [internalError(new Error('A subscription without a source stream nor errors'))];
      count(operation.operation, errors, operation.name?.value);
      return refuse(errors);
    }
    count(operation.operation, undefined, operation.name?.value);
    // Revoked or stopped while it was being set up: refused as it would be now.
    if (stream.endedEarly || stopping) {
      untrack();
      void source.return(undefined);
      if (stream.endedEarly === 'revoked') return refuse([unauthenticatedError()]);
      return sendErrors(
        reply,
        [domainError('SERVICE_UNAVAILABLE', 'The server is stopping; retry shortly')],
        format,
        { connection: 'close', ...Object.fromEntries(limitHeaders({ retryAfterSeconds: RETRY_AFTER_STOPPING_SECONDS })) },
      );
    }
    const field = rootFieldOf(operation);
    metrics?.subscriptions.inc({ field });
    stream.start(reply, source, () => {
      untrack();
      metrics?.subscriptions.dec({ field });
    });
    return reply;
  };

  app.route({
    method: ['GET', 'POST'],
    url: SSE_PATH,
    // A HEAD of an endless stream would never end.
    exposeHeadRoute: false,
    handler: handle,
    // What Fastify refuses before the handler (a body that is not JSON, too large, of another type) and whatever
    // escapes it: the GraphQL error list, as /graphql answers them.
    errorHandler: (error: FastifyError, request, reply) => {
      const format = (graphqlError: GraphQLError) => formatGraphQLError(graphqlError, { log: request.log, hideSuggestions });
      const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
      const errors = status === 500 || isDependencyUnavailable(error) ? [internalError(error)] : [domainError(errorCodeForStatus(status), error.message)];
      void sendErrors(reply, errors, format);
    },
  });
}

/** Why a stream was refused after it was registered, before it started. */
type EndedEarly = 'revoked' | 'stopping';

/**
 * One subscription's event stream: its results as `next` messages, `complete` when its source ends, a comment
 * every SSE_KEEP_ALIVE_MS. Ends when its source ends, its token is revoked, the server stops or the client goes
 * away; whichever comes first releases the subscription.
 */
class EventStream {
  private body: PassThrough | undefined;
  private source: AsyncGenerator<ExecutionResult> | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  private released: (() => void) | undefined;
  private finished = false;
  /** Set when a revocation or a stop came before the stream started. */
  endedEarly: EndedEarly | undefined;

  constructor(
    private readonly log: FastifyBaseLogger,
    private readonly format: (error: GraphQLError) => GraphQLFormattedError,
    /** The `next` message of a result without errors, shared by the streams of its group. */
    private readonly nextMessageOf: (result: ExecutionResult) => string,
  ) {}

  start(reply: FastifyReply, source: AsyncGenerator<ExecutionResult>, released: () => void): void {
    const body = new PassThrough();
    this.body = body;
    this.source = source;
    this.released = released;
    // The client went away (Fastify destroys the body then), or the body ended and was sent.
    body.once('close', () => this.release());
    void reply.code(200).headers(STREAM_HEADERS).send(body);
    // The status and headers go out with the first bytes: at once, so the client knows the stream is open.
    this.write(KEEP_ALIVE_MESSAGE);
    this.keepAlive = setInterval(() => this.write(KEEP_ALIVE_MESSAGE), SSE_KEEP_ALIVE_MS);
    void this.pump(source);
  }

  /** The token was revoked: the client is told why, and the stream completes (a client does not retry it). */
  revoke(): void {
    if (!this.body) {
      this.endedEarly ??= 'revoked';
      return;
    }
    this.write(nextMessage({ errors: [this.format(unauthenticatedError('The bearer token of this subscription was revoked'))] }));
    this.finish(true);
  }

  /** The server stops: the response ends without `complete`, which graphql-sse clients take as a reason to reconnect. */
  stop(): void {
    if (!this.body) {
      this.endedEarly ??= 'stopping';
      return;
    }
    this.finish(false);
  }

  private async pump(source: AsyncGenerator<ExecutionResult>): Promise<void> {
    try {
      for (;;) {
        const step: IteratorResult<ExecutionResult, unknown> = await source.next();
        if (step.done || this.finished) break;
        const value = step.value;
        this.write(value.errors ? nextMessage({ ...value, errors: value.errors.map(this.format) }) : this.nextMessageOf(value));
      }
    } catch (error) {
      // The source itself failed (the event bus, say): the client reads it masked (its cause is logged), then `complete`.
      if (!this.finished) this.write(nextMessage({ errors: [this.format(error instanceof GraphQLError ? error : internalError(error))] }));
    }
    this.finish(true);
  }

  private write(chunk: string): void {
    const { body } = this;
    if (!body || this.finished || body.destroyed || body.writableEnded) return;
    body.write(chunk);
  }

  private finish(complete: boolean): void {
    if (this.finished) return;
    if (complete) this.write(COMPLETE_MESSAGE);
    this.finished = true;
    const { body } = this;
    if (body && !body.destroyed && !body.writableEnded) body.end();
    this.release();
  }

  /** Once, however the stream ended: the subscription leaves its group, the keep-alive stops. */
  private release(): void {
    this.finished = true;
    clearInterval(this.keepAlive);
    const released = this.released;
    this.released = undefined;
    if (!released) return;
    released();
    this.source?.return(undefined).catch((error: unknown) => this.log.warn({ err: error }, 'GraphQL over SSE: a subscription did not end cleanly'));
  }
}

/** A refusal of the catalogue, as the formatter reads it. */
function domainError(code: ErrorCode, message: string): GraphQLError {
  return toGraphQLError(new DomainError(code, message));
}

/**
 * A refusal before any stream starts: the GraphQL error list through the one formatter, with the status of the first
 * error's code (the catalogue's; a document that does not parse or validate is a 400) and its Retry-After.
 */
function sendErrors(
  reply: FastifyReply,
  errors: readonly GraphQLError[],
  format: (error: GraphQLError) => GraphQLFormattedError,
  headers: Record<string, string> = {},
): FastifyReply {
  const formatted = errors.map(format);
  const code = formatted[0]?.extensions?.code;
  const status =
    typeof code === 'string' && code in errorCatalogue
      ? errorCatalogue[code as ErrorCode].status
      : code === 'GRAPHQL_PARSE_FAILED' || code === 'GRAPHQL_VALIDATION_FAILED'
        ? 400
        : 500;
  const data = errors[0] ? classifyError(errors[0]).data : {};
  return reply
    .code(status)
    .headers({ ...Object.fromEntries(limitHeaders(data)), ...headers })
    .type('application/json; charset=utf-8')
    .send({ errors: formatted });
}

/** Whether an Accept header admits an event stream: absent, or naming text/event-stream, text/* or *\/* (q above 0). */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((range) => {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const quality = parameters.find((parameter) => parameter.startsWith('q='));
    if (quality !== undefined && Number(quality.slice(2)) === 0) return false;
    return type === 'text/event-stream' || type === 'text/*' || type === '*/*';
  });
}

/**
 * The operation of a request as GraphQL over HTTP sends it: `query`, `operationName` and `variables` (JSON) in the
 * URL of a GET, or the JSON body of a POST. A DomainError (BAD_REQUEST) names what is wrong.
 */
function operationRequestOf(request: FastifyRequest): OperationRequest | DomainError {
  let fields: Record<string, unknown>;
  if (request.method === 'GET') {
    const search = request.query as Record<string, unknown>;
    for (const name of ['query', 'operationName', 'variables']) {
      if (Array.isArray(search[name])) return new DomainError('BAD_REQUEST', `\`${name}\` is given more than once`);
    }
    let variables: unknown = search.variables;
    if (typeof variables === 'string') {
      try {
        variables = JSON.parse(variables);
      } catch {
        return new DomainError('BAD_REQUEST', '`variables` is not JSON');
      }
    }
    fields = { query: search.query, operationName: search.operationName, variables };
  } else {
    const { body } = request;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return new DomainError('BAD_REQUEST', 'The body must be a JSON object with the operation in `query`');
    }
    fields = body as Record<string, unknown>;
  }
  const { query, operationName, variables } = fields;
  if (typeof query !== 'string' || query.trim() === '') return new DomainError('BAD_REQUEST', 'The operation is missing: send the GraphQL document in `query`');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    return new DomainError('BAD_REQUEST', '`operationName` must be a string');
  }
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) {
    return new DomainError('BAD_REQUEST', '`variables` must be an object');
  }
  return { query, operationName, variables: variables as Record<string, unknown> | null | undefined };
}
