import { readFile, writeFile } from 'node:fs/promises';
import { createBetaClient, type BetaClient } from '../src/providers/beta/beta.client';
import { BetaProviderError, isBetaEtagMismatch } from '../src/providers/beta/beta.errors';
import { OAuthError } from '../src/providers/shared/oauth-error';
import { createBetaOAuthClient, type BetaOAuthClient } from '../src/providers/beta/beta.oauth';
import { BETA_CATEGORIES, type BetaBrandDetails, type BetaOAuthTokenAnswer } from '../src/providers/beta/beta.types';
import { BETA_SANDBOX_SEED } from '../sandboxes/beta/beta-sandbox';
import { createBetaSandboxControl, type BetaSandboxControl } from '../sandboxes/beta/beta-sandbox.control';
import { startBetaSandbox, type BetaSandboxServer } from '../sandboxes/beta/main';
import { formOf, submit, visit, type ConsentForm, type Hop } from './support/browser';
import { sandboxRestarts } from './support/sandbox-restarts';
import { failure } from './support/failure';

/**
 * The beta sandbox (brand API, OAuth endpoints, controls) through the real clients and a browser's view of the
 * consent page. The sandbox runs on a clock this file moves, so codes and tokens expire and brands are validated by
 * moving time, never by waiting.
 */

const START = Date.parse('2031-03-01T10:00:00.000Z');
let now = START;
let sandbox: BetaSandboxServer;
let control: BetaSandboxControl;
let oauth: BetaOAuthClient;
/** The gateway's brand client; each call here names the token it uses. */
let client: BetaClient;

const CLIENT_ID = 'listings-gateway-beta-sandbox';
const CLIENT_SECRET = 'beta-sandbox-secret';
const REDIRECT = 'https://gateway.example/oauth/beta/callback';
const ACME = BETA_SANDBOX_SEED.acme.id;
const BAKERIES = BETA_SANDBOX_SEED.bakeries.id;

function details(change: (details: BetaBrandDetails) => void = () => {}): BetaBrandDetails {
  const value: BetaBrandDetails = {
    displayNames: [
      { name: 'Acme Coffee', locale: 'en-US', primary: true },
      { name: 'Acme Café', locale: 'fr-FR', primary: false },
    ],
    countryCodes: ['US', 'CA'],
    categories: { primary: 'cafe', additional: ['coffee_shop', 'bakery'] },
    urls: [
      { url: 'https://acme.example', type: 'HOMEPAGE' },
      { url: 'https://apps.example/acme', type: 'APP_STORE' },
    ],
    ownershipType: 'BRAND_OWNER',
  };
  change(value);
  return value;
}

async function consentPage(url: string): Promise<ConsentForm> {
  const page = await visit(url);
  expect(page.status).toBe(200);
  return formOf(page.body, url);
}

/** Where a 302 sends the browser. */
function redirectOf(hop: Hop): URL {
  expect(hop.status).toBe(302);
  return new URL(hop.location ?? '');
}

/** A person approves on the consent page, linking `company` (an id, or 'none'); the code the callback receives. */
async function consent(company: string = ACME, via: BetaOAuthClient = oauth): Promise<string> {
  const form = await consentPage(via.authorizeUrl({ redirectUri: REDIRECT, state: 'st' }));
  const back = redirectOf(await submit(form, { button: ['decision', 'approve'], select: company }));
  expect(back.searchParams.get('state')).toBe('st');
  return back.searchParams.get('code') ?? '';
}

async function connect(company: string = ACME, via: BetaOAuthClient = oauth): Promise<BetaOAuthTokenAnswer> {
  return via.exchangeCode({ code: await consent(company, via), redirectUri: REDIRECT });
}

