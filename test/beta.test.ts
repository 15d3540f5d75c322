import { createBetaSandboxControl } from '../sandboxes/beta/beta-sandbox.control';
import { BetaBrand } from '../src/beta-brand/beta-brand.entity';
import { expectSucceeded, waitForWork, workAbout } from './support/async-work';
import { formOf, submit, visit } from './support/browser';
import { TestClock } from './support/clock';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The beta provider through the service: its consent as a browser goes through it (each documented error on the
 * final redirect), and brands created, changed and deleted with every rule of the document, pushed to the beta
 * sandbox by a job.
 */

const clock = new TestClock();
let t: TestStack;
let org: OrganizationFixture;
let noBeta: OrganizationFixture;

const sandbox = () => createBetaSandboxControl(`${t.url}/sandbox/beta`);

beforeAll(async () => {
  t = await startTestStack({}, { clock });
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, betaApi: true });
  noBeta = await createOrganizationFixture(t.em(), { accounts: 1, betaApi: false });
});
beforeEach(async () => {
  clock.release();
  await sandbox().reset();
});
afterAll(() => t?.close());

const query = (url: string) => Object.fromEntries(new URL(url).searchParams);

/** generate-url, the beta consent page, the person's choice, and our callback: where the person lands. */
async function betaConsent(options: { state?: string; company?: string; decline?: boolean; token?: string } = {}) {
  const generated = await http(t.url, 'POST', '/oauth/beta/generate-url', {
    token: options.token ?? org.token,
    body: { redirect_url: 'https://app.example/beta-return', ...(options.state === undefined ? {} : { state: options.state }) },
  });
  expect(generated.status).toBe(200);
  const page = await visit(generated.body.url);
  expect(page.status).toBe(200);
  const toCallback = await submit(formOf(page.body, generated.body.url), {
    button: ['decision', options.decline ? 'decline' : 'approve'],
    ...(options.company ? { select: options.company } : {}),
  });
  expect(toCallback.status).toBe(302);
  const fromCallback = await visit(toCallback.location!);
  return { generated, toCallback, fromCallback, landed: fromCallback.location ? query(fromCallback.location) : {} };
}

