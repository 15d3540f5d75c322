import type { AlphaSandboxControl } from './alpha-sandbox.control';
import type { AlphaSandboxReviewInput } from './alpha-sandbox.reviews';

/**
 * What the demo needs of the alpha sandbox that a server mounts in development (dev/provider-sandboxes.ts): reviews
 * whose replies are still moderated and were rejected, and a refusal the demo's content can ask for. All of it through the controls, as any script would.
 */

/**
 * Two reviews of Alice's Mitte bakery whose replies are still being moderated and were rejected, so the demo
 * organization (which imports Alice's account) shows every reply state at once. Fixed ids, so a later start finds
 * them there and adds nothing.
 */
const DEMO_LOCATION = 'accounts/1001/locations/10012';
const DEMO_REVIEWS: AlphaSandboxReviewInput[] = [
  {
    reviewId: 'alice2-demo-pending',
    reviewer: { displayName: 'Pia D.' },
    starRating: 'THREE',
    comment: 'Friendly, but the oat milk had run out.',
    reviewReply: { comment: 'Sorry, Pia: we now order twice a week.', state: 'PENDING' },
  },
  {
    reviewId: 'alice2-demo-rejected',
    reviewer: { displayName: 'Rolf E.' },
    starRating: 'ONE',
    comment: 'Closed at 17:55 although the door said 18:00.',
    reviewReply: { comment: 'Rolf, we close when we want. [[reject]]', state: 'REJECTED' },
  },
];

export async function addDemoReviews(control: AlphaSandboxControl): Promise<void> {
  const state = await control.state();
  const present = new Set(state.reviews.map((review) => review.name));
  const missing = DEMO_REVIEWS.filter((review) => !present.has(`${DEMO_LOCATION}/reviews/${review.reviewId}`));
  if (missing.length > 0 && state.locations.some((location) => location.name === DEMO_LOCATION)) await control.addReviews(DEMO_LOCATION, missing);
}

/** Text that makes the sandbox refuse a provider call whose body holds it (a post, a location update, a reply). */
export const DEMO_REFUSAL_MARKER = '[[error]]';

/** As good as for ever: a scripted failure is used up one call at a time. */
const REFUSALS = 1_000_000_000;

/**
 * Arms the refusal: every provider call whose body contains DEMO_REFUSAL_MARKER answers 400 INVALID_ARGUMENT, as the
 * provider refuses content it will not take. A scripted failure (POST /_control/fail), so it lasts until a reset or
 * the server's stop (failures are not kept in the state file); armed again at every start.
 */
export async function armDemoRefusal(control: AlphaSandboxControl): Promise<void> {
  const state = await control.state();
  if (state.failures.some((failure) => failure.bodyContains === DEMO_REFUSAL_MARKER)) return;
  await control.fail({ count: REFUSALS, status: 400, bodyContains: DEMO_REFUSAL_MARKER });
}
