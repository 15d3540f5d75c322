import { STATUS_CODES } from 'node:http';
import { PassThrough } from 'node:stream';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, OperationTypeNode, type ExecutionResult, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { createHandler, type Request as SseRequest, type ResponseInit } from 'graphql-sse';
import { isDependencyUnavailable } from '../errors/dependency-unavailable';
import { DomainError, errorCatalogue, errorCodeForStatus, type ErrorCode } from '../errors/domain-error';
import { limitHeaders } from '../http/limit-headers';
import { errorCodeLabel, type Metrics } from '../observability/metrics';
import type { Context } from './context';
import type { TrustedDocuments } from './trusted-documents';
import { toGraphQLError } from './errors';
import { classifyError, formatGraphQLError } from './format-error';
import { checkOperation, documentChecker, internalError, rootFieldOf, subscriptionGroupKey, unauthenticatedError } from './operation-checks';
import { StreamSubscription } from './sse-subscription';
import { SubscriptionGroups } from './subscription-groups';
import fp from 'fastify-plugin';
import type { EventBus } from '../events/event-bus';

/** What GraphQL over Server-Sent Events uses: the schema, the one context factory, and where revocations arrive. */
export interface SseDependencies {
  schema: GraphQLSchema;
  /** The one context factory (src/context.ts), per request, with the request's logger. */
  createContext(authorization: unknown, log: FastifyBaseLogger): Promise<Context>;
  runtime: { events: EventBus; metrics: Metrics | undefined };
  /** Trusted documents only, when set: an operation must be one of the manifests' (src/graphql/trusted-documents.ts). */
  trusted?: TrustedDocuments;
  /** Production hides graphql-js's "Did you mean" hints (they name schema fields). */
  hideSuggestions: boolean;
}

/** Where subscriptions are served over Server-Sent Events (graphql-sse's distinct connections mode). */
export const SSE_PATH = '/graphql/stream';

/**
 * How often graphql-sse's handler sends a comment line on an open stream (its fixed interval, after one at once):
 * proxies and load balancers close a response that stays silent (nginx and AWS after 60 s, Google's after 30 s).
 */
export const SSE_KEEP_ALIVE_MS = 12_000;

/** Seconds a client is told to wait when its stream was being set up while the server stopped. */
const RETRY_AFTER_STOPPING_SECONDS = 5;

