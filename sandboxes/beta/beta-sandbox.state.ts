import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { BetaBrand, BetaBrandDetails, BetaValidationReport } from '../../src/providers/beta/beta.types';
import type { SandboxOAuthClient } from '../shared/oauth-client-auth';
import {
  ProjectQuota,
  startingQuota,
  UNLIMITED_PROJECT_QUOTA,
  type ProjectQuotaExceeded,
  type ProjectQuotaLimits,
  type ProjectQuotaState,
} from '../shared/project-quota';
import { ScriptedFailures, type ScriptedFailure, type TakeOptions } from '../shared/scripted-failures';
import { timerSleeper, type Sleeper } from '../shared/sleeper';
import { BetaSandboxGrants, grantsPersistedSchema, type BetaSandboxGrantCounts } from './beta-sandbox.grants';
import { betaSandboxSeedCompanies, type BetaSandboxCompany } from './beta-sandbox.seed';
import { validateBrandDetails, validationReports } from './beta-sandbox.validation';

/**
 * What the controls can change. `reset` returns to DEFAULT_BETA_SANDBOX_CONFIG, with the per-project quota the
 * sandbox was started with. `quotaPerSecond` and `quotaPerMinute`: the per-project quota of the brand API.
 */
export interface BetaSandboxConfig extends ProjectQuotaLimits {
  /** Added before every brand API answer (not the controls', not OAuth's). */
  latencyMs: number;
  /** How long a submitted brand stays SUBMITTED before PUBLISHED or REJECTED. 0: decided at the next read. */
  validationMs: number;
  /** A display name containing this gets the brand REJECTED; null: none is. */
  rejectMarker: string | null;
  /** Lifetime of the access tokens (consents' and apps'), on the clock. */
  accessTokenTtlSeconds: number;
  /** The OAuth clients the provider knows. */
  oauthClients: BetaSandboxOAuthClient[];
}

export type BetaSandboxOAuthClient = SandboxOAuthClient;

export const DEFAULT_BETA_SANDBOX_CONFIG: Readonly<BetaSandboxConfig> = {
  latencyMs: 0,
  validationMs: 0,
  rejectMarker: '[[reject]]',
  accessTokenTtlSeconds: 3600,
  oauthClients: [{ clientId: 'listings-gateway-beta-sandbox', clientSecret: 'beta-sandbox-secret' }],
  ...UNLIMITED_PROJECT_QUOTA,
};

export const BETA_SANDBOX_CALL_KINDS = [
  'brand-create',
  'brand-get',
  'brand-replace',
  'brand-delete',
  'brand-list',
] as const;
export type BetaSandboxCallKind = (typeof BETA_SANDBOX_CALL_KINDS)[number];

/** A scripted failure: the next `count` matching calls fail with `status` (see ScriptedFailure). */
export type BetaSandboxFailure = ScriptedFailure;

/** A control's request the sandbox refuses as it stands (an id taken). */
export class BetaSandboxControlRefusal extends Error {
  constructor(
    readonly status: 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

/** The answer of GET /_control/state. */
export interface BetaSandboxState {
  companies: BetaSandboxCompany[];
  /** Every brand that exists now, oldest first, as the provider shows it now. */
  brands: BetaBrand[];
  /** Brand API calls received since the last reset, failed and refused ones included. */
  calls: Record<BetaSandboxCallKind, number>;
  config: BetaSandboxConfig;
  /** Scripted failures not used up yet. */
  failures: BetaSandboxFailure[];
  /** Brand calls held by a delay (the configured latency or a scripted delayMs) at this moment. */
  held: number;
  /** Codes and tokens: how many were issued since the reset, and how many are usable now. Never the secrets. */
  oauth: BetaSandboxGrantCounts;
  /** The per-project quota's counters: calls admitted and refused, and the latest refusals. */
  quota: ProjectQuotaState;
}

const companySchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  name: z.string().min(1).max(200),
});

const reportSchema = z.strictObject({ field: z.string(), code: z.string(), message: z.string() });

