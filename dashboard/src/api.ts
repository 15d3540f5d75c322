import { createClient, type Client } from 'graphql-ws';
import {
  DashboardAccountDocument,
  DashboardCountsDocument,
  DashboardLocationDocument,
  DashboardProviderBudgetsDocument,
  DashboardProviderHealthDocument,
  DashboardRecordDocument,
  DashboardRedeliverDocument,
  DashboardWebhookDeliveriesDocument,
  DashboardRetryDocument,
  DashboardSignInDocument,
  DashboardSnapshotDocument,
  DashboardUpdatesDocument,
  DashboardWebhookHealthDocument,
  type DashboardProviderBudgetsQuery,
  type DashboardProviderHealthQuery,
  type DashboardRecordQuery,
  type DashboardWebhookDeliveriesQuery,
  type DashboardWebhookHealthQuery,
  type TypedDocumentString,
} from './generated/graphql';
import { CHECK_KINDS, isCheck, type WorkCount, type WorkFilter, type WorkItem } from './work';

/**
 * The service's GraphQL API as the dashboard uses it (docs/async-work.md; the operations are in operations.graphql):
 * over HTTP on this origin with the token as a bearer header, and over graphql-ws on the same path with the token in
 * connection_init, as any client.
 */

const ENDPOINT = '/graphql';
/** graphql-ws's close code for a token that is missing, unknown or revoked (src/graphql/websocket.ts). */
const FORBIDDEN_CLOSE_CODE = 4403;

/** A refusal or failure, with the API's error code when it gave one (`UNAUTHENTICATED`, `FORBIDDEN`, …). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }

  /** The token itself was refused (missing, unknown or revoked): the person must sign in again. */
  get tokenRefused(): boolean {
    return this.code === 'UNAUTHENTICATED';
  }
}

interface GraphQLAnswer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

export async function graphql<T, V>(token: string, document: TypedDocumentString<T, V>, variables: V): Promise<T> {
  let response: Response;
  try {
    response = await fetch(ENDPOINT, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: document.toString(), variables }),
    });
  } catch {
    throw new ApiError('The service cannot be reached', undefined);
  }
  let answer: GraphQLAnswer<T>;
  try {
    answer = (await response.json()) as GraphQLAnswer<T>;
  } catch {
    throw new ApiError(`The service answered ${response.status} without a GraphQL result`, undefined);
  }
  const first = answer.errors?.[0];
  if (first) throw new ApiError(first.message, first.extensions?.code);
  if (!answer.data) throw new ApiError(`The service answered ${response.status} without data`, undefined);
  return answer.data;
}

/**
 * Who the token belongs to: an organization (named, with its accounts, which the filters offer), or one account (its
 * tokens may not read the organization).
 */
export type Who = { kind: 'organization'; name: string; accounts: { id: string; name: string }[] } | { kind: 'account' };

export async function signIn(token: string): Promise<Who> {
  try {
    const data = await graphql(token, DashboardSignInDocument, {});
    return { kind: 'organization', name: data.organization.name, accounts: data.organization.accountsConnection.nodes };
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'ORGANIZATION_TOKEN_REQUIRED' || error.code === 'FORBIDDEN')) return { kind: 'account' };
    throw error;
  }
}

export interface Snapshot {
  latest: WorkItem[];
  checks: WorkItem[];
  failures: WorkItem[];
  counts: WorkCount[];
}

/** The latest work as `filter` chooses it, the polling checks apart, the failures and the counts. */
export async function readSnapshot(token: string, limits: { latest: number; checks: number }, filter: WorkFilter): Promise<Snapshot> {
  const checkKinds = filter.kind === null ? [...CHECK_KINDS] : isCheck(filter.kind) ? [filter.kind] : [];
  const data = await graphql(token, DashboardSnapshotDocument, {
    first: limits.latest,
    checksFirst: limits.checks,
    kinds: filter.kind === null ? null : [filter.kind],
    exclude: [...CHECK_KINDS],
    checkKinds,
    withChecks: checkKinds.length > 0,
    statuses: filter.status === null ? null : [filter.status],
    accountId: filter.accountId,
  });
  return {
    latest: data.latest.edges.map((edge) => edge.node),
    checks: data.checks?.edges.map((edge) => edge.node) ?? [],
    failures: data.failures.edges.map((edge) => edge.node),
    counts: data.asyncWorkCounts,
  };
}

export async function readCounts(token: string, accountId: string | null): Promise<WorkCount[]> {
  return (await graphql(token, DashboardCountsDocument, { accountId })).asyncWorkCounts;
}

export type RecordDetail = DashboardRecordQuery;

/** What a link says of the record it leads to: a location (of an account) or an account, read directly. */
export type RecordHint = { as: 'location'; accountId: string | null } | { as: 'account' };

export interface RecordRead {
  recordId: string;
  detail: RecordDetail;
  /** The record itself, read directly when a link said what it is (null when it could not be read). */
  direct: Record<string, unknown> | null;
}

/**
 * A record's work (each attempt), events and state; `id` may be a work's id, whose record is then read. A record
 * a link names is also read directly: a location or an account may have neither work nor events.
 */
