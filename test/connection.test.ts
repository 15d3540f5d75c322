import { createHash } from 'node:crypto';
import { expectSucceeded, waitForWork } from './support/async-work';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { TestClock } from './support/clock';
import { formOf, submit, visit } from './support/browser';
import { BUSINESS_SCOPE, connect, connectAlice, generateUrl, importEnded, runConsent } from './support/consent';
import { openAdmin } from './support/faults';
import { graphql, http } from './support/http';
import { eventually, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Connecting alpha accounts through the consent flow, driven as a person's browser and a caller's backend would:
 * every redirect followed hop by hop, the sandbox's consent form read and submitted, and each documented parameter
 * and error value checked where it lands.
 */

const clock = new TestClock();
let t: TestStack;
let org: OrganizationFixture;

beforeAll(async () => {
  t = await startTestStack({}, { clock });
  org = await createOrganizationFixture(t.em(), { accounts: 0 });
});
beforeEach(async () => {
  clock.release();
  await sandboxOf(t.url).reset();
});
afterAll(() => t?.close());

const query = (url: string) => new URL(url).searchParams;

/** A consent as Alice returning to `redirectUrl`, then her account 1001 connected and imported: its id here. */
async function connectAliceTo(token: string, redirectUrl: string): Promise<string> {
  const consent = await runConsent(t.url, token, { redirectUrl, state: `alice-${redirectUrl}` });
  const connected = await connect(t.url, token, consent.landed, '1001');
  const accountId = query(connected.body.url).get('alpha_profile_id')!;
  expect((await importEnded(t.url, token, accountId)).syncStatus).toBe('SUCCEEDED');
  return accountId;
}

async function accountsOf(token: string): Promise<{ id: string; name: string }[]> {
  const answer = await http(t.url, 'GET', '/organization/accounts', { token });
  return answer.status === 200 ? answer.body.payload : [];
}

async function sql<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
  return await t.em().getConnection().execute<T[]>(text, values);
}