const brandRecordSchema = z.strictObject({
  seq: z.number().int().min(1),
  id: z.string().regex(/^[A-Za-z0-9_-]+$/),
  companyId: z.string().min(1),
  // Checked by the create rules, as it was when it was submitted.
  details: z.unknown(),
  createdAt: z.number(),
  submittedAt: z.number(),
  decidesAt: z.number(),
  reports: z.array(reportSchema),
  etag: z.string().regex(/^[A-Za-z0-9_-]+$/),
  requestId: z.string().nullable().optional(),
});

/** What a state file holds: companies, brands, codes and tokens (hashed), the sequence. Not config nor counters. */
const persistedSchema = z.strictObject({
  version: z.literal(1),
  nextSeq: z.number().int().min(1),
  companies: z.array(companySchema),
  brands: z.array(brandRecordSchema),
  oauth: grantsPersistedSchema,
});

export type BetaSandboxPersisted = z.input<typeof persistedSchema>;

/** A company added by a control: the id is optional (default `company-<random>`). */
export const companyInputSchema = z.strictObject({
  id: companySchema.shape.id.optional(),
  name: companySchema.shape.name,
});

interface BrandRecord {
  /** Creation order: oldest-first listing and cursors rely on it. */
  seq: number;
  id: string;
  companyId: string;
  details: BetaBrandDetails;
  createdAt: number;
  /** The latest create or replace. */
  submittedAt: number;
  /** When validation decides: submittedAt plus the validationMs of that time. */
  decidesAt: number;
  /** What validation will report; none: it publishes. Decided at submission, shown from decidesAt. */
  reports: BetaValidationReport[];
  etag: string;
  /** The requestId the brand was created with: a create repeating it answers this brand instead of a new one. */
  requestId?: string | null;
}

export interface BetaSandboxStoreOptions {
  /** Start with, and reset to, the seeded companies (beta-sandbox.seed.ts). Default true. */
  seed?: boolean;
  /** What waits out latencies and scripted delays (the plugin's cuts them short when it closes); default a timer. */
  sleeper?: Sleeper;
  /** The per-project quota it starts with and a reset returns to; default unlimited. */
  quota?: Partial<ProjectQuotaLimits>;
}

/** The simulated provider's memory: companies, brands, codes and tokens, configuration, failures and counters. */
export class BetaSandboxStore {
  config: BetaSandboxConfig;
  readonly grants: BetaSandboxGrants;
  private readonly seeded: boolean;
  private readonly sleeper: Sleeper;
  private readonly failures = new ScriptedFailures();
  /** What a reset returns to: the defaults, with the quota the sandbox was started with. */
  private readonly startConfig: Readonly<BetaSandboxConfig>;
  private readonly quota = new ProjectQuota();
  private calls: Record<BetaSandboxCallKind, number> = zeroCalls();
  private readonly companies = new Map<string, BetaSandboxCompany>();
  private readonly brands = new Map<string, BrandRecord>();
  // Never reset: a position handed out before a reset must not come back for a different brand.
  private nextSeq = 1;

  constructor(
    private readonly clock: () => number,
    options: BetaSandboxStoreOptions = {},
  ) {
    this.grants = new BetaSandboxGrants(clock);
    this.sleeper = options.sleeper ?? timerSleeper;
    this.seeded = options.seed ?? true;
    this.startConfig = { ...DEFAULT_BETA_SANDBOX_CONFIG, ...startingQuota(options.quota) };
    this.config = structuredClone(this.startConfig);
    if (this.seeded) this.seed();
  }

  reset(): void {
    this.config = structuredClone(this.startConfig);
    this.failures.clear();
    this.quota.clear();
    this.calls = zeroCalls();
    this.companies.clear();
    this.brands.clear();
    this.grants.clear();
    if (this.seeded) this.seed();
  }

  configure(patch: Partial<BetaSandboxConfig>): BetaSandboxConfig {
    this.config = { ...this.config, ...structuredClone(patch) };
    return structuredClone(this.config);
  }

  addFailure(failure: BetaSandboxFailure): void {
    this.failures.add(failure);
  }

  countCall(kind: BetaSandboxCallKind): void {
    this.calls[kind] += 1;
  }