export async function readRecord(token: string, id: string, hint: RecordHint | null): Promise<RecordRead> {
  const direct = async (): Promise<Record<string, unknown> | null> => {
    if (!hint) return null;
    try {
      return hint.as === 'location'
        ? (await graphql(token, DashboardLocationDocument, { id, accountId: hint.accountId })).location
        : (await graphql(token, DashboardAccountDocument, { id })).account;
    } catch (error) {
      // Out of reach or gone: the detail says what the work and the events say (a refused token is the page's).
      if (error instanceof ApiError && error.tokenRefused) throw error;
      return null;
    }
  };
  const [detail, record] = await Promise.all([graphql(token, DashboardRecordDocument, { id }), direct()]);
  if (detail.item && detail.item.subjectId !== id) {
    const recordId = detail.item.subjectId;
    return { recordId, detail: await graphql(token, DashboardRecordDocument, { id: recordId }), direct: null };
  }
  return { recordId: id, detail, direct: record };
}

export type WebhookDelivery = DashboardWebhookDeliveriesQuery['webhookDeliveries']['nodes'][number];

export async function readWebhookDeliveries(token: string, endpointId: string): Promise<{ deliveries: WebhookDelivery[]; total: number }> {
  const data = await graphql(token, DashboardWebhookDeliveriesDocument, { endpointId, first: 20 });
  return { deliveries: data.webhookDeliveries.nodes, total: data.webhookDeliveries.totalCount };
}

export async function redeliver(token: string, endpointId: string, eventId: string): Promise<void> {
  await graphql(token, DashboardRedeliverDocument, { endpointId, eventId });
}

export type ProviderHealth = DashboardProviderHealthQuery['providerHealth'][number];

export async function readProviderHealth(token: string): Promise<ProviderHealth[]> {
  return (await graphql(token, DashboardProviderHealthDocument, {})).providerHealth;
}

export type ProviderBudget = DashboardProviderBudgetsQuery['providerBudgets'][number];

export async function readProviderBudgets(token: string): Promise<ProviderBudget[]> {
  return (await graphql(token, DashboardProviderBudgetsDocument, {})).providerBudgets;
}

export type WebhookEndpointHealth = DashboardWebhookHealthQuery['webhookEndpoints']['nodes'][number];

export async function readWebhookHealth(token: string): Promise<WebhookEndpointHealth[]> {
  return (await graphql(token, DashboardWebhookHealthDocument, {})).webhookEndpoints.nodes;
}

export async function retryWork(token: string, id: string): Promise<WorkItem> {
  return (await graphql(token, DashboardRetryDocument, { id })).retryAsyncWork;
}

export type Connectivity = 'connecting' | 'live' | 'reconnecting';

export interface LiveHandlers {
  item(item: WorkItem): void;
  /** Each time the socket is (again) acknowledged: events may have been missed while it was not. */
  connected(): void;
  connectivity(state: Connectivity): void;
  /** The subscription itself was refused (an error of the API, not of the connection). */
  failed(error: ApiError): void;
  /** The server closed the socket because of the token. */
  tokenRefused(): void;
}

/** A subscription the API ended with an error is asked for again after this long. */
const RESUBSCRIBE_MS = 5_000;

/**
 * `asyncWorkUpdated` for as long as the returned function is not called. The socket is opened at once and kept
 * open (its state is the page's "live" light), reconnecting after a loss with graphql-ws's backoff, except when the
 * server refused the token. A subscription the API ends with an error is shown, and asked for again a while later.
 */
export function followWork(token: string, handlers: LiveHandlers): () => void {
  const url = new URL(ENDPOINT, window.location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const refused = (event: unknown) => typeof event === 'object' && event !== null && (event as { code?: unknown }).code === FORBIDDEN_CLOSE_CODE;
  let stopped = false;
  const client: Client = createClient({
    url: url.toString(),
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: false,
    retryAttempts: Infinity,
    shouldRetry: (event) => !refused(event),
    // The only error that ends the retries is the token's refusal, which `closed` reports.
    onNonLazyError: () => undefined,
    on: {
      connecting: (reconnecting) => handlers.connectivity(reconnecting ? 'reconnecting' : 'connecting'),
      connected: () => {
        handlers.connectivity('live');
        handlers.connected();
      },
      closed: (event) => {
        if (stopped) return;
        if (refused(event)) handlers.tokenRefused();
        else handlers.connectivity('reconnecting');
      },
    },
  });

  let unsubscribe = () => {};
  let again: ReturnType<typeof setTimeout> | undefined;
  const subscribe = () => {
    unsubscribe = client.subscribe<{ asyncWorkUpdated: WorkItem }>(
      { query: DashboardUpdatesDocument.toString() },
      {
        next: (result) => {
          const first = result.errors?.[0];
          if (first) handlers.failed(new ApiError(first.message, (first.extensions as { code?: string } | undefined)?.code));
          else if (result.data) handlers.item(result.data.asyncWorkUpdated);
        },
        error: (error) => {
          if (stopped || refused(error)) return;
          const list = Array.isArray(error) ? (error as { message: string; extensions?: { code?: string } }[]) : [];
          const message = list[0]?.message ?? (error instanceof Error ? error.message : 'The live updates stopped');
          handlers.failed(new ApiError(message, list[0]?.extensions?.code));
          again = setTimeout(subscribe, RESUBSCRIBE_MS);
        },
        complete: () => undefined,
      },
    );
  };
  subscribe();
  return () => {
    stopped = true;
    clearTimeout(again);
    unsubscribe();
    void client.dispose();
  };
}
