import type { BudgetRate } from './providers/shared/provider-budget';
import { z } from 'zod';

const BUDGET_PATTERN = /^(off|[0-9]+(\.[0-9]+)?\/(s|min))$/;
const BUDGET_MESSAGE = 'must be off, or requests per second or minute above 0, such as 20/s or 300/min';
const budgetSetting = z
  .string()
  .regex(BUDGET_PATTERN, BUDGET_MESSAGE)
  .refine((text) => text === 'off' || Number(text.split('/')[0]) > 0, BUDGET_MESSAGE);

/**
 * The budgets' defaults in production: 5% under the providers' published quotas, the alpha provider's default
 * per-project quota of 300 requests a minute (its console shows the project's own) and the beta provider's 10
 * requests a second per integration. At the quota itself a call started a little late would now and then be refused
 * (docs/operations.md, "Setting the budget"). In development and tests the default is off: the sandboxes have no
 * quota unless one is given to them.
 */
const DEFAULT_BUDGETS = { alpha: '285/min', beta: '9.5/s' } as const;

/** A budget setting as calls per window; undefined: off. */
function budgetOf(setting: string | undefined, production: boolean, fallback: string): BudgetRate | undefined {
  const text = setting ?? (production ? fallback : 'off');
  if (text === 'off') return undefined;
  const [count, unit] = text.split('/');
  return { count: Number(count), windowMs: unit === 'min' ? 60_000 : 1000 };
}

/** Every variable the process reads, validated once at start-up. A bad value stops with the variable's name. */
const variablesSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  // Defaulted below: whether it was set decides `dataDirIsDefault`.
  DATA_DIR: z.string().min(1).optional(),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PUBLIC_URL: z.string().url().optional(),
  ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
  ALPHA_API_URL: z.string().url().optional(),
  ALPHA_ACCESS_TOKEN: z.string().min(1).default('sandbox-access-token'),
  PROVIDER_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(600).default(10),
  JOB_EXPIRE_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  JOB_MAINTENANCE_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  JOB_RETRY_LIMIT: z.coerce.number().int().min(0).max(20).default(5),
  JOB_RETRY_DELAY_SECONDS: z.coerce.number().int().min(1).max(600).default(2),
  JOB_STOP_TIMEOUT_SECONDS: z.coerce.number().int().min(0).max(600).default(10),
  JOB_MAX_WAIT_SECONDS: z.coerce.number().int().min(0).max(86_400).default(3600),
  // A provider's request budget (docs/operations.md, "Provider budgets"): `<n>/s`, `<n>/min`, or `off`.
  ALPHA_BUDGET: budgetSetting.optional(),
  BETA_BUDGET: budgetSetting.optional(),
  POST_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  POST_QUOTA_PER_MONTH: z.coerce.number().int().min(1).default(10000),
  LOCATION_CREATE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  LOCATION_READ_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  LOCATION_UPDATE_RATE_LIMIT_PER_HOUR: z.coerce.number().int().min(1).default(200),
  BUSINESS_PROFILE_READ_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  BUSINESS_PROFILE_UPDATE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  CITATIONS_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(10),
  SCANS_RUNNING_LIMIT: z.coerce.number().int().min(1).default(5),
  SCAN_START_RATE_LIMIT_PER_HOUR: z.coerce.number().int().min(1).default(30),
  // At least one scan of the most dots (49) must fit an empty window.
  SCAN_SEARCH_RATE_LIMIT_PER_HOUR: z.coerce.number().int().min(49).default(500),
  CONSENT_SESSIONS_OPEN_LIMIT: z.coerce.number().int().min(1).default(20),
  LOCATION_PAGE_MAX_BYTES: z.coerce.number().int().min(65536).default(2 * 1024 * 1024),
  TOKEN_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  TOKEN_ENCRYPTION_KEY: z
    .string()
    .refine((text) => Buffer.from(text, 'base64').length === 32, 'must be 32 bytes, base64 (e.g. `openssl rand -base64 32`)')
    .optional(),
  ALPHA_OAUTH_URL: z.string().url().optional(),
  ALPHA_CLIENT_ID: z.string().min(1).default('listings-gateway-sandbox'),
  ALPHA_CLIENT_SECRET: z.string().min(1).default('sandbox-client-secret'),
  OAUTH_STATE_TTL_SECONDS: z.coerce.number().int().min(60).max(86400).default(900),
  BETA_API_URL: z.string().url().optional(),
  BETA_CLIENT_ID: z.string().min(1).default('listings-gateway-beta-sandbox'),
  BETA_CLIENT_SECRET: z.string().min(1).default('beta-sandbox-secret'),
  METRICS: z
    .string()
    .regex(/^(on|off|[1-9][0-9]{0,4})$/, 'must be on, off, or a port number (a separate listener for /metrics)')
    .default('on'),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  // Read again by the OpenTelemetry SDK (with the other OTEL_* variables): checked here so a bad one stops the start.
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  CORS_ORIGINS: z
    .string()
    .refine((text) => text.trim() === 'off' || text.trim() === '*' || corsOriginList(text) !== undefined, 'must be off, *, or a comma-separated list of origins (https://app.example.com)')
    .optional(),
  TRUSTED_DOCUMENTS: z.string().min(1).optional(),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z.enum(['on', 'off']).optional(),
  WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(60).default(10),
  WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(4),
  WEBHOOK_SECRET_GRACE_HOURS: z.coerce.number().min(0).max(168).default(24),
});

