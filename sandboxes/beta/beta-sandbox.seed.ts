/**
 * The companies a sandbox starts with (and returns to on reset), so that a person can link one on the consent page
 * at once. Ids are fixed, so docs and tests can use them. No brands: every brand is made through the API.
 */

export interface BetaSandboxCompany {
  /** The `orgs/{orgId}` of the brand API's paths, and the token answer's company_id. */
  id: string;
  name: string;
}

export const BETA_SANDBOX_SEED = {
  acme: { id: 'company-1001', name: 'Acme Coffee Company' },
  bakeries: { id: 'company-2002', name: 'Beta Bakeries Ltd' },
} as const satisfies Record<string, BetaSandboxCompany>;

/** The seeded companies, in the order the consent page offers them. */
export function betaSandboxSeedCompanies(): BetaSandboxCompany[] {
  return Object.values(BETA_SANDBOX_SEED).map((company) => ({ ...company }));
}
