import type { Authentication } from './access/authentication';
import type { PresentEvents } from './activity/event-presentation';
import type { Config } from './config';
import type { Database } from './db/orm';
import type { EventBus } from './events/event-bus';
import type { JobEngine } from './jobs/job-engine';
import type { AlphaClient } from './providers/alpha/alpha.client';
import type { AlphaOAuthClient } from './providers/alpha/alpha.oauth';
import type { BetaClient } from './providers/beta/beta.client';
import type { BetaOAuthClient } from './providers/beta/beta.oauth';
import type { ProviderBudgets } from './providers/shared/provider-budget';
import type { Metrics } from './observability/metrics';
import type { ProviderHealthWindow } from './observability/provider-health';
import type { Clock } from './shared/clock';
import type { SecretBox } from './shared/secret-box';

/**
 * The long-lived parts of one process, built once at start-up (src/stack.ts) and reached by services through
 * the request context and by workers directly.
 */
export interface Runtime {
  config: Config;
  database: Database;
  events: EventBus;
  jobs: JobEngine;
  /** Each provider's request budget, shared by the deployment's processes (docs/jobs.md, "Provider budgets"). */
  providerBudgets: ProviderBudgets;
  alpha: AlphaClient;
  /** The alpha provider's identity provider (consent, tokens). */
  alphaOAuth: AlphaOAuthClient;
  beta: BetaClient;
  /** The beta provider's OAuth endpoints (consent, tokens). */
  betaOAuth: BetaOAuthClient;
  /** Seals and opens third parties' secrets kept in the database. */
  secrets: SecretBox;
  /** The service's own public base URL (PUBLIC_URL, or where it listens): the providers' redirects come back to it. */
  publicUrl(): string;
  clock: Clock;
  /** Who a request's credentials name (src/access/authentication.ts). */
  authentication: Authentication;
  /** Prometheus metrics; undefined with METRICS=off (nothing is counted). */
  metrics: Metrics | undefined;
  /** This process's recent provider calls, for the dashboard. */
  providerHealth: ProviderHealthWindow;
  /** Activity events as GET /events lists them: what webhooks send. */
  presentEvents: PresentEvents;
}