describe('the consent flow, as a browser follows it', () => {
  it('generate-url, consent, callback, connect: the account, its locations and reviews arrive; tokens stay sealed', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    const generated = await generateUrl(t.url, fixture.token, { redirect_url: 'https://app.example/return?from=test', state: 'caller-state-1' });
    expect(generated.status).toBe(200);
    expect(generated.body).toEqual({ success: true, url: expect.any(String) });
    const authorize = new URL(generated.body.url);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${t.url}/sandbox/alpha/oauth/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: 'code',
      redirect_uri: `${t.url}/oauth/alpha/callback`,
      access_type: 'offline',
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    // Our state, not the caller's, goes to the provider; the scopes are the three permissions with offline access.
    expect(authorize.searchParams.get('state')).not.toBe('caller-state-1');
    expect(authorize.searchParams.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['email', 'profile', BUSINESS_SCOPE]));

    const consent = await runConsent(t.url, fixture.token, { redirectUrl: 'https://app.example/return?from=test', state: 'caller-state-1' });
    expect(consent.toCallback.location).toMatch(new RegExp(`^${t.url}/oauth/alpha/callback\\?`));
    expect(consent.fromCallback.status).toBe(302);
    const landing = new URL(consent.fromCallback.location!);
    expect(`${landing.origin}${landing.pathname}`).toBe('https://app.example/return');
    expect(Object.fromEntries(landing.searchParams)).toEqual({
      from: 'test',
      uid: 'null',
      alphaId: 'alpha-user-alice',
      billing_id: fixture.organization.id,
      token_refreshed: 'true',
      external_api: 'true',
      state: 'caller-state-1',
    });

    const connected = await connect(t.url, fixture.token, consent.landed, '1001');
    expect(connected.status).toBe(200);
    expect(connected.body).toEqual({ url: expect.any(String), external_api: true });
    const outcome = query(connected.body.url);
    expect(Object.fromEntries(outcome)).toEqual({
      from: 'test',
      status: 'success',
      alpha_profile_id: expect.any(String),
      business_name: 'Alice Bakery Group',
      state: 'caller-state-1',
    });
    const accountId = outcome.get('alpha_profile_id')!;
    expect(await accountsOf(fixture.token)).toEqual([expect.objectContaining({ id: accountId, name: 'Alice Bakery Group' })]);

    const ended = await importEnded(t.url, fixture.token, accountId);
    expect(ended).toEqual({ syncStatus: 'SUCCEEDED', syncProgress: { locations: 2, reviews: 7 }, syncError: null });
    // The import is listed as one unit of work about the account, finished.
    const imports = await waitForWork(t.url, fixture.token, 'ACCOUNT_IMPORT', accountId);
    expect(imports).toHaveLength(1);
    expect(imports[0]).toMatchObject({ kind: 'ACCOUNT_IMPORT', subjectId: accountId, accountId, organizationId: fixture.organization.id, retryable: false });
    expectSucceeded(imports[0]!);
    // Both of its locations imported: the whole way.
    expect(imports[0]!.progress).toBe(1);
    const locations = await http(t.url, 'GET', `/location?account_id=${accountId}`, { token: fixture.token });
    expect(locations.body.data.map((location: { reference_id: string; connected: boolean; alpha_location_name: string }) => [location.reference_id, location.connected, location.alpha_location_name]).sort()).toEqual([
      ['alice-1', true, 'accounts/1001/locations/10011'],
      ['alice-2', true, 'accounts/1001/locations/10012'],
    ]);
    const first = locations.body.data.find((location: { reference_id: string }) => location.reference_id === 'alice-1');
    const reviews = await graphql(t.url, `query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l) { totalCount edges { node { name starRating reviewReplyState } } } }`, {
      token: fixture.token,
      variables: { a: accountId, l: first.id },
    });
    expect(reviews.body.data.reviews.totalCount).toBe(6);

    // The subscription counts the organization's connected locations.
    expect(await sql('select quantity from billing_subscription where organization_id = ?', [fixture.organization.id])).toEqual([{ quantity: 2 }]);
    // The provider's tokens are sealed: nothing in the row reads as a token.
    const [stored] = await sql<{ access_token: string; refresh_token: string }>('select access_token, refresh_token from alpha_identity where organization_id = ?', [fixture.organization.id]);
    expect(stored!.access_token).toMatch(/^v1\./);
    expect(stored!.refresh_token).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toMatch(/ya29\./);
    const [session] = await sql<{ code_verifier: string; state_hash: string }>('select code_verifier, state_hash from oauth_session where organization_id = ? limit 1', [fixture.organization.id]);
    expect(session!.code_verifier).toMatch(/^v1\./);
    expect(session!.state_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('sends a person who declines back with error=access_denied and the state', async () => {
    const consent = await runConsent(t.url, org.token, { state: 'declined', decline: true });
    expect(Object.fromEntries(consent.landed)).toEqual({ error: 'access_denied', state: 'declined' });
  });

  it('answers invalid_grant when the business permission was not granted, and gives the tokens back', async () => {
    const consent = await runConsent(t.url, org.token, { state: 'narrow', grant: (scopes) => scopes.filter((scope) => scope !== BUSINESS_SCOPE) });
    expect(Object.fromEntries(consent.landed)).toEqual({ error: 'invalid_grant', state: 'narrow' });
    // Nothing to connect with.
    const refused = await connect(t.url, org.token, new URLSearchParams({ alphaId: 'alpha-user-alice', billing_id: org.organization.id }), '1001', 'narrow');
    expect(refused.status).toBe(404);
  });

  it('takes a state once: the same callback again lands on invalid_state', async () => {
    const consent = await runConsent(t.url, org.token, { state: 'once' });
    expect(consent.landed.get('alphaId')).toBe('alpha-user-alice');
    const replayed = await visit(consent.toCallback.location!);
    expect(replayed.status).toBe(302);
    expect(Object.fromEntries(query(replayed.location!))).toEqual({ error: 'invalid_state', state: 'once' });
  });

  it('refuses a state older than 15 minutes with invalid_state', async () => {
    clock.hold();
    const generated = await generateUrl(t.url, org.token, { redirect_url: 'https://app.example/return', state: 'late' });
    const page = await visit(generated.body.url);
    expect(page.status).toBe(200);
    const toCallback = await submit(formOf(page.body, generated.body.url), { button: ['decision', 'approve'] });
    clock.advance(15 * 60 * 1000 + 1000);
    const fromCallback = await visit(toCallback.location!);
    expect(Object.fromEntries(query(fromCallback.location!))).toEqual({ error: 'invalid_state', state: 'late' });
  });

  it('refuses a tampered state without redirecting anywhere, and never takes a redirect target from the callback', async () => {
    const consent = await runConsent(t.url, org.token, { state: 'tamper' });
    const callback = new URL(consent.toCallback.location!);
    const tampered = new URL(callback);
    tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`);
    const refused = await visit(tampered.toString());
    expect(refused.status).toBe(400);
    expect(refused.location).toBeUndefined();
    expect(JSON.parse(refused.body)).toEqual({ error: 400, message: expect.stringMatching(/unknown/) });

    const fresh = await generateUrl(t.url, org.token, { redirect_url: 'https://app.example/return', state: 'steer' });
    const page = await visit(fresh.body.url);
    const toCallback = await submit(formOf(page.body, fresh.body.url), { button: ['decision', 'approve'] });
    const steered = new URL(toCallback.location!);
    steered.searchParams.set('redirect_url', 'https://evil.example/');
    steered.searchParams.set('redirect_uri', 'https://evil.example/');
    const landed = await visit(steered.toString());
    expect(new URL(landed.location!).origin).toBe('https://app.example');
  });

  it('answers oauth_error when the code exchange fails at the provider', async () => {
    await sandboxOf(t.url).fail({ count: 1, status: 500, pathContains: '/oauth/token' });
    const consent = await runConsent(t.url, org.token, { state: 'broken' });
    expect(Object.fromEntries(consent.landed)).toEqual({ error: 'oauth_error', state: 'broken' });
  });
});

describe('the callbacks’ refusals, as a person’s browser sees them', () => {
  /** What browsers send when they open a page. */
  const BROWSERS = {
    Chromium: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
    Firefox: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    Safari: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    'a bare text/html': 'text/html',
  };
  const JSON_CLIENTS = {
    'no Accept': undefined,
    'fetch’s default': '*/*',
    'application/json': 'application/json',
    'JSON preferred to HTML': 'application/json, text/html;q=0.9',
    'HTML refused': 'text/html;q=0, */*',
    'HTML no better than JSON': 'text/html, application/json',
  };

  /** A callback whose state names no consent: the tampered or never-issued one. */
  const unknownState = (provider: 'alpha' | 'beta') => `${t.url}/oauth/${provider}/callback?state=never-issued-${provider}&code=whatever`;

  /** The page's checks that hold for every refusal: self-contained, locked down, accessible, varying with Accept. */
  function expectPersonPage(answer: Response, html: string, status: number) {
    expect(answer.status).toBe(status);
    expect(answer.headers.get('location')).toBeNull();
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('vary')).toMatch(/(^|, *)Accept($|,)/i);
    const policy = answer.headers.get('content-security-policy')!;
    expect(policy).toMatch(/^default-src 'none'; /);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toMatch(/unsafe|https?:|\*/);
    // Its one style is the one the policy allows by hash; nothing else loads or runs.
    const style = /<style>([^<]*)<\/style>/.exec(html)![1]!;
    expect(policy).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(html).not.toMatch(/<script|<img|<link|<iframe|<form|\bsrc=|\bhref=|\bstyle=|\bon[a-z]+=/i);
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(html).toMatch(/<meta name="viewport"/);
    expect(html).toMatch(/<title>[^<]+<\/title>/);
    expect(html).toMatch(/<main>\s*<h1>[^<]+<\/h1>/);
    expect(html).toContain(`Error ${status}.`);
  }

  it.each(Object.entries(BROWSERS))('answers %s an HTML page that says what happened and what to do, with the same 400', async (_browser, accept) => {
    for (const provider of ['alpha', 'beta'] as const) {
      const answer = await fetch(unknownState(provider), { redirect: 'manual', headers: { accept } });
      const html = await answer.text();
      expectPersonPage(answer, html, 400);
      expect(html).toContain('<h1>This link cannot connect your account</h1>');
      expect(html).toContain('This consent is unknown to the service: start again from your application.');
      expect(html).toContain('start connecting your account again');
      expect(html).toContain(`Reference for support: ${answer.headers.get('x-request-id')}`);
    }
  });

  it.each(Object.entries(JSON_CLIENTS))('answers %s the documented JSON body, exactly', async (_client, accept) => {
    for (const provider of ['alpha', 'beta'] as const) {
      const answer = await fetch(unknownState(provider), { redirect: 'manual', headers: accept ? { accept } : {} });
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(answer.headers.get('vary')).toMatch(/(^|, *)Accept($|,)/i);
      expect(await answer.json()).toEqual({ error: 400, message: 'This consent is unknown to the service: start again from your application.' });
    }
  });

  it('escapes what it shows: a request id chosen by the caller stays text', async () => {
    const chosen = `<script>alert('x')</script>&"<b>`;
    const answer = await fetch(unknownState('alpha'), { redirect: 'manual', headers: { accept: BROWSERS.Firefox, 'x-request-id': chosen } });
    const html = await answer.text();
    expect(answer.headers.get('x-request-id')).toBe(chosen);
    expectPersonPage(answer, html, 400);
    expect(html).toContain('Reference for support: &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;&lt;b&gt;');
    expect(html).not.toContain('<b>');
  });

  it('keeps redirecting a browser that completes a consent, and answers a page when the database is lost mid-callback (503, Retry-After)', async () => {
    const consent = await runConsent(t.url, org.token, { state: 'page' });
    expect(consent.fromCallback.status).toBe(302);
    const fresh = await generateUrl(t.url, org.token, { redirect_url: 'https://app.example/return', state: 'lost' });
    const page = await visit(fresh.body.url);
    const toCallback = await submit(formOf(page.body, fresh.body.url), { button: ['decision', 'approve'] });

    // The callback waits for the consent sessions, which a session of the test holds; its backend is then ended.
    const locker = await openAdmin(t.databaseUrl, 'lg-test-locker');
    const admin = await openAdmin(t.databaseUrl, 'lg-test-admin');
    try {
      const { rows } = await locker.query<{ pid: number }>('select pg_backend_pid() as pid');
      await locker.query('begin');
      await locker.query('lock table oauth_session in access exclusive mode');
      const answered = fetch(toCallback.location!, { redirect: 'manual', headers: { accept: BROWSERS.Firefox } });
      const blocked = await eventually(async () => {
        const found = await admin.query<{ pid: number }>('select pid from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))', [rows[0]!.pid]);
        return found.rows.length > 0 ? found.rows : undefined;
      }, 30000, 'the callback to wait for the consent sessions');
      await admin.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [blocked.map((row) => row.pid)]);
      await locker.query('rollback');
      const answer = await answered;
      const html = await answer.text();
      expectPersonPage(answer, html, 503);
      expect(answer.headers.get('retry-after')).toEqual(expect.stringMatching(/^\d+$/));
      expect(html).toContain('reload this page');
      expect(html).not.toMatch(/terminat|administrator|ECONN|select |pg_/i);
    } finally {
      await locker.end();
      await admin.end();
    }
    // The session was never taken: the same callback, once the database is back, completes the consent.
    const again = await visit(toCallback.location!);
    expect(Object.fromEntries(query(again.location!))).toMatchObject({ alphaId: 'alpha-user-alice', state: 'lost' });
  });
});

