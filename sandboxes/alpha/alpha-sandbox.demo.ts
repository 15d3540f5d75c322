import type { AlphaSandboxControl } from './alpha-sandbox.control';
import type { AlphaSandboxReviewInput } from './alpha-sandbox.reviews';

/**
 * Two reviews of Alice's Mitte bakery whose replies are still being moderated and were rejected, so the demo
 * organization (which imports Alice's account) shows every reply state at once. Added to the sandbox this server
 * mounts, in development; fixed ids, so a later start finds them there and adds nothing.
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
