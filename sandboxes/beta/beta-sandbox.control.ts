import { commonControls, createControlCall } from '../shared/control-client';
import type { BetaSandboxCompany } from './beta-sandbox.seed';
import type { BetaSandboxConfig, BetaSandboxFailure, BetaSandboxState } from './beta-sandbox.state';

/** The beta sandbox's controls over HTTP, for tests and scripts. `baseUrl` is where the plugin is mounted. */
export interface BetaSandboxControl {
  /** Back to the seeded companies (unless started with seed: false), no brands, codes or tokens, default config. */
  reset(): Promise<void>;
  configure(patch: Partial<BetaSandboxConfig>): Promise<BetaSandboxConfig>;
  /** The next `count` matching calls fail (see BetaSandboxFailure). */
  fail(failure: Omit<BetaSandboxFailure, 'when'> & { when?: BetaSandboxFailure['when'] }): Promise<void>;
  /** Companies, brands as served now, call counts, configuration, failures left, and counts of codes and tokens. */
  state(): Promise<BetaSandboxState>;
  /** A new company, offered on the consent page at once; `id` default `company-<random>`. */
  addCompany(input: { id?: string; name: string }): Promise<BetaSandboxCompany>;
}

export function createBetaSandboxControl(baseUrl: string): BetaSandboxControl {
  const call = createControlCall(baseUrl, 'beta sandbox');

  // The answers come from our own simulator, whose types these are: no further check.
  return {
    ...commonControls<BetaSandboxConfig, BetaSandboxState>(call),
    async addCompany(input) {
      return (await call('POST', '/companies', input)) as BetaSandboxCompany;
    },
  };
}