describe('redirect_url rules', () => {
  it.each([
    ['a scheme-relative URL', '//evil.example/return'],
    ['credentials before the host', 'https://app.example@evil.example/return'],
    ['credentials', 'https://user:secret@app.example/return'],
    ['a fragment', 'https://app.example/return#token'],
    ['an empty fragment', 'https://app.example/return#'],
    ['javascript:', 'javascript:alert(document.cookie)'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['a relative path', '/return'],
    ['plain http outside development', 'http://app.example/return'],
    ['a backslash', 'https:\\\\evil.example/return'],
    ['a backslash before @', 'https://app.example\\@evil.example/'],
    ['leading whitespace', ' https://app.example/return'],
    ['a tab in the host', 'https://app.exa\tmple/return'],
    ['ftp', 'ftp://app.example/return'],
    ['no host', 'https:///return'],
  ])('refuses %s', async (_case, redirectUrl) => {
    const answer = await generateUrl(t.url, org.token, { redirect_url: redirectUrl, state: 's' });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 400, message: expect.stringMatching(/^redirect_url /) });
  });

  it('requires redirect_url and a token', async () => {
    expect((await generateUrl(t.url, org.token, { state: 's' })).status).toBe(400);
    expect((await http(t.url, 'POST', '/oauth/alpha/generate-url', { body: { redirect_url: 'https://app.example/' } })).status).toBe(401);
  });
});

