/**
 * What the demo may ask of the providers it runs against, when they are simulators that can be told (in development,
 * the sandboxes `npm start` mounts: dev/provider-sandboxes.ts). A real provider decides these things itself: with no
 * DemoProvider, the demo shows what content alone decides (live, scheduled and deleted posts, an update that
 * succeeds) and leaves out the states only the provider's own judgement gives.
 */
export interface DemoProvider {
  /** Text the alpha provider rejects a post for when its summary contains it (the post ends REJECTED). */
  rejectMarker: string;
  /**
   * Text the alpha provider refuses any request for (400) when the body contains it: a post that holds it ends in
   * ERROR, a location update FAILED, each with the provider's reason.
   */
  refusalMarker: string;
  /** Text the alpha provider holds a post under review for (a day: it stays PROCESSING) when its summary contains it. */
  reviewMarker: string;
  /**
   * Approves a beta consent as its person would on the provider's page: opens `authorizeUrl` (what
   * generate-url answered), chooses company `companyId`, approves, and follows the provider's redirect to our
   * callback. Throws when the callback does not report success.
   */
  approveBetaConsent(authorizeUrl: string, companyId: string): Promise<void>;
}
