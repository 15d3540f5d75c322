import type { AlphaReview } from '../../src/providers/alpha/alpha.types';
import { commonControls, createControlCall } from '../shared/control-client';
import type { AlphaSandboxIdentityInput } from './alpha-sandbox.accounts';
import type { AlphaSandboxMarket, AlphaSandboxMarketInput } from './alpha-sandbox.places';
import type { AlphaSandboxReviewInput } from './alpha-sandbox.reviews';
import type {
  AlphaSandboxConfig,
  AlphaSandboxFailure,
  AlphaSandboxIdentityResult,
  AlphaSandboxState,
} from './alpha-sandbox.state';

/** The sandbox's controls over HTTP, for tests and scripts. `baseUrl` is where the plugin is mounted. */
export interface AlphaSandboxControl {
  reset(): Promise<void>;
  configure(patch: Partial<AlphaSandboxConfig>): Promise<AlphaSandboxConfig>;
  /** The next `count` matching provider calls fail (see AlphaSandboxFailure). */
  fail(failure: Omit<AlphaSandboxFailure, 'when'> & { when?: AlphaSandboxFailure['when'] }): Promise<void>;
  /**
   * Posts, locations (with their account, requestId and accepted edits), counters, configuration, failures,
   * identities, accounts, reviews and the counts of codes and tokens.
   */
  state(): Promise<AlphaSandboxState>;
  /** A new sandbox identity with its accounts, their locations and reviews (the consent page offers it at once). */
  addIdentity(input: AlphaSandboxIdentityInput): Promise<AlphaSandboxIdentityResult>;
  /** New reviews on an existing location (`accounts/{a}/locations/{l}`), as customers would write them. */
  addReviews(location: string, reviews: AlphaSandboxReviewInput[]): Promise<AlphaReview[]>;
  /** Deletes a review as its author would: every call about it answers 404 from now on. */
  deleteReview(name: string): Promise<void>;
  /**
   * Replaces the places market with exactly these businesses (besides the sandbox's own locations); `synthetic: false`
   * turns the generated competitors off. Answers the market as stored.
   */
  setMarket(market: AlphaSandboxMarketInput): Promise<AlphaSandboxMarket>;
  /** Back to the default market: no explicit businesses, synthetic ones on. */
  resetMarket(): Promise<AlphaSandboxMarket>;
}

export function createAlphaSandboxControl(baseUrl: string): AlphaSandboxControl {
  const call = createControlCall(baseUrl, 'alpha sandbox');

  // The answers come from our own simulator, whose types these are: no further check.
  return {
    ...commonControls<AlphaSandboxConfig, AlphaSandboxState>(call),
    async addIdentity(input) {
      return (await call('POST', '/identities', input)) as AlphaSandboxIdentityResult;
    },
    async addReviews(location, reviews) {
      return ((await call('POST', '/reviews', { location, reviews })) as { reviews: AlphaReview[] }).reviews;
    },
    async deleteReview(name) {
      await call('DELETE', '/reviews', { name });
    },
    async setMarket(market) {
      return (await call('PUT', '/market', market)) as AlphaSandboxMarket;
    },
    async resetMarket() {
      return (await call('DELETE', '/market')) as AlphaSandboxMarket;
    },
  };
}