describe('the beta consent', () => {
  it('answers {success, url, state}; the person lands with success=true, the state and the company_id', async () => {
    const run = await betaConsent({ state: 'beta-1' });
    expect(run.generated.body).toEqual({ success: true, url: expect.stringContaining(`${t.url}/sandbox/beta/oauth/authorize?`), state: 'beta-1' });
    expect(run.fromCallback.location).toMatch(/^https:\/\/app\.example\/beta-return\?/);
    expect(run.landed).toEqual({ success: 'true', state: 'beta-1', company_id: 'company-1001' });
  });

  it('answers access_denied when declined, provisioning_failed without a company', async () => {
    expect((await betaConsent({ state: 'no', decline: true })).landed).toEqual({ error: 'access_denied', state: 'no' });
    expect((await betaConsent({ state: 'none', company: 'none' })).landed).toEqual({ error: 'provisioning_failed', state: 'none' });
  });

  it('answers missing_code without a code, invalid_state for a used or expired state, token_exchange_failed when the exchange fails', async () => {
    const generated = await http(t.url, 'POST', '/oauth/beta/generate-url', { token: org.token, body: { redirect_url: 'https://app.example/r', state: 's1' } });
    const page = await visit(generated.body.url);
    const toCallback = await submit(formOf(page.body, generated.body.url), { button: ['decision', 'approve'] });
    const withoutCode = new URL(toCallback.location!);
    withoutCode.searchParams.delete('code');
    expect(query((await visit(withoutCode.toString())).location!)).toEqual({ error: 'missing_code', state: 's1' });
    // The state was taken by that callback: using it again is invalid_state.
    expect(query((await visit(toCallback.location!)).location!)).toEqual({ error: 'invalid_state', state: 's1' });

    clock.hold();
    const late = await http(t.url, 'POST', '/oauth/beta/generate-url', { token: org.token, body: { redirect_url: 'https://app.example/r', state: 's2' } });
    const latePage = await visit(late.body.url);
    const lateCallback = await submit(formOf(latePage.body, late.body.url), { button: ['decision', 'approve'] });
    clock.advance(16 * 60 * 1000);
    expect(query((await visit(lateCallback.location!)).location!)).toEqual({ error: 'invalid_state', state: 's2' });
    clock.release();

    await sandbox().fail({ count: 1, status: 500, pathContains: '/oauth/token' });
    expect((await betaConsent({ state: 's3' })).landed).toEqual({ error: 'token_exchange_failed', state: 's3' });
  });

  it('needs the beta API flag (403 BETA_API_DISABLED), an organization token and an https redirect_url', async () => {
    const disabled = await http(t.url, 'POST', '/oauth/beta/generate-url', { token: noBeta.token, body: { redirect_url: 'https://app.example/r' } });
    expect(disabled.status).toBe(403);
    expect(disabled.body).toEqual({ success: false, code: 'BETA_API_DISABLED', msg: expect.any(String), missing_fields: [] });
    const accountToken = await http(t.url, 'POST', '/oauth/beta/generate-url', { token: org.accounts[0]!.token, body: { redirect_url: 'https://app.example/r' } });
    expect(accountToken.status).toBe(403);
    const plain = await http(t.url, 'POST', '/oauth/beta/generate-url', { token: org.token, body: { redirect_url: 'http://app.example/r' } });
    expect(plain.status).toBe(400);
    expect(plain.body).toEqual({ error: 400, message: 'redirect_url scheme must be https, not http' });
  });
});