describe('connect', () => {
  it('answers ACCOUNT_ALREADY_CONNECTED for an account the organization has', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    await connectAlice(t.url, fixture.token);
    const again = await runConsent(t.url, fixture.token, { state: 'again' });
    const answer = await connect(t.url, fixture.token, again.landed, 'accounts/1001');
    expect(answer.status).toBe(200);
    expect(Object.fromEntries(query(answer.body.url))).toEqual({ status: 'error', error_message: 'ACCOUNT_ALREADY_CONNECTED', state: 'again' });
    expect(await accountsOf(fixture.token)).toHaveLength(1);
  });

  it('answers NO_LOCATION_FOUND for an account without locations, and connects nothing', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    const consent = await runConsent(t.url, fixture.token, { state: 'bob', person: 'alpha-user-bob' });
    expect(consent.landed.get('alphaId')).toBe('alpha-user-bob');
    const answer = await connect(t.url, fixture.token, consent.landed, '2002');
    expect(Object.fromEntries(query(answer.body.url))).toEqual({ status: 'error', error_message: 'NO_LOCATION_FOUND', state: 'bob' });
    expect(await accountsOf(fixture.token)).toEqual([]);
  });

  it('answers the fixed account-information text when the provider will not show the account', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    const consent = await runConsent(t.url, fixture.token, { state: 'not-hers' });
    // Carol's account, asked for with Alice's consent: the provider refuses.
    const answer = await connect(t.url, fixture.token, consent.landed, '3003');
    expect(Object.fromEntries(query(answer.body.url))).toEqual({
      status: 'error',
      error_message: 'Failed to retrieve account information from the alpha provider',
      state: 'not-hers',
    });
  });

  it('answers TOO_MANY_REQUESTS while three imports of the organization are in progress', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 3 });
    await sql(`update account set sync_status = 'RUNNING' where organization_id = ?`, [fixture.organization.id]);
    const consent = await runConsent(t.url, fixture.token, { state: 'busy' });
    const answer = await connect(t.url, fixture.token, consent.landed, '1001');
    expect(Object.fromEntries(query(answer.body.url))).toEqual({ status: 'error', error_message: 'TOO_MANY_REQUESTS', state: 'busy' });
  });

  it('refuses what cannot be a connection in the generic shape', async () => {
    const consent = await runConsent(t.url, org.token, { state: 'shape' });
    const base = { uid: 'null', alphaId: 'alpha-user-alice', id: '1001', billing_id: org.organization.id, state: 'shape' };
    const notTrue = await http(t.url, 'POST', `/connect/account?${new URLSearchParams({ ...base, external_api: 'false' })}`, { token: org.token });
    expect(notTrue.status).toBe(400);
    expect(notTrue.body).toEqual({ error: 400, message: 'external_api must be true' });
    const other = await createOrganizationFixture(t.em(), { accounts: 0 });
    const foreign = await http(t.url, 'POST', `/connect/account?${new URLSearchParams({ ...base, external_api: 'true', billing_id: other.organization.id })}`, { token: org.token });
    expect(foreign.status).toBe(400);
    // Another organization cannot use this consent.
    const stolen = await http(t.url, 'POST', `/connect/account?${new URLSearchParams({ ...base, external_api: 'true', billing_id: other.organization.id })}`, { token: other.token });
    expect(stolen.status).toBe(404);
    expect(consent.landed.get('state')).toBe('shape');
  });
});