/** A raw token request, to send what the client never would. */
function tokenRequest(form: Record<string, string> | string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${sandbox.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
  });
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** A raw brand API request: what the client never sends (no If-Match, unknown fields, no token). */
async function brandRequest(
  method: string,
  pathname: string,
  init: { token?: string; body?: unknown; ifMatch?: string; rawBody?: string } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  if (init.ifMatch !== undefined) headers['if-match'] = init.ifMatch;
  if (init.body !== undefined || init.rawBody !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${sandbox.url}/api/v1/${pathname}`, {
    method,
    headers,
    body: init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

beforeAll(async () => {
  sandbox = await startBetaSandbox({ port: 0, clock: () => now });
  control = createBetaSandboxControl(sandbox.url);
  oauth = createBetaOAuthClient({ baseUrl: sandbox.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  client = createBetaClient({
    baseUrl: sandbox.url,
    accessToken: () => {
      throw new Error('every call in this file names its token');
    },
  });
});
afterAll(() => sandbox?.close());
beforeEach(async () => {
  now = START;
  await control.reset();
});

describe('the consent page', () => {
  it('offers the seeded companies and "no company", and carries the request in hidden fields', async () => {
    const url = oauth.authorizeUrl({ redirectUri: REDIRECT, state: 'abc' });
    const page = await visit(url);
    expect(page.status).toBe(200);
    expect(page.body).not.toMatch(/<script/i);
    expect(page.body).toContain(CLIENT_ID);
    const again = await fetch(url);
    await again.text();
    const { headers } = again;
    expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(headers.get('cache-control')).toBe('no-store');
    expect(headers.get('x-frame-options')).toBe('DENY');

    const form = formOf(page.body, url);
    expect(form.action).toBe(`${sandbox.url}/oauth/authorize`);
    expect(form.select).toEqual({
      name: 'company',
      options: {
        [ACME]: `Acme Coffee Company (${ACME})`,
        [BAKERIES]: `Beta Bakeries Ltd (${BAKERIES})`,
        none: 'No company (consent without a linked company)',
      },
      selected: ACME,
    });
    expect(form.buttons).toEqual({ decision: ['approve', 'decline'] });
    expect(form.hidden).toEqual({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
      scope: 'business_connect',
      state: 'abc',
    });
  });

  it('approve redirects with a code and the state; the exchange links the chosen company', async () => {
    const tokens = await connect(BAKERIES);
    expect(tokens).toEqual({
      access_token: expect.stringMatching(/^bc_at_/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^bc_rt_/),
      scope: 'business_connect',
      company_id: BAKERIES,
    });
    const listed = await client.listBrands(BAKERIES, {}, { accessToken: tokens.access_token });
    expect(listed).toEqual({ brands: [] });
  });

  it('approve with no company gives tokens without company_id, which reach no company', async () => {
    const tokens = await connect('none');
    expect(tokens.company_id).toBeUndefined();
    expect('company_id' in tokens).toBe(false);
    for (const company of [ACME, BAKERIES]) {
      expect(
        await failure(client.listBrands(company, {}, { accessToken: tokens.access_token }), BetaProviderError),
      ).toMatchObject({ status: 403, code: 'FORBIDDEN', context: `orgs/${company}`, retryable: false });
    }
  });

  it('decline redirects with access_denied and the state, and no code', async () => {
    const form = await consentPage(oauth.authorizeUrl({ redirectUri: `${REDIRECT}?keep=1`, state: 'st' }));
    const back = redirectOf(await submit(form, { button: ['decision', 'decline'] }));
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(back.searchParams)).toEqual({ keep: '1', error: 'access_denied', state: 'st' });
  });

  it('escapes everything it echoes, and the form carries it back unchanged', async () => {
    const state = `"><script>alert('x')</script>&amp;`;
    const url = oauth.authorizeUrl({ redirectUri: REDIRECT, state });
    const page = await visit(url);
    expect(page.body).not.toContain('<script>');
    const back = redirectOf(await submit(formOf(page.body, url), { button: ['decision', 'approve'] }));
    expect(back.searchParams.get('state')).toBe(state);
  });

  it('answers a bad client_id or redirect_uri with a 400 page, never a redirect', async () => {
    const good = new URL(oauth.authorizeUrl({ redirectUri: REDIRECT, state: 's' }));
    const cases: [(query: URLSearchParams) => void, string][] = [
      [(query) => query.set('client_id', 'someone-else'), 'invalid_client'],
      [(query) => query.delete('client_id'), 'invalid_request'],
      [(query) => query.delete('redirect_uri'), 'invalid_request'],
      [(query) => query.set('redirect_uri', '/callback'), 'invalid_request'],
      [(query) => query.set('redirect_uri', 'ftp://gateway.example/cb'), 'invalid_request'],
      [(query) => query.set('redirect_uri', `${REDIRECT}#frag`), 'invalid_request'],
      [(query) => query.append('redirect_uri', REDIRECT), 'invalid_request'],
    ];
    for (const [change, error] of cases) {
      const url = new URL(good);
      change(url.searchParams);
      const page = await visit(url.toString());
      expect({ status: page.status, location: page.location }).toEqual({ status: 400, location: undefined });
      expect(page.body).toContain(`Error 400: ${error}`);
    }
  });

  it('tells the client of other faults by a redirect with the error and the state', async () => {
    const good = new URL(oauth.authorizeUrl({ redirectUri: REDIRECT, state: 's' }));
    const cases: [(query: URLSearchParams) => void, string][] = [
      [(query) => query.set('response_type', 'token'), 'unsupported_response_type'],
      [(query) => query.delete('response_type'), 'unsupported_response_type'],
      [(query) => query.delete('scope'), 'invalid_scope'],
      [(query) => query.set('scope', 'business_connect everything'), 'invalid_scope'],
      [(query) => query.append('scope', 'business_connect'), 'invalid_request'],
    ];
    for (const [change, error] of cases) {
      const url = new URL(good);
      change(url.searchParams);
      const back = redirectOf(await visit(url.toString()));
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect(back.searchParams.get('error')).toBe(error);
      expect(back.searchParams.get('state')).toBe('s');
      expect(back.searchParams.get('code')).toBeNull();
    }
  });

  it('checks the posted form again: an altered client or a company that does not exist is a 400 page', async () => {
    const form = await consentPage(oauth.authorizeUrl({ redirectUri: REDIRECT, state: 's' }));
    const altered = { ...form, hidden: { ...form.hidden, client_id: 'evil' } };
    const refused = await submit(altered, { button: ['decision', 'approve'] });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('invalid_client');
    const stranger = await submit(form, { button: ['decision', 'approve'], select: 'company-9999' });
    expect({ status: stranger.status, location: stranger.location }).toEqual({ status: 400, location: undefined });
    expect((await control.state()).oauth.codes.issued).toBe(0);
  });

  it('offers a company added by a control at once, and only "no company" in a sandbox without seed', async () => {
    const added = await control.addCompany({ id: 'company-3003', name: 'Gamma Grocers' });
    expect(added).toEqual({ id: 'company-3003', name: 'Gamma Grocers' });
    expect((await connect('company-3003')).company_id).toBe('company-3003');

    const empty = await startBetaSandbox({ port: 0, clock: () => now, seed: false });
    try {
      const emptyOAuth = createBetaOAuthClient({
        baseUrl: empty.url,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
      });
      const form = await consentPage(emptyOAuth.authorizeUrl({ redirectUri: REDIRECT, state: 's' }));
      expect(form.select?.options).toEqual({ none: 'No company (consent without a linked company)' });
      expect((await createBetaSandboxControl(empty.url).state()).companies).toEqual([]);
    } finally {
      await empty.close();
    }
  });
});

