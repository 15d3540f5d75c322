import {
  RestCreateWebhookEndpointDocument,
  RestDeleteWebhookEndpointDocument,
  RestPingWebhookEndpointDocument,
  RestRedeliverWebhookEventDocument,
  RestRotateWebhookSecretDocument,
  RestUpdateWebhookEndpointDocument,
  RestWebhookDeliveriesDocument,
  RestWebhookEndpointDocument,
  RestWebhookEndpointsDocument,
} from '../../generated/graphql';
import { body, bodyFields, defineRoute, path, query, type RestRecord } from '../route';

/**
 * Webhook endpoints and their delivery log (docs/webhooks.md, "REST"). Organization tokens only, as the GraphQL
 * operations they run: an endpoint receives every account's events. Our own records, so times are milliseconds
 * since the epoch as on every record of ours the document does not write otherwise (posts, events).
 */
const webhookRecord = { times: 'epochMs' } as const satisfies Omit<RestRecord, 'at'>;

const tag = 'Webhooks';
const id = path('id', 'the endpoint id');
/**
 * The body of create and update: the endpoint's fields under their REST names, event types as records write them
 * (`post.state_changed`, `*`; their GraphQL names are still taken: docs/webhooks.md).
 */
const endpointFields = bodyFields({ url: 'url', eventTypes: 'event_types', description: 'description', enabled: 'enabled' }, { enumsByValue: ['SubscribedEventType'] });
// Beyond ORGANIZATION_TOKEN_REQUIRED (organizationTokenOnly adds it): an endpoint of another organization, or none, is 404.
const endpointErrors = ['NOT_FOUND'] as const;

export const webhookRoutes = [
  defineRoute({
    method: 'GET',
    path: '/webhooks',
    operationId: 'listWebhookEndpoints',
    summary: 'The organization’s webhook endpoints, oldest first.',
    tag,
    organizationTokenOnly: true,
    operation: RestWebhookEndpointsDocument,
    variables: {
      page: query('page', '1-based, default 1'),
      perPage: query('per_page', '1 to 100, default 20'),
    },
    successStatus: 200,
    payload: { ...webhookRecord, at: 'webhookEndpointsPage' },
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks',
    operationId: 'createWebhookEndpoint',
    summary: 'Adds an endpoint; the answer holds its signing secret, shown this once (at most 20 per organization).',
    tag,
    organizationTokenOnly: true,
    operation: RestCreateWebhookEndpointDocument,
    variables: { input: endpointFields },
    successStatus: 201,
    payload: { ...webhookRecord, at: 'createWebhookEndpoint' },
    // 409: the organization has its 20 endpoints already.
    errors: ['CONFLICT'],
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/:id',
    operationId: 'getWebhookEndpoint',
    summary: 'One webhook endpoint (never its secret).',
    tag,
    organizationTokenOnly: true,
    operation: RestWebhookEndpointDocument,
    variables: { id },
    successStatus: 200,
    payload: { ...webhookRecord, at: 'webhookEndpoint' },
    errors: endpointErrors,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/webhooks/:id',
    operationId: 'updateWebhookEndpoint',
    summary: 'Changes an endpoint with only the fields that change; enabling a disabled one clears why it was disabled.',
    tag,
    organizationTokenOnly: true,
    operation: RestUpdateWebhookEndpointDocument,
    variables: { id, input: endpointFields },
    successStatus: 200,
    payload: { ...webhookRecord, at: 'updateWebhookEndpoint' },
    errors: endpointErrors,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/webhooks/:id',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Deletes an endpoint and its delivery log.',
    tag,
    organizationTokenOnly: true,
    operation: RestDeleteWebhookEndpointDocument,
    variables: { id },
    successStatus: 200,
    payload: { ...webhookRecord, at: 'deleteWebhookEndpoint' },
    errors: endpointErrors,
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks/:id/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'A new signing secret, shown this once; the old one also signs for WEBHOOK_SECRET_GRACE_HOURS (24).',
    tag,
    organizationTokenOnly: true,
    operation: RestRotateWebhookSecretDocument,
    variables: { id },
    successStatus: 200,
    payload: { ...webhookRecord, at: 'rotateWebhookSecret' },
    errors: endpointErrors,
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks/:id/ping',
    operationId: 'pingWebhookEndpoint',
    summary: 'Queues a `ping` event to the endpoint (a disabled one too); poll its deliveries for the outcome.',
    tag,
    organizationTokenOnly: true,
    operation: RestPingWebhookEndpointDocument,
    variables: { id },
    // Queued, sent by a job: the answer is the delivery as it starts (PENDING).
    successStatus: 202,
    payload: { ...webhookRecord, at: 'pingWebhookEndpoint' },
    errors: endpointErrors,
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'The endpoint’s delivery log, newest first: status, attempts, next attempt, the last answer.',
    tag,
    organizationTokenOnly: true,
    operation: RestWebhookDeliveriesDocument,
    variables: {
      endpointId: id,
      status: query('status', 'PENDING, SENDING, SUCCEEDED or FAILED'),
      eventId: query('event_id', 'only the deliveries of this event'),
      page: query('page', '1-based, default 1'),
      perPage: query('per_page', '1 to 100, default 20'),
    },
    successStatus: 200,
    payload: { ...webhookRecord, at: 'webhookDeliveriesPage' },
    errors: endpointErrors,
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks/:id/redeliver',
    operationId: 'redeliverWebhookEvent',
    summary: 'Queues one event of the organization to the endpoint again, with the same event id.',
    tag,
    organizationTokenOnly: true,
    operation: RestRedeliverWebhookEventDocument,
    variables: { endpointId: id, eventId: body('event_id', 'the activity event to send again (GET /events lists them)') },
    successStatus: 202,
    payload: { ...webhookRecord, at: 'redeliverWebhookEvent' },
    errors: endpointErrors,
  }),
];