describe('a consent whose access token is about to lapse', () => {
  it('is refreshed before connect uses it, keeping its refresh token; a refresh the provider refuses asks for a new consent', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    const sandbox = sandboxOf(t.url);
    const consent = await runConsent(t.url, fixture.token, { state: 'dana', person: 'alpha-user-carol' });
    const tokens = async () =>
      (await sql<{ access_token: string; refresh_token: string }>('select access_token, refresh_token from alpha_identity where organization_id = ?', [fixture.organization.id]))[0]!;
    const before = await tokens();
    const issued = (await sandbox.state()).oauth;
    // Inside the refresh margin (60 s): the next call refreshes first instead of starting with a token about to lapse.
    const lapseSoon = () => sql(`update alpha_identity set access_token_expires_at = now() + interval '30 seconds' where organization_id = ?`, [fixture.organization.id]);
    await lapseSoon();

    const connected = await connect(t.url, fixture.token, consent.landed, '3003');
    expect(query(connected.body.url).get('status')).toBe('success');
    const accountId = query(connected.body.url).get('alpha_profile_id')!;
    expect((await importEnded(t.url, fixture.token, accountId)).syncStatus).toBe('SUCCEEDED');
    const after = await tokens();
    expect(after.access_token).not.toBe(before.access_token);
    // One new access token from the refresh grant; no new refresh token: the one of the consent is kept.
    const refreshed = (await sandbox.state()).oauth;
    expect(refreshed.accessTokens.issued).toBeGreaterThan(issued.accessTokens.issued);
    expect(refreshed.refreshTokens.issued).toBe(issued.refreshTokens.issued);
    expect(refreshed.refreshTokens.active).toBe(issued.refreshTokens.active);

    // A second consent to connect another account; then the provider forgets every grant: the refresh is refused,
    // and the caller is told to consent again.
    const second = await runConsent(t.url, fixture.token, { state: 'dana-2', person: 'alpha-user-carol' });
    await sandbox.reset();
    await lapseSoon();
    const refused = await connect(t.url, fixture.token, second.landed, '3004');
    expect(Object.fromEntries(query(refused.body.url))).toEqual({
      status: 'error',
      error_message: 'The alpha provider no longer accepts this consent: reconnect the account',
      state: 'dana-2',
    });
    expect((await accountsOf(fixture.token)).map(({ id }) => id)).toEqual([accountId]);
  });
});