/**
 * Origins as a browser sends them (`scheme://host[:port]`, no path): the list of CORS_ORIGINS, or undefined when an
 * entry is not one.
 */
function corsOriginList(text: string): string[] | undefined {
  const origins = text.split(',').map((entry) => entry.trim()).filter(Boolean);
  if (origins.length === 0) return undefined;
  for (const origin of origins) {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return undefined;
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) return undefined;
  }
  return origins;
}

export type RawConfig = z.infer<typeof variablesSchema>;

/** The names of every variable this module reads (the README's settings table lists each). */
export const SETTING_NAMES = Object.keys(variablesSchema.shape) as (keyof RawConfig)[];

/**
 * The configuration as the code reads it: the variables named, grouped and converted. Its type, `Config`, is
 * inferred from here, so a setting is written in the schema above and once below, never in a third hand-kept copy.
 */
const configSchema = variablesSchema.transform((raw, ctx) => {
  // Reached only when every variable is valid (zod runs a transform after its schema passes): reported alone.
  if (raw.NODE_ENV === 'production' && !raw.TOKEN_ENCRYPTION_KEY) {
    ctx.issues.push({
      code: 'custom',
      path: ['TOKEN_ENCRYPTION_KEY'],
      message: 'required in production (32 bytes, base64): it seals the providers\' tokens at rest',
      input: raw.TOKEN_ENCRYPTION_KEY,
    });
    return z.NEVER;
  }
  return {
    port: raw.PORT,
    host: raw.HOST,
    databaseUrl: raw.DATABASE_URL,
    dataDir: raw.DATA_DIR ?? '.data',
    /** True when DATA_DIR was not set: the default may move where PostgreSQL (run as `postgres` by root) can reach. */
    dataDirIsDefault: raw.DATA_DIR === undefined,
    embeddedPgPort: raw.EMBEDDED_PG_PORT,
    logLevel: raw.LOG_LEVEL,
    nodeEnv: raw.NODE_ENV,
    /** Error messages of unexpected failures are shown only in development. */
    isDevelopment: raw.NODE_ENV === 'development',
    publicUrl: raw.PUBLIC_URL,
    /** What this process runs: the API, the job workers, or both. */
    role: raw.ROLE,
    redisUrl: raw.REDIS_URL,
    /** The alpha provider's base URL; unset: a provider mounted beside this server by its starter (development, tests). */
    alphaApiUrl: raw.ALPHA_API_URL,
    alphaAccessToken: raw.ALPHA_ACCESS_TOKEN,
    /** How long one call to a provider (its API or its OAuth endpoints) may take, answer included, in ms. */
    providerTimeoutMs: Math.round(raw.PROVIDER_TIMEOUT_SECONDS * 1000),
    jobs: {
      expireSeconds: raw.JOB_EXPIRE_SECONDS,
      maintenanceSeconds: raw.JOB_MAINTENANCE_SECONDS,
      retryLimit: raw.JOB_RETRY_LIMIT,
      retryDelaySeconds: raw.JOB_RETRY_DELAY_SECONDS,
      /** How long, in all, a job may wait for its provider (429s) before they count as failures (docs/jobs.md). */
      maxWaitSeconds: raw.JOB_MAX_WAIT_SECONDS,
      /** How long a stop waits for running jobs before leaving them to be retried. */
      stopTimeoutSeconds: raw.JOB_STOP_TIMEOUT_SECONDS,
    },
    /**
     * Requests a second each provider may be sent by the whole deployment (src/providers/shared/provider-budget.ts);
     * undefined: no budget (calls go as fast as jobs run; a 429 still makes them wait).
     */
    budgets: {
      alpha: budgetOf(raw.ALPHA_BUDGET, raw.NODE_ENV === 'production', DEFAULT_BUDGETS.alpha),
      beta: budgetOf(raw.BETA_BUDGET, raw.NODE_ENV === 'production', DEFAULT_BUDGETS.beta),
    },
    /** Requests per rolling window of each limited operation (src/limits/request-limits.ts), the post quota, and other bounds on work. */
    limits: {
      postsPerMinute: raw.POST_RATE_LIMIT_PER_MINUTE,
      postsPerMonth: raw.POST_QUOTA_PER_MONTH,
      locationCreatesPerMinute: raw.LOCATION_CREATE_RATE_LIMIT_PER_MINUTE,
      locationReadsPerMinute: raw.LOCATION_READ_RATE_LIMIT_PER_MINUTE,
      locationUpdatesPerHour: raw.LOCATION_UPDATE_RATE_LIMIT_PER_HOUR,
      businessProfileReadsPerMinute: raw.BUSINESS_PROFILE_READ_RATE_LIMIT_PER_MINUTE,
      businessProfileUpdatesPerMinute: raw.BUSINESS_PROFILE_UPDATE_RATE_LIMIT_PER_MINUTE,
      citationsPerMinute: raw.CITATIONS_RATE_LIMIT_PER_MINUTE,
      /** Scans queued or running at once, per organization. */
      scansRunning: raw.SCANS_RUNNING_LIMIT,
      scanStartsPerHour: raw.SCAN_START_RATE_LIMIT_PER_HOUR,
      /** Provider searches (dots) of the scans started, per organization and rolling hour. */
      scanSearchesPerHour: raw.SCAN_SEARCH_RATE_LIMIT_PER_HOUR,
      /** Consent sessions waiting for their callback, per organization and provider. */
      consentSessionsOpen: raw.CONSENT_SESSIONS_OPEN_LIMIT,
      /** Bytes of location records one answer holds at most (docs/locations.md). */
      locationPageBytes: raw.LOCATION_PAGE_MAX_BYTES,
    },
    /** How long a token's principal is reused without a lookup (0: never); revocations evict it at once. */
    tokenCacheSeconds: raw.TOKEN_CACHE_SECONDS,
    /** Days the activity log keeps an event (docs/activity-log.md). */
    eventRetentionDays: raw.EVENT_RETENTION_DAYS,
    /**
     * Prometheus metrics at GET /metrics: off; on the API's port; or on a port of their own (same HOST). With a
     * token set, a scrape must send it as a bearer token; in production without one, only loopback scrapes are
     * answered on the API's port (src/http/metrics-route.ts).
     */
    metrics: metricsOf(raw.METRICS),
    metricsToken: raw.METRICS_TOKEN,
    /** Where traces are exported (OTLP); unset: no tracing at all (src/observability/tracing.ts). */
    otlpEndpoint: raw.OTEL_EXPORTER_OTLP_ENDPOINT,
    /**
     * Which browser origins may call the API (CORS, src/http/cors.ts): none; any (`*`); a list; or, unset in
     * development, this machine's own (`http://localhost:<any port>`, `http://127.0.0.1:<any port>`).
     */
    cors: corsOf(raw),
    /**
     * Trusted documents (src/graphql/trusted-documents.ts): the manifest files (GraphQL Code Generator's
     * persisted-documents.json) whose operations alone /graphql runs; undefined: any operation.
     */
    trustedDocuments: raw.TRUSTED_DOCUMENTS?.split(',').map((file) => file.trim()).filter(Boolean),
    /** The key sealing third parties' tokens at rest; unset: one kept under the data directory (not in production). */
    tokenEncryptionKey: raw.TOKEN_ENCRYPTION_KEY ? Buffer.from(raw.TOKEN_ENCRYPTION_KEY, 'base64') : undefined,
    /** The alpha provider's OAuth endpoints (authorize, token, userinfo); unset: those of the alpha API's base. */
    alphaOAuthUrl: raw.ALPHA_OAUTH_URL,
    alphaClientId: raw.ALPHA_CLIENT_ID,
    alphaClientSecret: raw.ALPHA_CLIENT_SECRET,
    /** How long a consent may take, from generate-url to the callback. */
    oauthStateTtlSeconds: raw.OAUTH_STATE_TTL_SECONDS,
    /** The beta provider's base URL (its API and OAuth); unset: a provider mounted beside this server by its starter. */
    betaApiUrl: raw.BETA_API_URL,
    betaClientId: raw.BETA_CLIENT_ID,
    betaClientSecret: raw.BETA_CLIENT_SECRET,
    /** Webhook deliveries (docs/webhooks.md). */
    webhooks: {
      /** Loopback, private, link-local and metadata addresses, and http:// URLs, allowed (development, tests). */
      allowPrivateTargets: (raw.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? (raw.NODE_ENV === 'development' ? 'on' : 'off')) === 'on',
      /** How long one delivery request may take, answer included. */
      timeoutMs: Math.round(raw.WEBHOOK_TIMEOUT_SECONDS * 1000),
      /** Requests in flight at once per endpoint. */
      endpointConcurrency: raw.WEBHOOK_ENDPOINT_CONCURRENCY,
      /** How long the secret before a rotation still signs. */
      secretGraceMs: Math.round(raw.WEBHOOK_SECRET_GRACE_HOURS * 3600 * 1000),
    },
  };
});

export type Config = z.output<typeof configSchema>;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable counts as unset, as shells and .env files commonly leave them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0]);
      return `  ${name}=${JSON.stringify(env[name] ?? '')}: ${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

function metricsOf(setting: string): { mode: 'off' } | { mode: 'on' } | { mode: 'port'; port: number } {
  return setting === 'off' || setting === 'on' ? { mode: setting } : { mode: 'port', port: Number(setting) };
}

function corsOf(raw: RawConfig): { mode: 'off' } | { mode: 'any' } | { mode: 'list'; origins: string[] } | { mode: 'loopback' } {
  const setting = raw.CORS_ORIGINS?.trim();
  if (setting === undefined || setting === '') return raw.NODE_ENV === 'development' ? { mode: 'loopback' } : { mode: 'off' };
  if (setting === 'off') return { mode: 'off' };
  if (setting === '*') return { mode: 'any' };
  return { mode: 'list', origins: corsOriginList(setting)! };
}
