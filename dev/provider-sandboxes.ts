import path from 'node:path';
import { ConfigError } from '../src/config';
import type { DemoProvider } from '../src/demo/demo.provider';
import type { ServerExtension } from '../src/stack';
import { alphaSandboxPlugin, DEFAULT_ALPHA_SANDBOX_CONFIG } from '../sandboxes/alpha/alpha-sandbox';
import { createAlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { addDemoReviews, armDemoRefusal, DEMO_REFUSAL_MARKER } from '../sandboxes/alpha/alpha-sandbox.demo';
import { betaSandboxPlugin } from '../sandboxes/beta/beta-sandbox';
import { approveDemoConsent } from '../sandboxes/beta/beta-sandbox.demo';
import type { ProjectQuotaLimits } from '../sandboxes/shared/project-quota';
import { sandboxQuotaFromEnv } from '../sandboxes/shared/sandbox-server';

/** The one setting the development entry reads beyond the product's (src/config.ts). */
export const SANDBOX_SETTING = 'SANDBOX';

/** The variables that point the service at a real provider: the sandboxes are never mounted beside one. */
export const PROVIDER_URL_VARIABLES = ['ALPHA_API_URL', 'ALPHA_OAUTH_URL', 'BETA_API_URL'] as const;

/**
 * Whether the development entry mounts the provider sandboxes (with their unauthenticated controls, loopback only):
 * SANDBOX=on or off; by default only in development with no provider URL, where nothing else answers as a provider.
 * SANDBOX=on beside a provider URL is refused: half of the flows could end at the simulator.
 */
export function sandboxesWanted(env: NodeJS.ProcessEnv): boolean {
  const value = (name: string) => (env[name] === '' ? undefined : env[name]);
  const sandbox = value(SANDBOX_SETTING);
  if (sandbox !== undefined && sandbox !== 'on' && sandbox !== 'off') {
    throw new ConfigError(`Invalid configuration:\n  SANDBOX=${JSON.stringify(sandbox)}: must be "on" or "off"`);
  }
  const providerUrls = PROVIDER_URL_VARIABLES.filter((name) => value(name) !== undefined);
  if (sandbox === 'on' && providerUrls.length > 0) {
    const given = providerUrls.map((name) => `${name}=${JSON.stringify(env[name])}`).join(', ');
    throw new ConfigError(
      `Invalid configuration:\n  SANDBOX="on": the provider sandboxes are never mounted beside a real provider URL (${given}); set SANDBOX=off or unset ${providerUrls.join(', ')}`,
    );
  }
  if (sandbox !== undefined) return sandbox === 'on';
  return (value('NODE_ENV') ?? 'development') === 'development' && providerUrls.length === 0;
}

export interface ProviderSandboxesOptions {
  /** Keep what the simulated providers hold between starts under the data directory, as real ones would. Default true. */
  persist?: boolean;
  /**
   * The demo's provider data and what it may ask of the providers (src/demo/demo.provider.ts): reviews in every
   * reply state and a refusal marker armed once the server listens, the markers its posts use, beta
   * consents approved on request. Default false.
   */
  demoData?: boolean;
  /** Each sandbox's per-project quota (ALPHA_SANDBOX_QUOTA_PER_SECOND and the like: sandboxQuotasFromEnv). Default none. */
  quota?: { alpha?: ProjectQuotaLimits; beta?: ProjectQuotaLimits };
}

/** The sandboxes' quotas as their own processes read them (docs/alpha-sandbox.md), for `npm start`'s mounted ones. */
export function sandboxQuotasFromEnv(env: NodeJS.ProcessEnv): { alpha: ProjectQuotaLimits; beta: ProjectQuotaLimits } {
  const alpha = sandboxQuotaFromEnv('ALPHA_SANDBOX', env);
  const beta = sandboxQuotaFromEnv('BETA_SANDBOX', env);
  const problems = [...('problems' in alpha ? alpha.problems : []), ...('problems' in beta ? beta.problems : [])];
  // Said as the service's own settings are (src/config.ts): the variable, its value, what is wrong.
  const lines = problems.map(({ name, message }) => `  ${name}=${JSON.stringify(env[name] ?? '')}: ${message}`);
  if ('problems' in alpha || 'problems' in beta) throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  return { alpha: alpha.quota, beta: beta.quota };
}

/** Both provider simulators on the service's own server, at /sandbox/alpha and /sandbox/beta. */
export function providerSandboxes(options: ProviderSandboxesOptions = {}): ServerExtension {
  return {
    description: 'the sandbox',
    async register(app, { clock, dataDir }) {
      const stateFile = (name: string) => (options.persist === false ? undefined : path.join(dataDir, `${name}-sandbox.json`));
      const now = () => clock.now().getTime();
      await app.register(alphaSandboxPlugin, { prefix: '/sandbox/alpha', clock: now, stateFile: stateFile('alpha'), quota: options.quota?.alpha });
      await app.register(betaSandboxPlugin, { prefix: '/sandbox/beta', clock: now, stateFile: stateFile('beta'), quota: options.quota?.beta });
    },
    providerUrls: (serverUrl) => ({ alpha: `${serverUrl}/sandbox/alpha`, beta: `${serverUrl}/sandbox/beta` }),
    async started({ alphaUrl, log }) {
      if (!options.demoData) return;
      // Before the workers start, so a demo's first import brings every reply state, and its refused post is refused.
      const control = createAlphaSandboxControl(alphaUrl);
      await addDemoReviews(control).catch((error: unknown) => {
        log.warn({ err: error }, 'could not add the demo reviews to the alpha sandbox');
      });
      await armDemoRefusal(control).catch((error: unknown) => {
        log.warn({ err: error }, 'could not arm the demo refusal in the alpha sandbox');
      });
    },
    ...(options.demoData ? { demoProvider: () => sandboxDemoProvider() } : {}),
  };
}

/** The sandboxes as a DemoProvider: what the demo's preparation asks of them goes through their controls and pages. */
function sandboxDemoProvider(): DemoProvider {
  return {
    rejectMarker: DEFAULT_ALPHA_SANDBOX_CONFIG.rejectMarker ?? '[[reject]]',
    reviewMarker: DEFAULT_ALPHA_SANDBOX_CONFIG.reviewMarker ?? '[[review]]',
    refusalMarker: DEMO_REFUSAL_MARKER,
    async approveBetaConsent(authorizeUrl, companyId) {
      const landed = await approveDemoConsent(authorizeUrl, companyId);
      if (landed.searchParams.get('success') !== 'true') {
        throw new Error(`the beta consent of ${companyId} did not succeed: ${landed.searchParams.get('error') ?? landed.toString()}`);
      }
    },
  };
}