describe('disconnect and reconnect', () => {
  it('disconnects with its four effects, after which the account cannot be reconnected', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    const accountId = await connectAlice(t.url, fixture.token);
    const answer = await http(t.url, 'DELETE', `/disconnect/account?${new URLSearchParams({ uid: 'null', alphaId: accountId, id: 'alpha-user-alice', external_api: 'true', state: 'bye' })}`, {
      token: fixture.token,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ url: expect.any(String), external_api: true });
    expect(Object.fromEntries(query(answer.body.url))).toEqual({ status: 'success_disconnect', state: 'bye', account_id: accountId });
    // Out of the organization, with its locations; the person's tokens removed (and revoked); the subscription at 0.
    expect(await accountsOf(fixture.token)).toEqual([]);
    expect(await sql('select id from location where account_id = ?', [accountId])).toEqual([]);
    expect(await sql('select id from alpha_identity where organization_id = ?', [fixture.organization.id])).toEqual([]);
    expect(await sql('select quantity from billing_subscription where organization_id = ?', [fixture.organization.id])).toEqual([{ quantity: 0 }]);
    const reconnect = await http(t.url, 'POST', `/reconnect/account?${new URLSearchParams({ alphaId: 'alpha-user-alice', id: accountId, external_api: 'true', state: 'back' })}`, {
      token: fixture.token,
    });
    // The person's consent went with the account: the organization's latest consent gives the url's base.
    expect(reconnect.status).toBe(200);
    expect(reconnect.body.url.split('?')[0]).toBe('https://app.example/return');
    expect(Object.fromEntries(query(reconnect.body.url))).toEqual({ status: 'error', error_message: 'NotFoundException', state: 'back' });
    // A new consent connects it again.
    expect(await connectAlice(t.url, fixture.token)).not.toBe(accountId);
  });

  it('reconnects with the refresh token and re-syncs; NotFoundException for a disconnected account or a missing refresh token', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    const consent = await runConsent(t.url, fixture.token, { state: 'carol', person: 'alpha-user-carol' });
    const first = query((await connect(t.url, fixture.token, consent.landed, '3003')).body.url).get('alpha_profile_id')!;
    await importEnded(t.url, fixture.token, first);
    const again = await runConsent(t.url, fixture.token, { state: 'carol-2', person: 'alpha-user-carol' });
    const second = query((await connect(t.url, fixture.token, again.landed, '3004')).body.url).get('alpha_profile_id')!;
    await importEnded(t.url, fixture.token, second);

    const reconnect = (id: string, state: string) =>
      http(t.url, 'POST', `/reconnect/account?${new URLSearchParams({ uid: 'null', alphaId: 'alpha-user-carol', id, external_api: 'true', state })}`, { token: fixture.token });
    const refreshed = await reconnect(second, 'r1');
    expect(refreshed.status).toBe(200);
    expect(Object.fromEntries(query(refreshed.body.url))).toEqual({ status: 'success_reconnect', state: 'r1', account_id: second });
    expect((await importEnded(t.url, fixture.token, second)).syncStatus).toBe('SUCCEEDED');
    // The re-sync is a second unit of import work about the account, newest first; both finished.
    const imports = await waitForWork(t.url, fixture.token, 'ACCOUNT_IMPORT', second);
    expect(imports).toHaveLength(2);
    expect(imports.every((work) => work.accountId === second)).toBe(true);
    imports.forEach(expectSucceeded);
    expect(Date.parse(imports[0]!.createdAt)).toBeGreaterThan(Date.parse(imports[1]!.createdAt));

    // Disconnecting one of Carol's accounts keeps her consent for the other.
    const disconnected = await http(t.url, 'DELETE', `/disconnect/account?${new URLSearchParams({ alphaId: first, external_api: 'true', state: 'd' })}`, { token: fixture.token });
    expect(query(disconnected.body.url).get('status')).toBe('success_disconnect');
    expect(Object.fromEntries(query((await reconnect(first, 'r2')).body.url))).toEqual({ status: 'error', error_message: 'NotFoundException', state: 'r2' });
    expect(query((await reconnect(second, 'r3')).body.url).get('status')).toBe('success_reconnect');

    // A failure that is not a refused token passes its text on.
    await sandboxOf(t.url).fail({ count: 1, status: 503, pathContains: '/oauth/token' });
    const unavailable = query((await reconnect(second, 'r5')).body.url);
    expect(unavailable.get('status')).toBe('error');
    expect(unavailable.get('error_message')).toMatch(/503|unavailable/i);

    await sql('update alpha_identity set refresh_token = null where organization_id = ?', [fixture.organization.id]);
    expect(Object.fromEntries(query((await reconnect(second, 'r4')).body.url))).toEqual({ status: 'error', error_message: 'NotFoundException', state: 'r4' });
  });
});