describe('beta brands', () => {
  const brandFields = 'segmentId betaCompanyId betaBrandId betaSyncStatus betaState syncError brandName countryCode primaryCategory additionalCategories locations';

  async function createBrand(input: Record<string, unknown> = {}): Promise<any> {
    const answer = await graphql(t.url, `mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { ${brandFields} } }`, {
      token: org.token,
      variables: { input: { betaCompanyId: 'company-1001', brandName: 'Acme Coffee', countryCode: 'us', primaryCategory: 'coffee_shop', ownershipType: 'BRAND_OWNER', ...input } },
    });
    expect(answer.body.errors).toBeUndefined();
    return answer.body.data.createBetaBrand;
  }

  function synced(segmentId: string, done = (brand: any) => brand.beta_sync_status !== 'PENDING'): Promise<any> {
    return eventually(async () => {
      const answer = await http(t.url, 'GET', `/beta/brands/${segmentId}`, { token: org.token });
      return answer.status === 200 && done(answer.body.payload) ? answer.body.payload : undefined;
    }, 30000, `brand ${segmentId} to be synced`);
  }

  const patch = (segmentId: string, body: unknown, token = org.token) => http(t.url, 'PATCH', `/beta/brands/${segmentId}`, { token, body });

  /** The brand's own id (what its work names; GraphQL shows the segment id only). */
  const brandIdOf = async (segmentId: string) => (await t.em().findOneOrFail(BetaBrand, { segmentId })).id;

  beforeEach(async () => {
    // The organization's consent linking company-1001 (the sandbox was just reset, its tokens with it).
    await betaConsent({ state: 'for-brands' });
  });

  it('creates a brand of a consented company; a job creates it at the provider; GET shows the document’s record', async () => {
    const created = await createBrand({ additionalCategories: ['cafe'], websiteUrl: 'https://acme.example' });
    expect(created).toMatchObject({ segmentId: expect.stringMatching(/^brand-[0-9a-f-]{36}$/), betaSyncStatus: 'PENDING', countryCode: 'US' });
    const brand = await synced(created.segmentId);
    expect(brand).toEqual({
      segment_id: created.segmentId,
      beta_company_id: 'company-1001',
      beta_brand_id: expect.any(String),
      beta_sync_status: 'SYNCED',
      brand_name: 'Acme Coffee',
      name: 'Acme Coffee',
      country_code: 'US',
      primary_category: 'coffee_shop',
      additional_categories: ['cafe'],
      beta_categories: ['coffee_shop', 'cafe'],
      website_url: 'https://acme.example',
      app_store_url: null,
      ownership_type: 'BRAND_OWNER',
      use_location_name: false,
      send_action_links: false,
      locations: [],
      provision_source: 'app',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updated_at: expect.any(String),
    });
    const remote = (await sandbox().state()).brands.find((item: { id: string }) => item.id === brand.beta_brand_id) as any;
    expect(remote.brandDetails).toMatchObject({ countryCodes: ['US'], categories: { primary: 'coffee_shop', additional: ['cafe'] }, ownershipType: 'BRAND_OWNER' });

    // Its push is listed as one unit of work about the brand, of the organization as a whole (no account), finished;
    // an account token does not see the organization's work.
    const brandId = await brandIdOf(created.segmentId);
    const work = await waitForWork(t.url, org.token, 'BETA_BRAND_SYNC', brandId);
    expect(work).toHaveLength(1);
    expect(work[0]).toMatchObject({ kind: 'BETA_BRAND_SYNC', subjectId: brandId, accountId: null, organizationId: org.organization.id, retryable: false });
    expectSucceeded(work[0]!);
    expect(await workAbout(t.url, org.accounts[0]!.token, { kind: 'BETA_BRAND_SYNC' })).toEqual([]);

    const listed = await graphql(t.url, `{ betaBrands { segmentId } }`, { token: org.token });
    expect(listed.body.data.betaBrands.map((item: { segmentId: string }) => item.segmentId)).toContain(created.segmentId);
    const unconsented = await graphql(t.url, `mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId } }`, {
      token: org.token,
      variables: { input: { betaCompanyId: 'company-2002', brandName: 'X', countryCode: 'US', primaryCategory: 'cafe', ownershipType: 'FRANCHISEE' } },
    });
    expect(unconsented.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('refuses each rule of PATCH with the generic body', async () => {
    const { segmentId } = await createBrand();
    const refused = async (body: unknown, message: string) => {
      const answer = await patch(segmentId, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: 400, message });
    };
    await refused({}, 'Nothing to update: send at least one field');
    await refused({ country_code: 'USA' }, 'country_code must be exactly 2 letters (ISO 3166-1 alpha-2)');
    await refused({ country_code: 'U' }, 'country_code must be exactly 2 letters (ISO 3166-1 alpha-2)');
    await refused({ primary_category: 'cafe', additional_categories: Array.from({ length: 20 }, (_, index) => `c${index}`) }, 'additional_categories may hold at most 19 categories');
    await refused({ additional_categories: ['bakery'] }, 'primary_category is required whenever the categories change');
    await refused({ beta_company_id: 'company-2002' }, 'beta_company_id cannot be changed');
    await refused({ segment_id: 'brand-other' }, 'segment_id cannot be changed');
    await refused({ ownership_type: 'OWNER' }, 'ownership_type must be one of BRAND_OWNER, FRANCHISEE');
    await refused({ website_url: 'ftp://acme.example' }, 'website_url scheme must be http or https, not ftp');
    const missing = await patch('brand-00000000-0000-4000-8000-000000000000', { brand_name: 'Nobody' });
    expect(missing.status).toBe(404);
    const disabled = await patch(segmentId, { brand_name: 'Nope' }, noBeta.token);
    expect(disabled.status).toBe(403);
    expect(disabled.body).toMatchObject({ code: 'BETA_API_DISABLED' });
  });

  it('pushes a change with the etag, reading the brand again when it changed at the provider meanwhile', async () => {
    const { segmentId } = await createBrand();
    const first = await synced(segmentId);
    const changed = await patch(segmentId, { brand_name: 'Acme Coffee Roasters', primary_category: 'cafe', additional_categories: ['bakery'], ownership_type: 'FRANCHISEE' });
    expect(changed.status).toBe(200);
    expect(changed.body.payload).toMatchObject({ brand_name: 'Acme Coffee Roasters', beta_sync_status: 'PENDING', primary_category: 'cafe', additional_categories: ['bakery'] });
    const second = await synced(segmentId);
    expect(second).toMatchObject({ beta_sync_status: 'SYNCED', beta_brand_id: first.beta_brand_id, beta_categories: ['cafe', 'bakery'], ownership_type: 'FRANCHISEE' });

    // The provider answers the next replace with 412 ETAG_MISMATCH once: the job reads the brand and replaces again.
    await sandbox().fail({ count: 1, status: 412, method: 'PUT' });
    const gets = (await sandbox().state()).calls;
    expect((await patch(segmentId, { use_location_name: true })).status).toBe(200);
    const third = await synced(segmentId);
    expect(third).toMatchObject({ beta_sync_status: 'SYNCED', use_location_name: true });
    const after = (await sandbox().state()).calls as Record<string, number>;
    expect(after['brand-get']! - ((gets as Record<string, number>)['brand-get'] ?? 0)).toBeGreaterThanOrEqual(1);

    // One unit of work per push (create, change, change read again after the 412), each finished.
    const work = await waitForWork(t.url, org.token, 'BETA_BRAND_SYNC', await brandIdOf(segmentId));
    expect(work).toHaveLength(3);
    work.forEach(expectSucceeded);
  });

  it('marks a change the provider refuses FAILED with its reason', async () => {
    const { segmentId } = await createBrand();
    await synced(segmentId);
    await sandbox().fail({ count: 1, status: 400, method: 'PUT' });
    await patch(segmentId, { brand_name: 'Refused Name' });
    const failed = await synced(segmentId);
    expect(failed.beta_sync_status).toBe('FAILED');
    const details = await graphql(t.url, `query ($s: String!) { betaBrand(segmentId: $s) { syncError } }`, { token: org.token, variables: { s: segmentId } });
    expect(details.body.data.betaBrand.syncError).toEqual(expect.any(String));
  });

  it('deletes a brand without locations (gone at the provider too), and answers 409 while locations are attached', async () => {
    const attached = await createBrand({ locationIds: [org.accounts[0]!.locations[0]!.id] });
    const conflict = await http(t.url, 'DELETE', `/beta/brands/${attached.segmentId}`, { token: org.token });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ error: 409, message: expect.stringMatching(/location/) });

    const { segmentId } = await createBrand();
    const brand = await synced(segmentId);
    const deleted = await http(t.url, 'DELETE', `/beta/brands/${segmentId}`, { token: org.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, payload: { segment_id: segmentId, deleted: true } });
    expect((await http(t.url, 'GET', `/beta/brands/${segmentId}`, { token: org.token })).status).toBe(404);
    await eventually(async () => {
      const remote = (await sandbox().state()).brands.find((item: { id: string }) => item.id === brand.beta_brand_id);
      return remote ? undefined : true;
    }, 30000, 'the brand to be deleted at the provider');
  });

  it('needs the flag and an organization token on every brand route', async () => {
    const { segmentId } = await createBrand();
    for (const [method, token] of [['GET', noBeta.token], ['DELETE', noBeta.token]] as const) {
      const answer = await http(t.url, method, `/beta/brands/${segmentId}`, { token });
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe('BETA_API_DISABLED');
    }
    const accountToken = await http(t.url, 'GET', `/beta/brands/${segmentId}`, { token: org.accounts[0]!.token });
    expect(accountToken.status).toBe(403);
    expect(accountToken.body).toEqual({ error: 403, message: expect.any(String) });
  });
});