  /** Charges a brand call to the per-project quota: undefined when admitted, otherwise what its 429 says. */
  takeQuota(): ProjectQuotaExceeded | undefined {
    return this.quota.take(this.config, this.clock());
  }

  /** Uses up one call of the first scripted failure that matches, if any (see ScriptedFailures.take). */
  takeFailure(method: string, url: string, options: TakeOptions = {}): BetaSandboxFailure | undefined {
    return this.failures.take(method, url, options);
  }

  /** Waits `ms` (the configured latency plus a scripted delay), counted in the state's `held` meanwhile. */
  hold(ms: number): Promise<void> {
    return this.failures.hold(ms, this.sleeper);
  }

  company(id: string): BetaSandboxCompany | undefined {
    const company = this.companies.get(id);
    return company && { ...company };
  }

  /** Oldest first: the order the consent page offers them. */
  companyList(): BetaSandboxCompany[] {
    return [...this.companies.values()].map((company) => ({ ...company }));
  }

  addCompany(input: { id?: string; name: string }): BetaSandboxCompany {
    const id = input.id ?? `company-${randomBytes(6).toString('hex')}`;
    if (this.companies.has(id)) throw new BetaSandboxControlRefusal(409, `company ${id} exists already`);
    const company = { id, name: input.name };
    this.companies.set(id, company);
    return { ...company };
  }

  /**
   * A new brand, SUBMITTED: the answer shows it before validation runs, whatever validationMs says. A create that
   * repeats a requestId of the company answers the brand it made (`created` false), as the real provider does.
   */
  createBrand(companyId: string, details: BetaBrandDetails, requestId: string | null = null): { brand: BetaBrand; created: boolean } {
    if (requestId) {
      const earlier = [...this.brands.values()].find((record) => record.companyId === companyId && record.requestId === requestId);
      if (earlier) return { brand: this.view(earlier), created: false };
    }
    const now = this.clock();
    const record: BrandRecord = {
      seq: this.nextSeq++,
      id: randomBytes(8).readBigUInt64BE().toString(),
      companyId,
      details,
      createdAt: now,
      requestId,
      ...this.submission(details, now),
    };
    this.brands.set(record.id, record);
    return { brand: this.view(record, { submitted: true }), created: true };
  }

  getBrand(companyId: string, brandId: string): BetaBrand | undefined {
    const record = this.brandOf(companyId, brandId);
    return record && this.view(record);
  }

  /** The brand's etag now; undefined: no such brand in the company. */
  etagOf(companyId: string, brandId: string): string | undefined {
    return this.brandOf(companyId, brandId)?.etag;
  }

  /** Replaces the details, with a new etag, and submits the brand again. */
  replaceBrand(companyId: string, brandId: string, details: BetaBrandDetails): BetaBrand | undefined {
    const record = this.brandOf(companyId, brandId);
    if (!record) return undefined;
    record.details = details;
    Object.assign(record, this.submission(details, this.clock()));
    return this.view(record, { submitted: true });
  }

  deleteBrand(companyId: string, brandId: string): boolean {
    if (!this.brandOf(companyId, brandId)) return false;
    return this.brands.delete(brandId);
  }

  /** Oldest first. `afterSeq` is the position a cursor carries: the page starts after it. */
  listBrands(input: { companyId: string; limit: number; afterSeq?: number }): {
    brands: BetaBrand[];
    nextAfterSeq?: number;
  } {
    const matching = [...this.brands.values()]
      .filter((record) => record.companyId === input.companyId)
      .filter((record) => input.afterSeq === undefined || record.seq > input.afterSeq)
      .sort((a, b) => a.seq - b.seq);
    const page = matching.slice(0, input.limit);
    const brands = page.map((record) => this.view(record));
    return matching.length > page.length ? { brands, nextAfterSeq: page[page.length - 1]!.seq } : { brands };
  }

  /** The resources, for a state file. */
  persisted(): BetaSandboxPersisted {
    return {
      version: 1,
      nextSeq: this.nextSeq,
      companies: this.companyList(),
      brands: [...this.brands.values()].sort((a, b) => a.seq - b.seq).map((record) => structuredClone(record)),
      oauth: this.grants.persisted(),
    };
  }

