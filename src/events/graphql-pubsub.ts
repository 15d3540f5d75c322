import { setMaxListeners } from 'node:events';
import { createPubSub } from '@graphql-yoga/subscription';
import type { EventBus } from './event-bus';
import { TOPICS, type TopicPayloads } from './topics';

/**
 * The in-process pub/sub GraphQL subscriptions read from. The schema is built once per process, before the
 * event bus exists, so it holds this object; `bridgeEventsToSubscriptions` feeds it from the bus.
 */
const target = new EventTarget();
// One listener per subscriber is the design, not a leak: thousands of dashboards may subscribe.
setMaxListeners(0, target);
export const subscriptionPubSub = createPubSub<{ [K in keyof TopicPayloads]: [TopicPayloads[K]] }>({ eventTarget: target });

export function bridgeEventsToSubscriptions(events: EventBus): () => void {
  const unsubscribers = TOPICS.map((topic) => events.subscribe(topic, (payload) => subscriptionPubSub.publish(topic, payload as never)));
  return () => unsubscribers.forEach((unsubscribe) => unsubscribe());
}