/** Over graphql-sse's own: never transformed (compressing proxies buffer), never buffered by nginx. */
const STREAM_HEADERS = { 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' };

/** What graphql-sse's hooks of one request share (its request context). */
interface StreamRequest {
  readonly started: number;
  readonly format: (error: GraphQLError) => GraphQLFormattedError;
  /** The caller's context, once authenticate made it. */
  graphqlContext?: Context;
  /** A hook's refusal, answered by sendErrors: its status, headers and logging come from the errors themselves. */
  refusal?: readonly GraphQLError[];
}

type Request = SseRequest<FastifyRequest, StreamRequest>;

/**
 * Subscriptions over Server-Sent Events (docs/events.md), beside graphql-ws: graphql-sse's own handler, distinct
 * connections mode, with graphql-ws's rules (websocket.ts) in its hooks. onSubscribe subscribes itself rather than
 * leaving it to graphql-sse's `subscribe`: graphql-js's refusal, or a revocation during the set-up, must still be
 * answered as JSON before any stream starts, and only a hook's response can do that.
 */
function registerGraphQLOverSse(app: FastifyInstance, dependencies: SseDependencies): void {
  const { schema, runtime, hideSuggestions } = dependencies;
  const { metrics } = runtime;
  const checkDocument = documentChecker(schema);
  // Identical subscriptions of one visibility share one execution per event.
  const groups = new SubscriptionGroups();
  // Subscriptions by token, so a revocation (in any process) ends them; open responses, so a stop ends them.
  const subscriptionsByToken = new Map<string, Set<StreamSubscription>>();
  const openStreams = new Set<() => void>();
  let stopping = false;

  const stopWatchingRevocations = runtime.events.subscribe('token.revoked', ({ tokenId }) => {
    for (const subscription of subscriptionsByToken.get(tokenId) ?? []) subscription.revoke();
  });
  // Before the server waits for requests in flight: an open stream would hold the stop for as long as its client.
  app.addHook('preClose', async () => {
    stopping = true;
    stopWatchingRevocations();
    for (const end of [...openStreams]) end();
  });

  const track = (subscription: StreamSubscription, tokenId: string) => {
    let ofToken = subscriptionsByToken.get(tokenId);
    if (!ofToken) subscriptionsByToken.set(tokenId, (ofToken = new Set()));
    ofToken.add(subscription);
    return () => {
      ofToken.delete(subscription);
      if (ofToken.size === 0 && subscriptionsByToken.get(tokenId) === ofToken) subscriptionsByToken.delete(tokenId);
    };
  };

  const handle = createHandler<FastifyRequest, StreamRequest>({
    // `null`: no single connection mode (its PUT reservations are not served), every stream is its own request.
    authenticate: async (req) => {
      try {
        req.context.graphqlContext = await dependencies.createContext(req.raw.headers.authorization, req.raw.log);
      } catch (error) {
        // A dependency that is down answers 503 with Retry-After (the formatter logs it as a warning); else a masked 500.
        return refuse(req, [internalError(error)]);
      }
      return req.context.graphqlContext.principal ? null : refuse(req, [unauthenticatedError()]);
    },
    // The request's shape, in our messages: graphql-sse's parser, which runs next, would refuse it in its own.
    onConnect: (req) => {
      const problem = requestProblem(req.raw);
      return problem ? refuse(req, [toGraphQLError(problem)]) : undefined;
    },
    onSubscribe: async (req, params) => {
      const { started, graphqlContext: context } = req.context;
      // authenticate made both, or refused.
      const principal = context!.principal!;
      const count = (type: string, errors?: readonly GraphQLError[], name?: string) =>
        metrics?.countOperation({ name: params.operationName ?? name, type, transport: 'sse', errorCode: errorCodeLabel(errors?.[0]), started });

      const checked = checkOperation(schema, checkDocument, params, dependencies.trusted);
      if (Array.isArray(checked)) {
        count('unknown', checked);
        return refuse(req, checked);
      }
      const { document, operation } = checked;
      const name = operation.name?.value;
      if (operation.operation !== OperationTypeNode.SUBSCRIPTION) {
        const errors = [domainError('BAD_REQUEST', `${SSE_PATH} serves subscriptions only: send queries and mutations to /graphql`)];
        count(operation.operation, errors, name);
        return refuse(req, errors);
      }
      const subscription = new StreamSubscription();
      const untrack = track(subscription, principal.tokenId);
      let member: AsyncGenerator<ExecutionResult> | ExecutionResult;
      try {
        member = await groups.subscribe(subscriptionGroupKey(params, principal), {
          schema,
          document,
          operationName: params.operationName,
          variableValues: params.variables,
          contextValue: context,
        });
      } catch (error) {
        untrack();
        count(operation.operation, [internalError(error)], name);
        return refuse(req, [internalError(error)]);
      }
      if (!(Symbol.asyncIterator in member)) {
        // graphql-js refused the subscription itself (its source stream could not be made): answered, never streamed.
        untrack();
        const errors = member.errors ?? [internalError(new Error('A subscription without a source stream nor errors'))];
        count(operation.operation, errors, name);
        return refuse(req, errors);
      }
      count(operation.operation, undefined, name);
      if (subscription.revoked) {
        untrack();
        void member.return(undefined);
        return refuse(req, [unauthenticatedError()]);
      }
      const field = rootFieldOf(operation);
      metrics?.subscriptions.inc({ field });
      subscription.start(member, () => {
        untrack();
        metrics?.subscriptions.dec({ field });
      });
      return subscription;
    },
    // graphql-sse types errors as GraphQLError but only serializes them: the formatted ones are what clients read.
    onNext: (_ctx, req, result) =>
      result.errors ? ({ ...result, errors: result.errors.map(req.context.format) } as unknown as ExecutionResult) : undefined,
  });

  /**
   * graphql-sse's handler on Fastify. Not its Fastify adapter: that one writes to the raw response (no onResponse
   * hooks, so no request metrics), streams only for an exact `Accept: text/event-stream`, and its headers win over ours.
   */
  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const started = performance.now();
    const format = (error: GraphQLError) => formatGraphQLError(error, { log: request.log, hideSuggestions });
    if (!acceptsEventStream(request.headers.accept)) {
      return sendErrors(reply, [domainError('NOT_ACCEPTABLE', `${SSE_PATH} answers text/event-stream only (send Accept: text/event-stream); other operations are served at /graphql`)], format);
    }
    const req: Request = {
      method: request.method,
      url: request.url,
      headers: { get: (key) => headerFor(request, key) },
      body: () => (isRecord(request.body) ? request.body : null),
      raw: request,
      context: { started, format },
    };
    const [body, init] = await handle(req);
    if (req.context.refusal) return sendErrors(reply, req.context.refusal, format);
    if (body === null || typeof body === 'string') {
      // graphql-sse's own refusal (what onConnect does not check, `extensions` say), in our error list.
      return sendErrors(reply, [domainError(errorCodeForStatus(init.status), messageOf(body) ?? init.statusText)], format);
    }
    if (stopping) {
      // Stopped while it was being set up: refused as it would be now.
      void body.return();
      return sendErrors(reply, [domainError('SERVICE_UNAVAILABLE', 'The server is stopping; retry shortly')], format, {
        connection: 'close',
        ...Object.fromEntries(limitHeaders({ retryAfterSeconds: RETRY_AFTER_STOPPING_SECONDS })),
      });
    }
    return sendStream(reply, body, init);
  };

  /** graphql-sse's messages, as they come, in a response of Fastify's; `end` ends it without `complete` (a stop). */
  const sendStream = (reply: FastifyReply, messages: AsyncGenerator<string, void, undefined>, init: ResponseInit): FastifyReply => {
    const out = new PassThrough();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      openStreams.delete(end);
      if (!out.destroyed && !out.writableEnded) out.end();
      // graphql-sse then returns the subscription: it leaves its group, the keep-alive stops.
      void messages.return();
    };
    openStreams.add(end);
    // The client went away (Fastify destroys the body then), or the body ended and was sent.
    out.once('close', end);
    void reply.code(init.status).headers({ ...init.headers, ...STREAM_HEADERS }).send(out);
    void (async () => {
      try {
        for await (const message of messages) {
          if (ended) break;
          out.write(message);
        }
      } catch (error) {
        reply.log.error({ err: error }, 'GraphQL over SSE: a stream failed');
      }
      end();
    })();
    return reply;
  };

  app.route({
    method: ['GET', 'POST'],
    url: SSE_PATH,
    // A HEAD of an endless stream would never end.
    exposeHeadRoute: false,
    handler: serve,
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

/**
 * A hook's refusal. graphql-sse hands a hook's response back untouched and goes no further; `serve` answers the
 * errors noted here through sendErrors, whose status and headers follow the first error's code.
 */
function refuse(req: Request, errors: readonly GraphQLError[]): [null, { status: number; statusText: string }] {
  req.context.refusal = errors;
  return [null, { status: 400, statusText: STATUS_CODES[400]! }];
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

/** The message of graphql-sse's own refusal (`{"errors": [{"message": …}]}`), when it has one. */
function messageOf(body: string | null): string | undefined {
  try {
    const message: unknown = (JSON.parse(body ?? '') as { errors?: { message?: unknown }[] }).errors?.[0]?.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
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
 * A request header as graphql-sse reads it. Accept was negotiated already (graphql-sse streams only for exactly
 * `text/event-stream`); a media type is case-insensitive, graphql-sse looks for `application/json` as written.
 */
function headerFor(request: FastifyRequest, key: string): string | undefined {
  if (key === 'accept') return 'text/event-stream';
  const value = request.headers[key];
  const text = Array.isArray(value) ? value.join(', ') : value;
  return key === 'content-type' ? text?.toLowerCase() : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What is wrong with the operation of a request as GraphQL over HTTP sends it, if anything: `query`,
 * `operationName` and `variables` (JSON) in the URL of a GET, or the JSON body of a POST.
 */
function requestProblem(request: FastifyRequest): DomainError | undefined {
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
    if (!isRecord(request.body)) return new DomainError('BAD_REQUEST', 'The body must be a JSON object with the operation in `query`');
    fields = request.body;
  }
  const { query, operationName, variables } = fields;
  if (typeof query !== 'string' || query.trim() === '') return new DomainError('BAD_REQUEST', 'The operation is missing: send the GraphQL document in `query`');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    return new DomainError('BAD_REQUEST', '`operationName` must be a string');
  }
  if (variables !== undefined && variables !== null && !isRecord(variables)) {
    return new DomainError('BAD_REQUEST', '`variables` must be an object');
  }
  return undefined;
}

export const graphqlSsePlugin = fp<SseDependencies>(async (app, dependencies) => registerGraphQLOverSse(app, dependencies), {
  name: 'graphql-sse',
  dependencies: ['http-edge'],
});
