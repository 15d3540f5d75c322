import { defineModule } from '../resource-module';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookDeliveryAttempt } from './webhook-delivery-attempt.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { WebhookOutbox } from './webhook-outbox.entity';
import { WebhookDispatcher } from './webhook.dispatcher';
import { deliverQueue } from './webhook.queues';
import { WebhookDeliveryAttemptResolver, WebhookDeliveryResolver, WebhookEndpointResolver } from './webhook.resolver';
import { webhookWorkers } from './webhook.worker';

/** Signed webhooks: endpoints, the outbox the activity log fills, the dispatcher and the deliveries (docs/webhooks.md). */
export const webhookModule = defineModule({
  name: 'webhook',
  entities: [WebhookEndpoint, WebhookDelivery, WebhookDeliveryAttempt, WebhookOutbox],
  resolvers: [WebhookEndpointResolver, WebhookDeliveryResolver, WebhookDeliveryAttemptResolver],
  queues: [deliverQueue],
  workers: webhookWorkers,
  services: async (runtime, log) => {
    const dispatcher = new WebhookDispatcher(runtime, log.child({ component: 'webhook-dispatcher' }));
    return [{ name: 'the webhook dispatcher', stop: () => dispatcher.stop() }];
  },
});
