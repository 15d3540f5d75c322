import { randomBytes } from 'node:crypto';
import { urlProblem, URL_MAX } from '../shared/url-rule';
import { ALL_EVENT_TYPES, type EventTypeName, type SubscribedEventTypeName } from '../activity/activity.enums';

/** The pure rules of webhooks (docs/webhooks.md): secrets, the retry schedule, which addresses may be called. */

/** A new signing secret: 32 random bytes, prefixed so it is recognisable in a client's configuration. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** A delivery is retried for a day from its creation; an endpoint failing for a day is disabled. */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
const FIRST_RETRY_MS = 30_000;
const LONGEST_RETRY_MS = 60 * 60 * 1000;

/**
 * The wait after the `attempt`-th failed attempt (1-based): 30 s doubling up to an hour, of which a random half is
 * taken off ("equal jitter"), so receivers coming back are not hit by every sender at once. `random` is in [0, 1).
 */
export function retryDelayMs(attempt: number, random: number): number {
  const ceiling = Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random * ceiling) / 2);
}

/**
 * When a delivery created at `createdAt` is tried next after its `attempts`-th attempt failed at `now`, or null when it
 * is given up (FAILED): a failure a day or more after its creation ends it; until then the schedule above.
 */
export function nextAttemptAfterFailure(createdAt: Date, now: Date, attempts: number, random: number): Date | null {
  if (now.getTime() - createdAt.getTime() >= RETRY_WINDOW_MS) return null;
  return new Date(now.getTime() + retryDelayMs(attempts, random));
}

/** Whether an endpoint subscribed to `subscribed` is sent events of `type`: it names the type, or every type (`*`). */
export function endpointWants(subscribed: readonly SubscribedEventTypeName[], type: EventTypeName): boolean {
  return subscribed.includes(type) || subscribed.includes(ALL_EVENT_TYPES);
}

/** The types an endpoint keeps: each once, in the order given; `*` alone when it is among them (it holds the others). */
export function subscribedTypes(types: readonly SubscribedEventTypeName[]): SubscribedEventTypeName[] {
  return types.includes(ALL_EVENT_TYPES) ? [ALL_EVENT_TYPES] : [...new Set(types)];
}

export const MAX_ENDPOINTS_PER_ORGANIZATION = 20;
export const MAX_URL_CHARACTERS = URL_MAX;
/** The first bytes of an answer kept in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 1024;

export { isForbiddenAddress } from '../shared/url-rule';

/**
 * Why `text` cannot be an endpoint's URL, or undefined when it can: the URL rule (src/shared/url-rule.ts) with https
 * and a public host, both waived when private targets are allowed. Names are resolved and checked again at every
 * send (src/webhook/webhook-sender.ts).
 */
export function urlRefusal(text: string, allowPrivateTargets: boolean): string | undefined {
  const problem = urlProblem(text, { httpsOnly: !allowPrivateTargets, publicHostOnly: !allowPrivateTargets });
  return problem && `url ${problem}`;
}
