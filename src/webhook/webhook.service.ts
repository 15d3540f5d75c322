import { requireOrganizationToken } from '../access/guards';
import type { SubscribedEventTypeName } from '../activity/activity.enums';
import { DomainError } from '../errors/domain-error';
import { announceOnCommit } from '../events/announce-on-commit';
import { Organization } from '../organization/organization.entity';
import type { RequestScope } from '../request-scope';
import { findPlainAndCount } from '../db/prepared-reads';
import { isId, newId } from '../shared/ids';
import type { Page } from '../shared/page';
import { sliceOf, type Slice, type SliceRequest } from '../shared/slice';
import { insertDeliveries } from './webhook.deliveries';
import { PING_EVENT_TYPE, WebhookDeliveryStatus } from './webhook.enums';
import { MAX_ENDPOINTS_PER_ORGANIZATION, newWebhookSecret, subscribedTypes, urlRefusal } from './webhook.rules';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import type { Clock } from '../shared/clock';
import type { EventBus } from '../events/event-bus';
import type { SecretBox } from '../shared/secret-box';
import type { Config } from '../config';
import type { PresentEvents } from '../activity/event-presentation';

export type WebhookServiceDeps = { clock: Clock; events: EventBus; secrets: SecretBox; presentEvents: PresentEvents; config: { webhooks: Pick<Config['webhooks'], 'allowPrivateTargets' | 'secretGraceMs'> } };

/**
 * An organization's webhook endpoints and their deliveries (docs/webhooks.md). Organization tokens only: an endpoint
 * receives every account's events, which an account token may not see.
 */

export interface EndpointInput {
  url?: string | null;
  eventTypes?: SubscribedEventTypeName[] | null;
  description?: string | null;
  enabled?: boolean | null;
}

/** A secret as shown once, with its endpoint. */
export interface EndpointWithSecret {
  secret: string;
  endpoint: WebhookEndpoint;
}

function checkUrl(scope: RequestScope<WebhookServiceDeps>, url: string): string {
  const refusal = urlRefusal(url, scope.runtime.config.webhooks.allowPrivateTargets);
  if (refusal) throw DomainError.badInput(refusal);
  return url;
}

function checkEventTypes(types: SubscribedEventTypeName[]): SubscribedEventTypeName[] {
  if (types.length === 0) throw DomainError.badInput('event_types must name at least one event type');
  return subscribedTypes(types);
}

async function findEndpoint(scope: RequestScope<WebhookServiceDeps>, id: string): Promise<WebhookEndpoint> {
  const principal = requireOrganizationToken(scope);
  const endpoint = isId(id) ? await scope.em.findOne(WebhookEndpoint, { id, organization: principal.organizationId }) : null;
  if (!endpoint) throw DomainError.notFound('Webhook endpoint');
  return endpoint;
}

export async function listEndpoints(scope: RequestScope<WebhookServiceDeps>, request: SliceRequest): Promise<Slice<WebhookEndpoint>> {
  const principal = requireOrganizationToken(scope);
  const where = { organization: principal.organizationId };
  const rows = await scope.em.find(WebhookEndpoint, { ...where, ...(request.afterId ? { id: { $gt: request.afterId } } : {}) }, { orderBy: { id: 'asc' }, limit: request.first + 1 });
  return sliceOf(rows, request.first, await scope.em.count(WebhookEndpoint, where));
}

/** The same list by page number (GET /webhooks), oldest first. */
export async function listEndpointsPage(scope: RequestScope<WebhookServiceDeps>, request: { page: number; perPage: number }): Promise<Page<'endpoints', WebhookEndpoint>> {
  const principal = requireOrganizationToken(scope);
  // The page and its count in one statement: counted apart, a change between the two made them disagree.
  const [endpoints, found] = await findPlainAndCount(
    scope.em,
    WebhookEndpoint,
    { organization: principal.organizationId },
    { orderBy: { id: 'asc' }, limit: request.perPage, offset: (request.page - 1) * request.perPage },
  );
  return { endpoints, found, page: request.page, perPage: request.perPage };
}