  /**
   * Replaces the resources with those of a state file. Throws, changing nothing, when `data` is not one: a file
   * edited by hand or written by another version must not serve what the provider would never have accepted.
   */
  restore(data: unknown): void {
    const parsed = persistedSchema.parse(data);
    const brands = parsed.brands.map((brand): BrandRecord => ({
      ...brand,
      details: validateBrandDetails(brand.details),
    }));
    const companyIds = new Set(parsed.companies.map((company) => company.id));
    if (companyIds.size !== parsed.companies.length) throw new Error('two companies share an id');
    const brandIds = new Set(brands.map((brand) => brand.id));
    if (brandIds.size !== brands.length) throw new Error('two brands share an id');
    const seqs = new Set(brands.map((brand) => brand.seq));
    if (seqs.size !== brands.length) throw new Error('two brands share a sequence number');
    for (const brand of brands) {
      if (!companyIds.has(brand.companyId)) throw new Error(`brand ${brand.id} belongs to an unknown company`);
    }
    const { codes, refreshTokens, accessTokens } = parsed.oauth;
    for (const grant of [...codes, ...refreshTokens, ...accessTokens]) {
      if (grant.companyId !== null && !companyIds.has(grant.companyId)) {
        throw new Error('a code or token belongs to an unknown company');
      }
    }

    this.companies.clear();
    for (const company of parsed.companies) this.companies.set(company.id, { ...company });
    this.brands.clear();
    for (const brand of brands) this.brands.set(brand.id, brand);
    this.grants.replace(parsed.oauth);
    this.nextSeq = Math.max(parsed.nextSeq, ...brands.map((brand) => brand.seq + 1));
  }

  snapshot(): BetaSandboxState {
    return {
      companies: this.companyList(),
      brands: [...this.brands.values()].sort((a, b) => a.seq - b.seq).map((record) => this.view(record)),
      calls: { ...this.calls },
      config: structuredClone(this.config),
      failures: this.failures.list(),
      held: this.failures.held,
      oauth: this.grants.counts(),
      quota: this.quota.snapshot(),
    };
  }

  private seed(): void {
    for (const company of betaSandboxSeedCompanies()) this.companies.set(company.id, company);
  }

  private brandOf(companyId: string, brandId: string): BrandRecord | undefined {
    const record = this.brands.get(brandId);
    return record?.companyId === companyId ? record : undefined;
  }

  /** A create's or replace's submission, under the configuration of that moment. */
  private submission(
    details: BetaBrandDetails,
    now: number,
  ): Pick<BrandRecord, 'submittedAt' | 'decidesAt' | 'reports' | 'etag'> {
    return {
      submittedAt: now,
      decidesAt: now + this.config.validationMs,
      reports: validationReports(details, this.config.rejectMarker),
      etag: randomBytes(12).toString('base64url'),
    };
  }

  /**
   * The brand as the provider shows it now: its state is worked out from the clock on every read. `submitted`: the
   * answer to the write itself, given before validation runs.
   */
  private view(record: BrandRecord, options: { submitted?: boolean } = {}): BetaBrand {
    const decided = !options.submitted && this.clock() >= record.decidesAt;
    const rejected = decided && record.reports.length > 0;
    return {
      id: record.id,
      companyId: record.companyId,
      createdDate: new Date(record.createdAt).toISOString(),
      updatedDate: new Date(decided ? record.decidesAt : record.submittedAt).toISOString(),
      etag: record.etag,
      state: !decided ? 'SUBMITTED' : rejected ? 'REJECTED' : 'PUBLISHED',
      brandDetails: structuredClone(record.details),
      ...(rejected ? { validationReports: structuredClone(record.reports) } : {}),
    };
  }
}

function zeroCalls(): Record<BetaSandboxCallKind, number> {
  return Object.fromEntries(BETA_SANDBOX_CALL_KINDS.map((kind) => [kind, 0])) as Record<BetaSandboxCallKind, number>;
}
