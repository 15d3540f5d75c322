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
  const root = `${baseUrl.replace(/\/+$/, '')}/_control`;

  async function call(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${root}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`beta sandbox ${method} /_control${path}: HTTP ${response.status} ${text}`);
    return JSON.parse(text) as unknown;
  }

  // The answers come from our own simulator, whose types these are: no further check.
  return {
    async reset() {
      await call('POST', '/reset');
    },
    async configure(patch) {
      return (await call('PUT', '/config', patch)) as BetaSandboxConfig;
    },
    async fail(failure) {
      await call('POST', '/fail', failure);
    },
    async state() {
      return (await call('GET', '/state')) as BetaSandboxState;
    },
    async addCompany(input) {
      return (await call('POST', '/companies', input)) as BetaSandboxCompany;
    },
  };
}