describe('which token may do what', () => {
  it('keeps starting a consent and connecting an account to organization tokens: 403 to an account token', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 1 });
    const accountToken = fixture.accounts[0]!.token;
    const refused = { error: 403, message: 'This operation requires an organization token' };
    const generated = await generateUrl(t.url, accountToken, { redirect_url: 'https://app.example/return' });
    expect([generated.status, generated.body]).toEqual([403, refused]);
    // Even with a consent the organization token completed.
    const consent = await runConsent(t.url, fixture.token, { state: 'org-consent' });
    const connected = await connect(t.url, accountToken, consent.landed, '1001');
    expect([connected.status, connected.body]).toEqual([403, refused]);
    const viaGraphQL = await graphql(t.url, 'mutation { generateAlphaConsentUrl(redirectUrl: "https://app.example/") { url } }', { token: accountToken });
    expect(viaGraphQL.body.errors?.[0]).toMatchObject({ extensions: { code: 'ORGANIZATION_TOKEN_REQUIRED' } });
    // Nothing was added: the consent is still there for the organization token.
    expect(await accountsOf(fixture.token)).toHaveLength(1);
    expect(query((await connect(t.url, fixture.token, consent.landed, '1001')).body.url).get('status')).toBe('success');
  });
});

describe('an account token in the flows', () => {
  const flow = (method: string, path: string, token: string, params: Record<string, string>) =>
    http(t.url, method, `${path}?${new URLSearchParams({ external_api: 'true', ...params })}`, { token });

  it('reconnects and disconnects its own account, named by our id or the provider’s; its token then stops at once', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    const accountId = await connectAliceTo(fixture.token, 'https://app.example/own');
    const created = await graphql(t.url, 'mutation ($a: ID!) { createAccountToken(accountId: $a) { token } }', { token: fixture.token, variables: { a: accountId } });
    const token = created.body.data.createAccountToken.token as string;

    for (const id of [accountId, '1001', 'accounts/1001']) {
      const refreshed = await flow('POST', '/reconnect/account', token, { alphaId: 'alpha-user-alice', id, state: 'r' });
      expect(refreshed.body.url).toBe(`https://app.example/own?status=success_reconnect&state=r&account_id=${accountId}`);
      expect((await importEnded(t.url, fixture.token, accountId)).syncStatus).toBe('SUCCEEDED');
    }
    // Its token is cached by now; the disconnect ends it with the account, as a revocation would.
    expect((await http(t.url, 'GET', '/location', { token })).status).toBe(200);
    const disconnected = await flow('DELETE', '/disconnect/account', token, { alphaId: '1001', state: 'd' });
    expect(Object.fromEntries(query(disconnected.body.url))).toEqual({ status: 'success_disconnect', state: 'd', account_id: accountId });
    expect(await accountsOf(fixture.token)).toEqual([]);
    expect((await http(t.url, 'GET', '/location', { token })).status).toBe(401);
  });
});