export function getEndpoint(scope: RequestScope<WebhookServiceDeps>, id: string): Promise<WebhookEndpoint> {
  return findEndpoint(scope, id);
}

export async function createEndpoint(scope: RequestScope<WebhookServiceDeps>, input: EndpointInput & { url: string; eventTypes: SubscribedEventTypeName[] }): Promise<EndpointWithSecret> {
  const principal = requireOrganizationToken(scope);
  const url = checkUrl(scope, input.url);
  const eventTypes = checkEventTypes(input.eventTypes);
  if ((await scope.em.count(WebhookEndpoint, { organization: principal.organizationId })) >= MAX_ENDPOINTS_PER_ORGANIZATION) {
    throw new DomainError('CONFLICT', `An organization has at most ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints`);
  }
  const secret = newWebhookSecret();
  const now = scope.runtime.clock.now();
  const endpoint = scope.em.create(WebhookEndpoint, {
    organization: scope.em.getReference(Organization, principal.organizationId),
    url,
    eventTypes,
    description: input.description ?? null,
    enabled: input.enabled ?? true,
    secret: scope.runtime.secrets.seal(secret),
    createdAt: now,
    updatedAt: now,
  });
  await scope.em.flush();
  return { secret, endpoint };
}

/** Changes what is given; enabling clears why it was disabled and its failing streak (it starts afresh). */
export async function updateEndpoint(scope: RequestScope<WebhookServiceDeps>, id: string, input: EndpointInput): Promise<WebhookEndpoint> {
  const endpoint = await findEndpoint(scope, id);
  if (input.url != null) endpoint.url = checkUrl(scope, input.url);
  if (input.eventTypes != null) endpoint.eventTypes = checkEventTypes(input.eventTypes);
  if (input.description !== undefined) endpoint.description = input.description;
  if (input.enabled != null && input.enabled !== endpoint.enabled) {
    endpoint.enabled = input.enabled;
    endpoint.disabledAt = input.enabled ? null : scope.runtime.clock.now();
    endpoint.disabledReason = null;
    endpoint.failingSince = null;
  }
  await scope.em.flush();
  return endpoint;
}

export async function deleteEndpoint(scope: RequestScope<WebhookServiceDeps>, id: string): Promise<{ id: string; deleted: boolean }> {
  const endpoint = await findEndpoint(scope, id);
  await scope.em.removeAndFlush(endpoint);
  return { id, deleted: true };
}

/** A new secret, shown once; the one it replaces still signs for WEBHOOK_SECRET_GRACE_HOURS (each request carries both). */
export async function rotateSecret(scope: RequestScope<WebhookServiceDeps>, id: string): Promise<EndpointWithSecret> {
  const endpoint = await findEndpoint(scope, id);
  const secret = newWebhookSecret();
  const { config, clock, secrets } = scope.runtime;
  endpoint.previousSecret = endpoint.secret;
  endpoint.previousSecretExpiresAt = new Date(clock.now().getTime() + config.webhooks.secretGraceMs);
  endpoint.secret = secrets.seal(secret);
  await scope.em.flush();
  return { secret, endpoint };
}

/** Queues a delivery and wakes the dispatcher once it is committed. */
async function queueDelivery(scope: RequestScope<WebhookServiceDeps>, delivery: Omit<Parameters<typeof insertDeliveries>[1][number], 'recordKey'>, endpoint: WebhookEndpoint): Promise<WebhookDelivery> {
  const now = scope.runtime.clock.now();
  const [id] = await scope.em.transactional(async (tx) => {
    // Its own key: outside the order of the record's live deliveries, sent as soon as a slot is free.
    const key = newId();
    const ids = await insertDeliveries(tx, [{ ...delivery, recordKey: key }], now);
    announceOnCommit(tx, scope.runtime.events, 'webhooks.pending', () => ({}));
    return ids;
  });
  return scope.em.findOneOrFail(WebhookDelivery, { id: id!, endpoint });
}