describe('the token endpoint', () => {
  it('refuses bad client credentials as invalid_client (401), from the form or HTTP Basic', async () => {
    const code = await consent();
    const grant = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT };
    const cases: [Record<string, string>, Record<string, string>, boolean][] = [
      [grant, {}, false],
      [{ ...grant, client_id: CLIENT_ID, client_secret: 'wrong' }, {}, false],
      [{ ...grant, client_id: 'nobody', client_secret: CLIENT_SECRET }, {}, false],
      [grant, { authorization: basic(CLIENT_ID, 'wrong') }, true],
      [grant, { authorization: basic('nobody', CLIENT_SECRET) }, true],
      [grant, { authorization: 'Basic bm8tY29sb24' }, true],
    ];
    for (const [form, headers, challenged] of cases) {
      const response = await tokenRequest(form, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('www-authenticate')).toBe(challenged ? 'Basic realm="beta-sandbox"' : null);
      expect(await response.json()).toMatchObject({ error: 'invalid_client', error_description: expect.any(String) });
    }
    const wrong = createBetaOAuthClient({ baseUrl: sandbox.url, clientId: CLIENT_ID, clientSecret: 'wrong' });
    expect(await failure(wrong.exchangeCode({ code, redirectUri: REDIRECT }), OAuthError)).toMatchObject({
      status: 401,
      error: 'invalid_client',
      retryable: false,
    });
    // None of the refusals used the code.
    expect((await oauth.exchangeCode({ code, redirectUri: REDIRECT })).company_id).toBe(ACME);
  });

  it('accepts the credentials in the form as well as HTTP Basic (the client uses Basic)', async () => {
    const code = await consent();
    const response = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ company_id: ACME, token_type: 'Bearer' });
  });

  it('refuses malformed requests as invalid_request, and other grants as unsupported_grant_type', async () => {
    const auth = { authorization: basic(CLIENT_ID, CLIENT_SECRET) };
    const code = await consent();
    const cases: [Record<string, string> | string, Record<string, string>, string][] = [
      [{ code, redirect_uri: REDIRECT }, auth, 'invalid_request'],
      [{ grant_type: 'authorization_code', redirect_uri: REDIRECT }, auth, 'invalid_request'],
      [{ grant_type: 'authorization_code', code }, auth, 'invalid_request'],
      [`grant_type=authorization_code&code=${code}&code=x&redirect_uri=${REDIRECT}`, auth, 'invalid_request'],
      [{ grant_type: 'refresh_token' }, auth, 'invalid_request'],
      [{ grant_type: 'client_credentials', client_secret: CLIENT_SECRET }, auth, 'invalid_request'],
      [{ grant_type: 'password', username: 'a', password: 'b' }, auth, 'unsupported_grant_type'],
      [{ grant_type: 'client_credentials', scope: 'everything' }, auth, 'invalid_scope'],
    ];
    for (const [form, headers, error] of cases) {
      const response = await tokenRequest(form, headers);
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 400,
        body: { error, error_description: expect.any(String) },
      });
    }
    const json = await fetch(`${sandbox.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('refuses a code that is unknown, for another redirect_uri or of another client, as invalid_grant', async () => {
    await control.configure({
      oauthClients: [
        { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
        { clientId: 'other-app', clientSecret: 'other-secret' },
      ],
    });
    const other = createBetaOAuthClient({ baseUrl: sandbox.url, clientId: 'other-app', clientSecret: 'other-secret' });
    const code = await consent();
    for (const call of [
      () => oauth.exchangeCode({ code: 'bc_code_unknown', redirectUri: REDIRECT }),
      () => oauth.exchangeCode({ code, redirectUri: 'https://gateway.example/elsewhere' }),
      () => other.exchangeCode({ code, redirectUri: REDIRECT }),
    ]) {
      expect(await failure(call(), OAuthError)).toMatchObject({
        status: 400,
        error: 'invalid_grant',
        retryable: false,
      });
    }
    // A refused exchange leaves the code usable.
    expect((await oauth.exchangeCode({ code, redirectUri: REDIRECT })).access_token).toMatch(/^bc_at_/);
  });

  it('a code used twice is refused, and the tokens it gave are revoked', async () => {
    const code = await consent();
    const tokens = await oauth.exchangeCode({ code, redirectUri: REDIRECT });
    expect(await failure(oauth.exchangeCode({ code, redirectUri: REDIRECT }), OAuthError)).toMatchObject({
      error: 'invalid_grant',
      description: expect.stringContaining('already used'),
    });
    expect(
      await failure(client.listBrands(ACME, {}, { accessToken: tokens.access_token }), BetaProviderError),
    ).toMatchObject({ status: 401, code: 'UNAUTHORIZED', context: 'Authorization' });
    expect(await failure(oauth.refresh(tokens.refresh_token), OAuthError)).toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('a code expires 10 minutes after it was issued, on the sandbox clock', async () => {
    const fresh = await consent();
    now += 10 * 60_000 - 1;
    expect((await oauth.exchangeCode({ code: fresh, redirectUri: REDIRECT })).company_id).toBe(ACME);
    const stale = await consent();
    now += 10 * 60_000;
    expect(await failure(oauth.exchangeCode({ code: stale, redirectUri: REDIRECT }), OAuthError)).toMatchObject({
      error: 'invalid_grant',
      description: expect.stringContaining('expired'),
    });
  });

  it('client credentials give an app token without company or refresh token', async () => {
    const app = await oauth.clientCredentials();
    expect(app).toEqual({ access_token: expect.stringMatching(/^bc_app_/), token_type: 'Bearer', expires_in: 3600 });
    const raw = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    );
    expect(Object.keys((await raw.json()) as object).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect((await control.state()).oauth).toMatchObject({
      appTokens: { issued: 2, active: 2 },
      accessTokens: { issued: 0 },
    });
  });
});

describe('expiry and refresh', () => {
  it('an access token works for 3600 s of the clock; a refresh gives a new one and keeps the refresh token', async () => {
    const tokens = await connect();
    const read = (token: string) => client.listBrands(ACME, {}, { accessToken: token });
    now += 3600_000 - 1;
    await expect(read(tokens.access_token)).resolves.toEqual({ brands: [] });
    now += 1;
    const expired = await failure(read(tokens.access_token), BetaProviderError);
    expect(expired).toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
      context: 'Authorization',
      message: 'The access token expired.',
      retryable: false,
    });

    const refreshed = await oauth.refresh(tokens.refresh_token);
    expect(refreshed).toEqual({
      access_token: expect.stringMatching(/^bc_at_/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: tokens.refresh_token,
      scope: 'business_connect',
      company_id: ACME,
    });
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    await expect(read(refreshed.access_token)).resolves.toEqual({ brands: [] });
    // No rotation: the same refresh token works again.
    expect((await oauth.refresh(tokens.refresh_token)).company_id).toBe(ACME);
  });

  it('honours a configured lifetime, for consents and app tokens alike', async () => {
    await control.configure({ accessTokenTtlSeconds: 60 });
    const tokens = await connect();
    const app = await oauth.clientCredentials();
    expect([tokens.expires_in, app.expires_in]).toEqual([60, 60]);
    now += 60_000;
    for (const token of [tokens.access_token, app.access_token]) {
      expect(await failure(client.listBrands(ACME, {}, { accessToken: token }), BetaProviderError)).toMatchObject({
        status: 401,
      });
    }
  });

  it('refuses a refresh token it does not know, or of another client', async () => {
    await control.configure({
      oauthClients: [
        { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
        { clientId: 'other-app', clientSecret: 'other-secret' },
      ],
    });
    const tokens = await connect();
    const other = createBetaOAuthClient({ baseUrl: sandbox.url, clientId: 'other-app', clientSecret: 'other-secret' });
    for (const call of [() => oauth.refresh('bc_rt_unknown'), () => other.refresh(tokens.refresh_token)]) {
      expect(await failure(call(), OAuthError)).toMatchObject({ status: 400, error: 'invalid_grant' });
    }
  });
});

describe('brands', () => {
  let acme: string;
  let bakeries: string;
  beforeEach(async () => {
    acme = (await connect(ACME)).access_token;
    bakeries = (await connect(BAKERIES)).access_token;
  });

  it('creates a brand SUBMITTED with an etag, Location and ETag; a read shows it PUBLISHED', async () => {
    const raw = await brandRequest('POST', `orgs/${ACME}/brands`, { token: acme, body: { brandDetails: details() } });
    expect(raw.status).toBe(201);
    expect(raw.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      companyId: ACME,
      createdDate: '2031-03-01T10:00:00.000Z',
      updatedDate: '2031-03-01T10:00:00.000Z',
      etag: expect.any(String),
      state: 'SUBMITTED',
      brandDetails: details(),
    });
    expect(raw.headers.get('etag')).toBe(`"${String(raw.body.etag)}"`);
    expect(raw.headers.get('location')).toBe(`/api/v1/orgs/${ACME}/brands/${String(raw.body.id)}`);

    const created = await client.createBrand(ACME, details(), { accessToken: acme });
    expect(created.state).toBe('SUBMITTED');
    const read = await client.getBrand(ACME, created.id, { accessToken: acme });
    expect(read).toEqual({ ...created, state: 'PUBLISHED' });
    expect(read.validationReports).toBeUndefined();
    const get = await brandRequest('GET', `orgs/${ACME}/brands/${created.id}`, { token: acme });
    expect(get.headers.get('etag')).toBe(`"${created.etag}"`);
  });

  it('keeps the urls optional, and returns the details exactly as sent', async () => {
    const minimal = details((value) => {
      delete value.urls;
      value.categories = { primary: 'bakery' };
      value.displayNames = [{ name: 'Solo', locale: 'en', primary: true }];
    });
    const created = await client.createBrand(ACME, minimal, { accessToken: acme });
    expect(created.brandDetails).toEqual(minimal);
    expect('urls' in created.brandDetails).toBe(false);
  });

  it('lists a company’s brands oldest first, a page at a time, and only its own', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      ids.push((await client.createBrand(ACME, details(), { accessToken: acme })).id);
    }
    await client.createBrand(BAKERIES, details(), { accessToken: bakeries });
    const first = await client.listBrands(ACME, { limit: 2 }, { accessToken: acme });
    expect(first.brands.map((brand) => brand.id)).toEqual(ids.slice(0, 2));
    expect(first.brands.every((brand) => brand.state === 'PUBLISHED')).toBe(true);
    const second = await client.listBrands(ACME, { limit: 2, cursor: first.nextCursor }, { accessToken: acme });
    // A brand deleted between pages neither repeats nor shifts the next page.
    const last = await client.getBrand(ACME, ids[4]!, { accessToken: acme });
    await client.deleteBrand(ACME, last.id, last.etag, { accessToken: acme });
    const third = await client.listBrands(ACME, { limit: 2, cursor: second.nextCursor }, { accessToken: acme });
    expect([...first.brands, ...second.brands, ...third.brands].map((brand) => brand.id)).toEqual(ids.slice(0, 4));
    expect(third.nextCursor).toBeUndefined();
    expect((await client.listBrands(ACME, {}, { accessToken: acme })).brands).toHaveLength(4);
    expect((await client.listBrands(BAKERIES, {}, { accessToken: bakeries })).brands).toHaveLength(1);

    const cases: [Record<string, string | number>, string][] = [
      [{ limit: 0 }, 'limit'],
      [{ limit: 101 }, 'limit'],
      [{ limit: 'ten' }, 'limit'],
      [{ cursor: 'not-a-cursor' }, 'cursor'],
    ];
    for (const [page, context] of cases) {
      expect(
        await failure(
          client.listBrands(ACME, page as { limit?: number; cursor?: string }, { accessToken: acme }),
          BetaProviderError,
        ),
      ).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', context, retryable: false });
    }
    // A cursor of another company's list is refused by this one.
    await client.createBrand(BAKERIES, details(), { accessToken: bakeries });
    const bakeriesPage = await client.listBrands(BAKERIES, { limit: 1 }, { accessToken: bakeries });
    expect(
      await failure(
        client.listBrands(ACME, { cursor: bakeriesPage.nextCursor }, { accessToken: acme }),
        BetaProviderError,
      ),
    ).toMatchObject({ status: 400, context: 'cursor' });
  });

  it('refuses every rule of a brand body with 400 VALIDATION_ERROR naming the field in context', async () => {
    const long = 'x'.repeat(101);
    const cases: [string, (value: BetaBrandDetails) => void][] = [
      ['brandDetails.displayNames', (value) => delete (value as Partial<BetaBrandDetails>).displayNames],
      ['brandDetails.displayNames', (value) => (value.displayNames = [])],
      [
        'brandDetails.displayNames',
        (value) =>
          (value.displayNames = Array.from({ length: 11 }, (_, index) => ({
            name: `n${index}`,
            locale: 'en',
            primary: index === 0,
          }))),
      ],
      ['brandDetails.displayNames', (value) => (value.displayNames[1]!.primary = true)],
      ['brandDetails.displayNames', (value) => (value.displayNames[0]!.primary = false)],
      ['brandDetails.displayNames[0].name', (value) => (value.displayNames[0]!.name = '')],
      ['brandDetails.displayNames[0].name', (value) => (value.displayNames[0]!.name = '   ')],
      ['brandDetails.displayNames[1].name', (value) => (value.displayNames[1]!.name = long)],
      ['brandDetails.displayNames[0].name', (value) => (value.displayNames[0]!.name = 'bad\u0000name')],
      [
        'brandDetails.displayNames[0].name',
        (value) => delete (value.displayNames[0] as Partial<BetaBrandDetails['displayNames'][0]>).name,
      ],
      ['brandDetails.displayNames[0].locale', (value) => (value.displayNames[0]!.locale = 'english please')],
      [
        'brandDetails.displayNames[0].primary',
        (value) => ((value.displayNames[0] as { primary: unknown }).primary = 'yes'),
      ],
      ['brandDetails.displayNames[0].nickname', (value) => Object.assign(value.displayNames[0]!, { nickname: 'A' })],
      ['brandDetails.countryCodes', (value) => (value.countryCodes = [])],
      [
        'brandDetails.countryCodes',
        (value) =>
          (value.countryCodes = Array.from({ length: 51 }, (_, index) => `A${String.fromCharCode(65 + (index % 26))}`)),
      ],
      ['brandDetails.countryCodes[1]', (value) => (value.countryCodes = ['US', 'us'])],
      ['brandDetails.countryCodes[0]', (value) => (value.countryCodes = ['USA'])],
      ['brandDetails.countryCodes[1]', (value) => (value.countryCodes = ['US', 'US'])],
      ['brandDetails.categories', (value) => delete (value as Partial<BetaBrandDetails>).categories],
      ['brandDetails.categories.primary', (value) => (value.categories = { primary: '' })],
      [
        'brandDetails.categories.primary',
        (value) => delete (value.categories as Partial<BetaBrandDetails['categories']>).primary,
      ],
      [
        'brandDetails.categories.additional',
        (value) => (value.categories.additional = Array.from({ length: 20 }, (_, index) => `c${index}`)),
      ],
      ['brandDetails.categories.additional[0]', (value) => (value.categories.additional = [''])],
      ['brandDetails.urls[0].url', (value) => (value.urls![0]!.url = 'ftp://acme.example')],
      ['brandDetails.urls[1].url', (value) => (value.urls![1]!.url = 'not a url')],
      ['brandDetails.urls[0].type', (value) => ((value.urls![0] as { type: string }).type = 'SOCIAL')],
      ['brandDetails.ownershipType', (value) => ((value as { ownershipType: string }).ownershipType = 'TENANT')],
      ['brandDetails.ownershipType', (value) => delete (value as Partial<BetaBrandDetails>).ownershipType],
      ['brandDetails.logo', (value) => Object.assign(value, { logo: 'https://acme.example/logo.png' })],
    ];
    for (const [context, change] of cases) {
      const refused = await failure(
        client.createBrand(ACME, details(change), { accessToken: acme }),
        BetaProviderError,
      );
      expect({ context: refused.context, status: refused.status, code: refused.code }).toEqual({
        context,
        status: 400,
        code: 'VALIDATION_ERROR',
      });
      expect(refused.message).toContain(context);
      expect(refused.retryable).toBe(false);
    }
    // The limits themselves are allowed: 10 names of 100 characters, 50 countries, 19 additional categories.
    const atLimits = details((value) => {
      value.displayNames = Array.from({ length: 10 }, (_, index) => ({
        name: `${index}`.padEnd(100, 'x'),
        locale: 'en',
        primary: index === 0,
      }));
      value.countryCodes = Array.from(
        { length: 50 },
        (_, index) => `${String.fromCharCode(65 + Math.floor(index / 26))}${String.fromCharCode(65 + (index % 26))}`,
      );
      value.categories.additional = Array.from({ length: 19 }, (_, index) => `extra_${index}`);
    });
    expect((await client.createBrand(ACME, atLimits, { accessToken: acme })).state).toBe('SUBMITTED');

    const bodies: [unknown, string | undefined, string][] = [
      [{ brandDetails: details(), id: '1' }, undefined, 'id'],
      [{}, undefined, 'brandDetails'],
      [[details()], undefined, 'body'],
      [undefined, '{"brandDetails":', 'body'],
    ];
    for (const [body, rawBody, context] of bodies) {
      const raw = await brandRequest('POST', `orgs/${ACME}/brands`, { token: acme, body, rawBody });
      expect({ status: raw.status, body: raw.body }).toEqual({
        status: 400,
        body: { code: 'VALIDATION_ERROR', message: expect.any(String), context, details: [] },
      });
    }
    expect((await control.state()).brands).toHaveLength(1);
  });

  it('replaces a brand only with its current etag: 412 when stale, 428 without one', async () => {
    const created = await client.createBrand(ACME, details(), { accessToken: acme });
    const renamed = details((value) => (value.displayNames[0]!.name = 'Acme Roasters'));
    const replaced = await client.replaceBrand(ACME, created.id, renamed, created.etag, { accessToken: acme });
    expect(replaced).toMatchObject({ id: created.id, state: 'SUBMITTED', brandDetails: renamed });
    expect(replaced.etag).not.toBe(created.etag);

    const stale = await failure(
      client.replaceBrand(ACME, created.id, details(), created.etag, { accessToken: acme }),
      BetaProviderError,
    );
    expect(stale).toMatchObject({ status: 412, code: 'ETAG_MISMATCH', context: 'If-Match', retryable: false });
    expect(isBetaEtagMismatch(stale)).toBe(true);
    expect(
      isBetaEtagMismatch(
        new BetaProviderError({ status: 400, code: 'VALIDATION_ERROR', message: 'x', retryable: false }),
      ),
    ).toBe(false);
    // The etag is checked before the body: a stale etag with a bad body is still 412, and nothing changed.
    expect(
      await failure(
        client.replaceBrand(
          ACME,
          created.id,
          details((value) => (value.countryCodes = [])),
          created.etag,
          { accessToken: acme },
        ),
        BetaProviderError,
      ),
    ).toMatchObject({ status: 412 });
    expect((await client.getBrand(ACME, created.id, { accessToken: acme })).brandDetails).toEqual(renamed);

    const path = `orgs/${ACME}/brands/${created.id}`;
    const missing = await brandRequest('PUT', path, { token: acme, body: { brandDetails: details() } });
    expect({ status: missing.status, body: missing.body }).toEqual({
      status: 428,
      body: { code: 'PRECONDITION_REQUIRED', message: expect.any(String), context: 'If-Match', details: [] },
    });
    const weak = await brandRequest('PUT', path, {
      token: acme,
      body: { brandDetails: details() },
      ifMatch: `W/"${replaced.etag}"`,
    });
    expect(weak.status).toBe(412);
    // Leniencies: a bare etag, and * (any current version).
    const bare = await brandRequest('PUT', path, {
      token: acme,
      body: { brandDetails: details() },
      ifMatch: replaced.etag,
    });
    expect(bare.status).toBe(200);
    const star = await brandRequest('PUT', path, { token: acme, body: { brandDetails: renamed }, ifMatch: '*' });
    expect(star.status).toBe(200);
    expect(star.headers.get('etag')).toBe(`"${String(star.body.etag)}"`);

    // A replace checks the body as a create does, and may send back a brand as read.
    const current = await client.getBrand(ACME, created.id, { accessToken: acme });
    expect(
      await failure(
        client.replaceBrand(
          ACME,
          created.id,
          details((value) => (value.ownershipType = 'X' as never)),
          current.etag,
          { accessToken: acme },
        ),
        BetaProviderError,
      ),
    ).toMatchObject({ status: 400, context: 'brandDetails.ownershipType' });
    const roundTrip = await brandRequest('PUT', path, { token: acme, body: current, ifMatch: `"${current.etag}"` });
    expect(roundTrip.status).toBe(200);
    const otherId = await brandRequest('PUT', path, {
      token: acme,
      body: { ...current, id: '1' },
      ifMatch: `"${String(roundTrip.body.etag)}"`,
    });
    expect({ status: otherId.status, context: otherId.body.context }).toEqual({ status: 400, context: 'id' });

    expect(
      await failure(
        client.replaceBrand(ACME, '404404', details(), current.etag, { accessToken: acme }),
        BetaProviderError,
      ),
    ).toMatchObject({ status: 404, code: 'NOT_FOUND', context: 'brands/404404' });
    expect(
      await failure(
        client.replaceBrand(ACME, created.id, details(), 'has "quotes"', { accessToken: acme }),
        BetaProviderError,
      ),
    ).toMatchObject({
      status: 0,
      code: 'INVALID_ARGUMENT',
      retryable: false,
    });
  });

  it('deletes a brand with its current etag (204); afterwards it is 404 and gone from the list', async () => {
    const created = await client.createBrand(ACME, details(), { accessToken: acme });
    const replaced = await client.replaceBrand(ACME, created.id, details(), created.etag, { accessToken: acme });
    expect(
      await failure(client.deleteBrand(ACME, created.id, created.etag, { accessToken: acme }), BetaProviderError),
    ).toMatchObject({ status: 412, code: 'ETAG_MISMATCH' });
    const missing = await brandRequest('DELETE', `orgs/${ACME}/brands/${created.id}`, { token: acme });
    expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 428, code: 'PRECONDITION_REQUIRED' });

    const deleted = await brandRequest('DELETE', `orgs/${ACME}/brands/${created.id}`, {
      token: acme,
      ifMatch: `"${replaced.etag}"`,
    });
    expect(deleted.status).toBe(204);
    expect(await failure(client.getBrand(ACME, created.id, { accessToken: acme }), BetaProviderError)).toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
      context: `brands/${created.id}`,
    });
    expect((await client.listBrands(ACME, {}, { accessToken: acme })).brands).toEqual([]);
    expect(
      await failure(client.deleteBrand(ACME, created.id, replaced.etag, { accessToken: acme }), BetaProviderError),
    ).toMatchObject({ status: 404 });

    const another = await client.createBrand(ACME, details(), { accessToken: acme });
    await expect(client.deleteBrand(ACME, another.id, another.etag, { accessToken: acme })).resolves.toBeUndefined();
  });

  it('validates asynchronously: SUBMITTED for validationMs of the clock, then PUBLISHED', async () => {
    await control.configure({ validationMs: 60_000 });
    const created = await client.createBrand(ACME, details(), { accessToken: acme });
    now += 59_999;
    expect((await client.getBrand(ACME, created.id, { accessToken: acme })).state).toBe('SUBMITTED');
    now += 1;
    const published = await client.getBrand(ACME, created.id, { accessToken: acme });
    expect(published).toMatchObject({
      state: 'PUBLISHED',
      etag: created.etag,
      createdDate: '2031-03-01T10:00:00.000Z',
      updatedDate: '2031-03-01T10:01:00.000Z',
    });

    // A replace submits again: SUBMITTED for another validationMs, then decided anew.
    now += 5_000;
    const replaced = await client.replaceBrand(ACME, created.id, details(), published.etag, { accessToken: acme });
    expect(replaced.state).toBe('SUBMITTED');
    expect((await client.getBrand(ACME, created.id, { accessToken: acme })).state).toBe('SUBMITTED');
    now += 60_000;
    expect((await client.listBrands(ACME, {}, { accessToken: acme })).brands.map((brand) => brand.state)).toEqual([
      'PUBLISHED',
    ]);
  });

  it('rejects a display name with the reject marker or a category outside the list, with reports', async () => {
    await control.configure({ validationMs: 1_000 });
    const flagged = details((value) => {
      value.displayNames[1]!.name = 'Acme [[reject]]';
      value.categories = { primary: 'spaceport', additional: ['cafe', 'moon_base'] };
    });
    const created = await client.createBrand(ACME, flagged, { accessToken: acme });
    expect(created.state).toBe('SUBMITTED');
    expect((await client.getBrand(ACME, created.id, { accessToken: acme })).validationReports).toBeUndefined();
    now += 1_000;
    const rejected = await client.getBrand(ACME, created.id, { accessToken: acme });
    expect(rejected.state).toBe('REJECTED');
    expect(rejected.validationReports).toEqual([
      { field: 'brandDetails.displayNames[1].name', code: 'CONTENT_POLICY_VIOLATION', message: expect.any(String) },
      {
        field: 'brandDetails.categories.primary',
        code: 'UNKNOWN_CATEGORY',
        message: 'spaceport is not a category of the provider.',
      },
      {
        field: 'brandDetails.categories.additional[1]',
        code: 'UNKNOWN_CATEGORY',
        message: expect.stringContaining('moon_base'),
      },
    ]);

    // Fixed and replaced: submitted again, then published without reports.
    const fixed = await client.replaceBrand(ACME, created.id, details(), rejected.etag, { accessToken: acme });
    expect(fixed.validationReports).toBeUndefined();
    now += 1_000;
    const published = await client.getBrand(ACME, created.id, { accessToken: acme });
    expect(published.state).toBe('PUBLISHED');
    expect(published.validationReports).toBeUndefined();
  });

  it('publishes every category of BETA_CATEGORIES, and nothing is rejected for its name without a marker', async () => {
    await control.configure({ rejectMarker: null });
    const [primary, ...additional] = BETA_CATEGORIES;
    const created = await client.createBrand(
      ACME,
      details((value) => {
        value.categories = { primary, additional };
        value.displayNames[0]!.name = 'Acme [[reject]]';
      }),
      { accessToken: acme },
    );
    expect((await client.getBrand(ACME, created.id, { accessToken: acme })).state).toBe('PUBLISHED');
  });

  it('answers a token of another company, or of none, 403; no token or an unknown one 401', async () => {
    const created = await client.createBrand(ACME, details(), { accessToken: acme });
    const calls = [
      () => client.getBrand(ACME, created.id, { accessToken: bakeries }),
      () => client.listBrands(ACME, {}, { accessToken: bakeries }),
      () => client.createBrand(ACME, details(), { accessToken: bakeries }),
      () => client.replaceBrand(ACME, created.id, details(), created.etag, { accessToken: bakeries }),
      () => client.deleteBrand(ACME, created.id, created.etag, { accessToken: bakeries }),
      () => client.listBrands('company-9999', {}, { accessToken: acme }),
    ];
    for (const call of calls) {
      expect(await failure(call(), BetaProviderError)).toMatchObject({
        status: 403,
        code: 'FORBIDDEN',
        retryable: false,
      });
    }
    // Its own company's path does not reach another company's brand either.
    expect(
      await failure(client.getBrand(BAKERIES, created.id, { accessToken: bakeries }), BetaProviderError),
    ).toMatchObject({
      status: 404,
    });

    const none = await brandRequest('GET', `orgs/${ACME}/brands`);
    expect({ status: none.status, body: none.body, challenge: none.headers.get('www-authenticate') }).toEqual({
      status: 401,
      body: { code: 'UNAUTHORIZED', message: expect.any(String), context: 'Authorization', details: [] },
      challenge: 'Bearer realm="beta-sandbox"',
    });
    expect(
      await failure(client.listBrands(ACME, {}, { accessToken: 'sandbox-access-token' }), BetaProviderError),
    ).toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
      message: 'The access token is not valid.',
    });
    expect((await control.state()).brands.map((brand) => brand.brandDetails)).toEqual([details()]);
  });

  it('lets an app token read any company but write none', async () => {
    const created = await client.createBrand(ACME, details(), { accessToken: acme });
    const app = (await oauth.clientCredentials()).access_token;
    expect((await client.getBrand(ACME, created.id, { accessToken: app })).id).toBe(created.id);
    expect((await client.listBrands(ACME, {}, { accessToken: app })).brands).toHaveLength(1);
    expect((await client.listBrands(BAKERIES, {}, { accessToken: app })).brands).toEqual([]);
    expect(await failure(client.listBrands('company-9999', {}, { accessToken: app }), BetaProviderError)).toMatchObject(
      {
        status: 404,
        code: 'NOT_FOUND',
        context: 'orgs/company-9999',
      },
    );
    for (const call of [
      () => client.createBrand(ACME, details(), { accessToken: app }),
      () => client.replaceBrand(ACME, created.id, details(), created.etag, { accessToken: app }),
      () => client.deleteBrand(ACME, created.id, created.etag, { accessToken: app }),
    ]) {
      expect(await failure(call(), BetaProviderError)).toMatchObject({
        status: 403,
        code: 'FORBIDDEN',
        message: 'An app token may read brands but not write them.',
      });
    }
    expect((await control.state()).brands).toHaveLength(1);
  });

  it('takes the token from the client options when a call names none, asked before every call', async () => {
    const tokens = [acme, bakeries];
    const rotating = createBetaClient({ baseUrl: `${sandbox.url}/`, accessToken: () => Promise.resolve(tokens.shift()!) });
    expect((await rotating.createBrand(ACME, details())).companyId).toBe(ACME);
    expect((await rotating.createBrand(BAKERIES, details())).companyId).toBe(BAKERIES);
  });
});

describe('scripted failures and retryability', () => {
  let acme: string;
  beforeEach(async () => {
    acme = (await connect(ACME)).access_token;
  });

  it('marks 429 (with Retry-After), 5xx and dropped connections retryable, 4xx not', async () => {
    const cases: [number, Record<string, unknown>][] = [
      [429, { status: 429, code: 'RATE_LIMITED', retryable: true, retryAfterSeconds: 1 }],
      [500, { status: 500, code: 'INTERNAL_ERROR', retryable: true }],
      [503, { status: 503, code: 'SERVICE_UNAVAILABLE', retryable: true }],
      [0, { status: 0, code: 'NETWORK_ERROR', retryable: true }],
      [400, { status: 400, code: 'VALIDATION_ERROR', retryable: false }],
      [404, { status: 404, code: 'NOT_FOUND', retryable: false }],
    ];
    for (const [status, expected] of cases) {
      await control.fail({ count: 1, status, method: 'GET' });
      expect(await failure(client.listBrands(ACME, {}, { accessToken: acme }), BetaProviderError)).toMatchObject(
        expected,
      );
    }
    expect((await client.listBrands(ACME, {}, { accessToken: acme })).brands).toEqual([]);
    const state = await control.state();
    expect(state.calls).toEqual({
      'brand-create': 0,
      'brand-get': 0,
      'brand-replace': 0,
      'brand-delete': 0,
      'brand-list': 7,
    });
    expect(state.failures).toEqual([]);
  });

  it('matches failures by method and path, counts them down, and a before failure has no effect', async () => {
    await control.fail({ count: 2, status: 503, method: 'POST', pathContains: `/orgs/${ACME}/brands` });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      expect(
        await failure(client.createBrand(ACME, details(), { accessToken: acme }), BetaProviderError),
      ).toMatchObject({
        status: 503,
        retryable: true,
      });
    }
    expect((await control.state()).brands).toEqual([]);
    expect((await client.createBrand(ACME, details(), { accessToken: acme })).state).toBe('SUBMITTED');
    expect((await control.state()).calls['brand-create']).toBe(3);
  });

  it('an after failure lets the write take effect and loses its answer', async () => {
    await control.fail({ count: 1, status: 0, method: 'POST', when: 'after' });
    expect(await failure(client.createBrand(ACME, details(), { accessToken: acme }), BetaProviderError)).toMatchObject({
      status: 0,
      code: 'NETWORK_ERROR',
      retryable: true,
    });
    const { brands } = await client.listBrands(ACME, {}, { accessToken: acme });
    expect(brands).toHaveLength(1);
    // The lost answer's etag is still current: a replace with the one read works.
    await control.fail({ count: 1, status: 500, method: 'PUT', when: 'after' });
    await failure(
      client.replaceBrand(ACME, brands[0]!.id, details(), brands[0]!.etag, { accessToken: acme }),
      BetaProviderError,
    );
    const reread = await client.getBrand(ACME, brands[0]!.id, { accessToken: acme });
    expect(reread.etag).not.toBe(brands[0]!.etag);
  });

  it('times out on configured latency, and a caller may cancel', async () => {
    await control.configure({ latencyMs: 2_000 });
    const impatient = createBetaClient({ baseUrl: sandbox.url, accessToken: () => acme, timeoutMs: 50 });
    expect(await failure(impatient.listBrands(ACME), BetaProviderError)).toMatchObject({
      status: 0,
      code: 'TIMEOUT',
      retryable: true,
    });
    const controller = new AbortController();
    const call = client.listBrands(ACME, {}, { accessToken: acme, signal: controller.signal });
    controller.abort();
    expect(await failure(call, BetaProviderError)).toMatchObject({ code: 'CANCELLED', retryable: true });
    await control.configure({ latencyMs: 0 });
  });

  it('holds matching calls for a scripted delay (counted as held): a create held past the client’s timeout still takes effect, once', async () => {
    const until = async (done: (state: Awaited<ReturnType<typeof control.state>>) => boolean) => {
      for (;;) {
        const state = await control.state();
        if (done(state)) return state;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await control.fail({ count: 1, delayMs: 1_000, method: 'POST', pathContains: `/orgs/${ACME}/brands` });
    const impatient = createBetaClient({ baseUrl: sandbox.url, accessToken: () => acme, timeoutMs: 50 });
    const timedOut = failure(impatient.createBrand(ACME, details(), { requestId: 'held-1' }), BetaProviderError);
    // Taken as the call arrives (a call of an earlier test may be held too); a read meanwhile is not held.
    await until((state) => state.held >= 1 && state.failures.length === 0);
    expect((await client.listBrands(ACME, {}, { accessToken: acme })).brands).toEqual([]);
    expect(await timedOut).toMatchObject({ status: 0, code: 'TIMEOUT', retryable: true });
    const [made] = (await until((state) => state.brands.length === 1)).brands;
    // The retry with the same requestId answers the brand the held call made.
    expect((await client.createBrand(ACME, details(), { accessToken: acme, requestId: 'held-1' })).id).toBe(made!.id);
    expect((await control.state()).brands).toHaveLength(1);

    // With a status, the delay comes first and the failure has no effect; the token endpoint takes aimed delays too.
    await control.fail({ count: 1, status: 503, delayMs: 100, method: 'POST', pathContains: `/orgs/${ACME}/brands` });
    expect(await failure(client.createBrand(ACME, details(), { accessToken: acme }), BetaProviderError)).toMatchObject({ status: 503 });
    await control.fail({ count: 1, delayMs: 100, pathContains: '/oauth/token' });
    expect((await oauth.clientCredentials()).token_type).toBe('Bearer');
    expect((await control.state()).failures).toEqual([]);
    expect((await control.state()).brands).toHaveLength(1);
    await expect(control.fail({ count: 1 })).rejects.toThrow(/HTTP 400/);
  });

  it('hits the token endpoint only with failures aimed at it, in OAuth shape', async () => {
    await control.fail({ count: 1, status: 500 });
    // A failure aimed at no path is for the brand API: the token endpoint does not take it.
    expect((await oauth.clientCredentials()).token_type).toBe('Bearer');
    expect((await control.state()).failures).toHaveLength(1);
    await failure(client.listBrands(ACME, {}, { accessToken: acme }), BetaProviderError);

    const code = await consent();
    await control.fail({ count: 1, status: 503, pathContains: '/oauth/token' });
    expect(await failure(oauth.exchangeCode({ code, redirectUri: REDIRECT }), OAuthError)).toMatchObject({
      status: 503,
      error: 'temporarily_unavailable',
      retryable: true,
    });
    // The failure came before the exchange: the code is still good.
    expect((await oauth.exchangeCode({ code, redirectUri: REDIRECT })).company_id).toBe(ACME);

    await control.fail({ count: 1, status: 0, pathContains: '/oauth/token' });
    expect(await failure(oauth.clientCredentials(), OAuthError)).toMatchObject({
      status: 0,
      error: 'network_error',
      retryable: true,
    });
  });

  it('refuses malformed controls with 400 naming the field', async () => {
    for (const [call, context] of [
      [() => control.fail({ count: 0, status: 500 }), 'count'],
      [() => control.fail({ count: 1, status: 302 }), 'status'],
      [() => control.configure({ validationMs: -1 }), 'validationMs'],
      [() => control.configure({ unknown: 1 } as never), 'body'],
      [() => control.addCompany({ id: ACME, name: 'Again' }), 'id'],
    ] as const) {
      await expect(call()).rejects.toThrow(new RegExp(`HTTP (400|409) .*"context":"${context}"`));
    }
  });
});

describe('persistence in a state file', () => {
  const restarts = sandboxRestarts('beta-sandbox-', (stateFile, logged?: string[]) =>
    startBetaSandbox({
      port: 0,
      clock: () => now,
      stateFile,
      ...(logged ? { logger: { level: 'warn', stream: { write: (line: string) => void logged.push(line) } } } : {}),
    }),
  );

  async function start(stateFile: string, logged?: string[]) {
    const started = await restarts.start(stateFile, logged);
    return {
      url: started.url,
      close: () => started.close(),
      oauth: createBetaOAuthClient({ baseUrl: started.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }),
      client: createBetaClient({ baseUrl: started.url, accessToken: () => '' }),
      control: createBetaSandboxControl(started.url),
    };
  }

  it('keeps companies, brands, codes and tokens (hashed) across a close and a new start', async () => {
    const stateFile = restarts.file('nested', 'beta.json');
    const first = await start(stateFile);
    await first.control.addCompany({ id: 'company-3003', name: 'Gamma Grocers' });
    await first.control.configure({ validationMs: 10_000 });
    const tokens = await connect('company-3003', first.oauth);
    const app = await first.oauth.clientCredentials();
    const pending = await consent(ACME, first.oauth);
    const brand = await first.client.createBrand('company-3003', details(), { accessToken: tokens.access_token });
    await first.close();
    const text = await readFile(stateFile, 'utf8');
    for (const secret of [tokens.access_token, tokens.refresh_token, app.access_token, pending]) {
      expect(text).not.toContain(secret);
    }

    const second = await start(stateFile);
    const state = await second.control.state();
    expect(state.companies.map((company) => company.id)).toEqual([ACME, BAKERIES, 'company-3003']);
    expect(state.oauth).toMatchObject({
      accessTokens: { active: 1 },
      appTokens: { active: 1 },
      refreshTokens: { active: 1 },
      codes: { pending: 1 },
    });
    // Configuration is not kept; the brand's validation time, set when it was submitted, is.
    expect(state.config.validationMs).toBe(0);
    const kept = await second.client.getBrand('company-3003', brand.id, { accessToken: tokens.access_token });
    expect(kept).toMatchObject({ state: 'SUBMITTED', etag: brand.etag, brandDetails: details() });
    now += 10_000;
    expect((await second.client.getBrand('company-3003', brand.id, { accessToken: app.access_token })).state).toBe(
      'PUBLISHED',
    );
    await second.client.replaceBrand('company-3003', brand.id, details(), brand.etag, {
      accessToken: tokens.access_token,
    });
    expect((await second.oauth.refresh(tokens.refresh_token)).company_id).toBe('company-3003');
    expect((await second.oauth.exchangeCode({ code: pending, redirectUri: REDIRECT })).company_id).toBe(ACME);
    await second.close();
  });

  it('starts fresh, with a warning, from a file it would not have written', async () => {
    const stateFile = restarts.file('orphans.json');
    const brand = {
      seq: 1,
      id: '42',
      companyId: 'company-ghost',
      details: details(),
      createdAt: START,
      submittedAt: START,
      decidesAt: START,
      reports: [],
      etag: 'abc',
    };
    await writeFile(
      stateFile,
      JSON.stringify({
        version: 1,
        nextSeq: 2,
        companies: [],
        brands: [brand],
        oauth: { codes: [], refreshTokens: [], accessTokens: [] },
      }),
    );
    const lines: string[] = [];
    const started = await start(stateFile, lines);
    const state = await started.control.state();
    expect(state.companies.map((company) => company.id)).toEqual([ACME, BAKERIES]);
    expect(state.brands).toEqual([]);
    expect(lines.map((line) => JSON.parse(line) as { msg: string })).toEqual([
      expect.objectContaining({ msg: expect.stringContaining('malformed') }),
    ]);
    await started.close();
  });
});