describe('reconnect for a person who never consented', () => {
  const reconnect = (token: string, alphaId: string, id: string, state: string) =>
    http(t.url, 'POST', `/reconnect/account?${new URLSearchParams({ uid: 'null', alphaId, id, external_api: 'true', state })}`, { token });

  it('answers the documented NotFoundException url on the organization’s latest consent; 404 only without any consent', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 1 });
    const ownAccount = fixture.accounts[0]!;
    // Nothing to build a url on yet: neither a consent nor a person.
    for (const token of [fixture.token, ownAccount.token]) {
      const none = await reconnect(token, 'alpha-user-nobody', ownAccount.account.id, 'n0');
      expect(none.status).toBe(404);
      expect(none.body).toEqual({ error: 404, message: 'Consent not found' });
    }
    // A consent started (never completed) is the organization's latest consent.
    const started = await generateUrl(t.url, fixture.token, { redirect_url: 'https://app.example/started', state: 's' });
    expect(started.status).toBe(200);
    const never = await reconnect(fixture.token, 'alpha-user-nobody', ownAccount.account.id, 'n1');
    expect(never.status).toBe(200);
    expect(never.body).toEqual({ url: 'https://app.example/started?status=error&error_message=NotFoundException&state=n1', external_api: true });

    // A person who consented: their own redirect_url, also for a person who never did, while theirs is the latest.
    const aliceAccount = await connectAliceTo(fixture.token, 'https://app.example/alice');
    const unknownPerson = await reconnect(fixture.token, 'alpha-user-nobody', aliceAccount, 'n2');
    expect(unknownPerson.body.url).toBe('https://app.example/alice?status=error&error_message=NotFoundException&state=n2');
    const later = await generateUrl(t.url, fixture.token, { redirect_url: 'https://app.example/later' });
    expect(later.status).toBe(200);
    expect((await reconnect(fixture.token, 'alpha-user-nobody', aliceAccount, 'n3')).body.url).toBe(
      'https://app.example/later?status=error&error_message=NotFoundException&state=n3',
    );
    // The person's own consent wins over the organization's latest.
    expect((await reconnect(fixture.token, 'alpha-user-alice', 'accounts/9999', 'n4')).body.url).toBe(
      'https://app.example/alice?status=error&error_message=NotFoundException&state=n4',
    );

    // An account token whose account was not connected through a consent has no consent of its own: 404, whatever
    // it names (the organization's consents are not its to use).
    const fromAccount = await reconnect(ownAccount.token, 'alpha-user-alice', aliceAccount, 'n5');
    expect(fromAccount.status).toBe(404);
    expect(fromAccount.body).toEqual({ error: 404, message: 'Consent not found' });
  });

  it('answers through GraphQL with the same url and errorMessage', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    await generateUrl(t.url, fixture.token, { redirect_url: 'https://app.example/gql' });
    const answer = await graphql(t.url, 'mutation { reconnectAlphaAccount(alphaId: "alpha-user-nobody", id: "1001", state: "g") { url status errorMessage account { id } } }', {
      token: fixture.token,
    });
    expect(answer.body).toEqual({
      data: {
        reconnectAlphaAccount: {
          url: 'https://app.example/gql?status=error&error_message=NotFoundException&state=g',
          status: 'error',
          errorMessage: 'NotFoundException',
          account: null,
        },
      },
    });
  });
});

describe('the GraphQL twins', () => {
  it('generateAlphaConsentUrl and connectAlphaAccount follow the same rules and say what happened', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    const bad = await graphql(t.url, 'mutation { generateAlphaConsentUrl(redirectUrl: "//evil.example") { url } }', { token: fixture.token });
    expect(bad.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    const consent = await runConsent(t.url, fixture.token, { state: 'gql' });
    const connected = await graphql(
      t.url,
      `mutation ($alphaId: ID!, $billingId: ID!) {
        connectAlphaAccount(alphaId: $alphaId, id: "1001", billingId: $billingId, state: "gql") { url status errorMessage account { id name syncStatus } }
      }`,
      { token: fixture.token, variables: { alphaId: consent.landed.get('alphaId'), billingId: fixture.organization.id } },
    );
    expect(connected.body.errors).toBeUndefined();
    expect(connected.body.data.connectAlphaAccount).toMatchObject({
      status: 'success',
      errorMessage: null,
      account: { name: 'Alice Bakery Group', syncStatus: 'QUEUED' },
      url: expect.stringContaining('status=success'),
    });
    await importEnded(t.url, fixture.token, connected.body.data.connectAlphaAccount.account.id);
  });
});
