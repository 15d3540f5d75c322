import type { FastifyBaseLogger } from 'fastify';
import { getOperationAST, GraphQLError, OperationTypeNode, subscribe, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { CloseCode, type Context as WsContext, type SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Server } from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';
import type { Principal } from '../access/principal';
import type { EventBus } from '../events/event-bus';
import { errorCodeLabel, type Metrics } from '../observability/metrics';
import type { Context } from './context';
import { isDependencyUnavailable, UNAVAILABLE_MESSAGE } from '../errors/dependency-unavailable';
import { INTERNAL_ERROR_MESSAGE } from '../errors/domain-error';
import { formatGraphQLError } from './format-error';
import { checkOperation, documentChecker, internalError, rootFieldOf, subscriptionGroupKey, unauthenticatedError } from './operation-checks';
import { oncePerResult, SubscriptionGroups, type Delivery } from './subscription-groups';
import type { TrustedDocuments } from './trusted-documents';
import fp from 'fastify-plugin';

export interface WebSocketDependencies {
  schema: GraphQLSchema;
  /** Trusted documents only, when set: an operation must be one of the manifests' (src/graphql/trusted-documents.ts). */
  trusted?: TrustedDocuments;
  /** Who a connection_init's token belongs to (null: refused). */
  authenticate(authorization: unknown): Promise<Principal | null>;
  /** The one context factory, for each operation of a socket. */
  createContext(authorization: unknown): Promise<Context>;
  /** Where token revocations arrive from, in every process. */
  events: EventBus;
  log: FastifyBaseLogger;
  /** Production hides graphql-js's "Did you mean" hints (they name schema fields). */
  hideSuggestions: boolean;
  /** Sockets, subscriptions and operations are counted here when set. */
  metrics?: Metrics;
}

/** WebSocket close code 1013 (RFC 6455 registry: Try Again Later): a dependency is down for a moment. */
const TRY_AGAIN_LATER = 1013;

/** ws's send options of a `next` frame built as bytes: a text frame (bytes are sent as binary by default). */
const TEXT_FRAME = { binary: false } as const;
const CLOSING_BRACE = 0x7d;

/** How often every socket is pinged, and how long it has to answer: graphql-ws's default keep-alive. */
const KEEP_ALIVE_MS = 12_000;

/**
 * graphql-ws's keep-alive (a ping every 12 s; a socket that has not answered by the next one is terminated, so a
 * dead peer is let go within 24 s), one timer for every socket: graphql-ws gives each socket an interval and, at
 * each ping, a timeout and a listener, so 1,000 idle sockets woke the process 160 times a second.
 */
function keepAlive(wss: WebSocketServer): () => void {
  const awaitingPong = new WeakSet<WebSocket>();
  // One listener function for every socket (`this` is the socket): nothing is allocated per socket.
  function answered(this: WebSocket) {
    awaitingPong.delete(this);
  }
  wss.on('connection', (socket) => socket.on('pong', answered));
  const timer = setInterval(() => {
    for (const socket of wss.clients) {
      if (socket.readyState !== WebSocket.OPEN) continue;
      if (awaitingPong.has(socket)) {
        socket.terminate();
        continue;
      }
      awaitingPong.add(socket);
      socket.ping();
    }
  }, KEEP_ALIVE_MS);
  // Pings do not keep a process alive that has nothing else to do.
  timer.unref();
  return () => clearInterval(timer);
}

/** The largest message a socket accepts: Fastify's default HTTP body limit, so neither transport takes more. */
export const MAX_WS_MESSAGE_BYTES = 1024 * 1024;

/**
 * The `next` frames of a group's events. A socket's frame is graphql-ws's exact `next` message, `{"id":…,"type":
 * "next","payload":` + the event's payload bytes + `}`, and the sockets of a group differ only by that prefix (their
 * ids). So one frame is kept with the payload in place, and each socket's prefix is written over the last one's
 * before it is sent: no buffer and no payload copy per socket. ws hands a frame to the kernel at once when its socket
 * has nothing queued, and `bufferedAmount` is then 0 (ws documents it so): the buffer is free for the next socket. A
 * socket that queued it keeps it, and the next socket gets a new one.
 */
class NextFrames {
  private frame: Buffer | undefined;
  /** What `frame` holds: the payload of this result, after a prefix of this many bytes. */
  private result: ExecutionResult | undefined;
  private prefixBytes = 0;

  constructor(
    private readonly payloadOf: (result: ExecutionResult) => Buffer,
    private readonly written: (error?: Error) => void,
  ) {}

  /** Sends `result`'s `next` message, `prefix` (of `prefixBytes` bytes in UTF-8) first, to an open socket. */
  send(socket: WebSocket, prefix: string, prefixBytes: number, result: ExecutionResult): void {
    let frame = this.frame;
    // Taken while it is being sent: should the send throw, no later socket shares a frame in an unknown state.
    this.frame = undefined;
    if (frame === undefined || this.result !== result || this.prefixBytes !== prefixBytes) {
      const payload = this.payloadOf(result);
      frame = Buffer.allocUnsafe(prefixBytes + payload.length + 1);
      payload.copy(frame, prefixBytes);
      frame[frame.length - 1] = CLOSING_BRACE;
      this.result = result;
      this.prefixBytes = prefixBytes;
    }
    frame.write(prefix, 0, 'utf8');
    socket.send(frame, TEXT_FRAME, this.written);
    if (socket.bufferedAmount === 0) this.frame = frame;
  }
}

/**
 * graphql-ws on the same path and port as HTTP, authenticated as docs/graphql-limits.md, "graphql-ws
 * authentication" says. Each operation goes through the same parse limits, validation rules and error formatter as
 * over HTTP (graphql-ws's own validation would skip them).
 */
function attachGraphQLWebSocket(server: Server, deps: WebSocketDependencies): { close(): Promise<void> } {
  const wss = new WebSocketServer({ server, path: '/graphql', maxPayload: MAX_WS_MESSAGE_BYTES });
  // The same factory for GraphQL over SSE on this server (src/graphql/sse.ts).
  const { metrics } = deps;
  // Running subscriptions by socket and id, with their root field: counted while they run.
  const runningSubscriptions = new WeakMap<WsContext, Map<string, string>>();
  const subscriptionEnded = (ctx: WsContext, id: string) => {
    const field = runningSubscriptions.get(ctx)?.get(id);
    if (field === undefined) return;
    runningSubscriptions.get(ctx)!.delete(id);
    metrics?.subscriptions.dec({ field });
  };
  if (metrics) {
    wss.on('connection', (socket) => {
      metrics.websocketSockets.inc();
      socket.once('close', () => metrics.websocketSockets.dec());
    });
  }
  const authorizations = new WeakMap<WsContext, unknown>();
  // Sockets per token, so a revocation (in any process) ends the subscriptions running on it at once.
  const socketsByToken = new Map<string, Set<WebSocket>>();
  const stopWatchingRevocations = deps.events.subscribe('token.revoked', ({ tokenId }) => {
    for (const socket of socketsByToken.get(tokenId) ?? []) socket.close(CloseCode.Forbidden, 'Forbidden');
  });
  const format = (error: GraphQLError) => formatGraphQLError(error, { log: deps.log, hideSuggestions: deps.hideSuggestions });
  const socketOf = (ctx: WsContext) => (ctx.extra as { socket: WebSocket }).socket;
  // Identical subscriptions of one visibility share one execution per event.
  const groups = new SubscriptionGroups();
  // Per operation's context: its group, and how its results reach its socket.
  const groupings = new WeakMap<object, { key: string; deliver: Delivery }>();
  /**
   * The `next` payload of a group's result, serialized once per event for every socket of the group: what
   * graphql-ws would send (errors through the one formatter, as onNext does; `errors` absent when there are none).
   */
  const nextPayload = oncePerResult((result) =>
    Buffer.from(JSON.stringify(result.errors ? { ...result, errors: result.errors.map(format) } : result)),
  );
  // A write fails only when the socket is gone (ws then closes it, and the close ends its subscriptions): the
  // client's doing, noted at debug level.
  const written = (error?: Error) => {
    if (error) deps.log.debug({ err: error }, 'graphql-ws: a next message was not written, the socket is gone');
  };
  const nextFrames = new NextFrames(nextPayload, written);
  /**
   * The write path of a grouped subscription, instead of graphql-ws's per-socket JSON.stringify of the whole
   * message (each socket has its own subscription id): graphql-ws's exact `next` message (NextFrames). Written at
   * once, in the group's order; like graphql-ws's own send, nothing to a socket that is closing. graphql-ws still
   * sends `complete` and `error` (the member's generator ends or fails after its last result was written).
   */
  const deliveryTo = (socket: WebSocket, id: string): Delivery => {
    // A string, not bytes: it is kept for the subscription's life, and a small Buffer costs more (memory per idle
    // subscription); writing it into each frame costs little.
    const prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
    const prefixBytes = Buffer.byteLength(prefix);
    return (result) => {
      if (socket.readyState === WebSocket.OPEN) nextFrames.send(socket, prefix, prefixBytes, result);
    };
  };
  // Dashboards send the same few documents: each is parsed and validated once, and its AST shared.
  const checkDocument = documentChecker(deps.schema);

  /** An operation of a socket checked and given its context: graphql-ws's execution arguments, or the errors that refuse it. */
  const setUp = async (ctx: WsContext, id: string, payload: SubscribePayload): Promise<ExecutionArgs | GraphQLError[]> => {
    // Refused before it starts (parse, validation, variables), as over HTTP (a 400): an `error` message, never a result.
    const checked = checkOperation(deps.schema, checkDocument, payload, deps.trusted);
    if (Array.isArray(checked)) return checked;
    let contextValue;
    try {
      contextValue = await deps.createContext(authorizations.get(ctx));
    } catch (error) {
      // Reported through the formatter, which masks and logs it; the socket stays usable.
      return [internalError(error)];
    }
    if (!contextValue.principal) {
      socketOf(ctx).close(CloseCode.Forbidden, 'Forbidden');
      return [unauthenticatedError()];
    }
    if (checked.operation.operation === OperationTypeNode.SUBSCRIPTION) {
      groupings.set(contextValue, { key: subscriptionGroupKey(payload, contextValue.principal), deliver: deliveryTo(socketOf(ctx), id) });
    }
    return {
      schema: deps.schema,
      document: checked.document,
      operationName: payload.operationName,
      variableValues: payload.variables,
      contextValue,
    };
  };

  const cleanup = useServer(
    {
      schema: deps.schema,
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const authorization = params.authorization ?? params.Authorization;
        try {
          const principal = await deps.authenticate(authorization);
          if (!principal) return false;
          const socket = socketOf(ctx);
          // graphql-ws keeps the upgrade request (headers and all) in ctx.extra for the socket's life; nothing
          // reads it after this point, so it is let go (memory per idle subscription: bench/fanout).
          delete (ctx.extra as { request?: unknown }).request;
          let sockets = socketsByToken.get(principal.tokenId);
          if (!sockets) socketsByToken.set(principal.tokenId, (sockets = new Set()));
          sockets.add(socket);
          socket.once('close', () => {
            sockets.delete(socket);
            if (sockets.size === 0) socketsByToken.delete(principal.tokenId);
          });
        } catch (error) {
          // Not a bad token. The 4403 that graphql-ws then sends for `false` is ignored by a socket already closing.
          if (isDependencyUnavailable(error)) {
            // The database is away for a moment (HTTP answers 503): 1013 Try Again Later, which graphql-ws clients
            // retry, where they give up for good on 4500.
            deps.log.warn({ err: error }, 'graphql-ws connection_init: a dependency is unavailable');
            socketOf(ctx).close(TRY_AGAIN_LATER, UNAVAILABLE_MESSAGE);
            return false;
          }
          // A failure of ours: 4500, with a reason that names nothing internal.
          deps.log.error({ err: error }, 'graphql-ws connection_init failed');
          socketOf(ctx).close(CloseCode.InternalServerError, INTERNAL_ERROR_MESSAGE);
          return false;
        }
        authorizations.set(ctx, authorization);
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        const started = performance.now();
        const answer = await setUp(ctx, id, payload);
        if (metrics) {
          const operation = Array.isArray(answer) ? undefined : getOperationAST(answer.document, answer.operationName);
          const errorCode = errorCodeLabel(Array.isArray(answer) ? answer[0] : undefined);
          metrics.countOperation({ name: payload.operationName ?? operation?.name?.value, type: operation?.operation ?? 'unknown', transport: 'websocket', errorCode, started });
          if (operation && operation.operation === OperationTypeNode.SUBSCRIPTION) {
            const field = rootFieldOf(operation);
            let running = runningSubscriptions.get(ctx);
            if (!running) {
              runningSubscriptions.set(ctx, (running = new Map<string, string>()));
              socketOf(ctx).once('close', () => [...running!.keys()].forEach((runningId) => subscriptionEnded(ctx, runningId)));
            }
            running.set(id, field);
            metrics.subscriptions.inc({ field });
          }
        }
        return answer;
      },
      onComplete: (ctx, id) => subscriptionEnded(ctx, id),
      subscribe: (args) => {
        const grouping = args.contextValue ? groupings.get(args.contextValue) : undefined;
        return grouping === undefined ? subscribe(args) : groups.subscribe(grouping.key, args, grouping.deliver);
      },
      onError: (_ctx, _id, _payload, errors) => errors.map(format),
      // Results of queries and mutations (grouped subscriptions are written by deliveryTo, through nextPayload).
      onNext: (_ctx, _id, _payload, _args, result: ExecutionResult) =>
        result.errors ? { ...result, errors: result.errors.map(format) } : undefined,
      // Close reasons of unexpected failures would carry the error's message otherwise: never, in any mode.
      isProd: true,
    },
    wss,
    // graphql-ws's own keep-alive would run two timers per socket; keepAlive() below does it for all at once.
    0,
  );
  const stopKeepingAlive = keepAlive(wss);

  return {
    close: async () => {
      stopWatchingRevocations();
      stopKeepingAlive();
      await cleanup.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** graphql-ws on the server's own port; its sockets are told 1001 "going away" before the server waits for requests. */
export const graphqlWebSocketPlugin = fp<WebSocketDependencies>(
  async (app, deps) => {
    const ws = attachGraphQLWebSocket(app.server, deps);
    app.addHook('preClose', () => ws.close());
  },
  { name: 'graphql-ws', dependencies: ['http-edge'] },
);