/**
 * Sends a `ping` event to the endpoint (even a disabled one: it tests the receiver), in the envelope of every event
 * (docs/webhooks.md): about no record, and naming the endpoint it tests.
 */
export async function pingEndpoint(scope: RequestScope<WebhookServiceDeps>, id: string): Promise<WebhookDelivery> {
  const endpoint = await findEndpoint(scope, id);
  const eventId = newId();
  const body = JSON.stringify({
    id: eventId,
    type: PING_EVENT_TYPE,
    occurred_at: scope.runtime.clock.now().getTime(),
    organization_id: endpoint.organization.id,
    account_id: null,
    record_type: null,
    record_id: null,
    sequence: null,
    record: null,
    endpoint_id: endpoint.id,
  });
  return queueDelivery(scope, { endpointId: endpoint.id, organizationId: endpoint.organization.id, eventId, eventType: PING_EVENT_TYPE, sequence: '0', body, redelivery: false }, endpoint);
}

/** Sends one event of the organization again, with its own id (receivers deduplicate by it), as GET /events lists it now. */
export async function redeliverEvent(scope: RequestScope<WebhookServiceDeps>, endpointId: string, eventId: string): Promise<WebhookDelivery> {
  const endpoint = await findEndpoint(scope, endpointId);
  const organizationId = endpoint.organization.id;
  const [event] = isId(eventId)
    ? await scope.em.getConnection().execute<{ id: string; type: string; sequence: string }[]>(
        'select id, type, sequence from activity_event where id = ? and organization_id = ?',
        [eventId, organizationId],
      )
    : [];
  const body = event && (await scope.runtime.presentEvents(scope.em, organizationId, [event.id])).get(event.id);
  // One GET /events no longer lists (past the retention) is not found either.
  if (!event || body === undefined) throw DomainError.notFound('Event');
  return queueDelivery(scope, { endpointId: endpoint.id, organizationId, eventId: event.id, eventType: event.type, sequence: String(event.sequence), body, redelivery: true }, endpoint);
}

export interface DeliveryFilter {
  endpointId: string;
  status?: WebhookDeliveryStatus | null;
  eventId?: string | null;
}

async function deliveryWhere(scope: RequestScope<WebhookServiceDeps>, filter: DeliveryFilter) {
  const endpoint = await findEndpoint(scope, filter.endpointId);
  if (filter.eventId != null && !isId(filter.eventId)) throw DomainError.badInput('event_id must be an event id');
  return { endpoint, ...(filter.status ? { status: filter.status } : {}), ...(filter.eventId ? { eventId: filter.eventId } : {}) };
}

/** The delivery log of an endpoint, newest first. */
export async function listDeliveries(scope: RequestScope<WebhookServiceDeps>, filter: DeliveryFilter, request: SliceRequest): Promise<Slice<WebhookDelivery>> {
  const where = await deliveryWhere(scope, filter);
  const rows = await scope.em.find(WebhookDelivery, { ...where, ...(request.afterId ? { id: { $lt: request.afterId } } : {}) }, { orderBy: { id: 'desc' }, limit: request.first + 1 });
  return sliceOf(rows, request.first, await scope.em.count(WebhookDelivery, where));
}

/** The same log by page number (GET /webhooks/:id/deliveries). */
export async function listDeliveriesPage(scope: RequestScope<WebhookServiceDeps>, filter: DeliveryFilter & { page: number; perPage: number }): Promise<Page<'deliveries', WebhookDelivery>> {
  const { endpoint, ...rest } = await deliveryWhere(scope, filter);
  // The page and its count in one statement: counted apart, a delivery ending between the two made a page whose
  // `found` was not its rows' count.
  const [deliveries, found] = await findPlainAndCount(scope.em, WebhookDelivery, { ...rest, endpoint: endpoint.id }, {
    orderBy: { id: 'desc' },
    limit: filter.perPage,
    offset: (filter.page - 1) * filter.perPage,
  });
  return { deliveries, found, page: filter.page, perPage: filter.perPage };
}

