import { createAlphaClient, type AlphaClient } from '../src/providers/alpha/alpha.client';
import { AlphaProviderError } from '../src/providers/alpha/alpha.errors';
import type { AlphaLocalPost } from '../src/providers/alpha/alpha.types';
import { createBetaClient, type BetaClient } from '../src/providers/beta/beta.client';
import { BetaProviderError } from '../src/providers/beta/beta.errors';
import { createBetaOAuthClient } from '../src/providers/beta/beta.oauth';
import { BETA_SANDBOX_SEED } from '../sandboxes/beta/beta-sandbox';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { createBetaSandboxControl, type BetaSandboxControl } from '../sandboxes/beta/beta-sandbox.control';
import { startAlphaSandbox, type AlphaSandboxServer } from '../sandboxes/alpha/main';
import { startBetaSandbox, type BetaSandboxServer } from '../sandboxes/beta/main';
import { startSandboxProcess, type ServerProcess } from './support/process';
import { failure } from './support/failure';

/**
 * The per-project quota of both sandboxes (docs/alpha-sandbox.md, "The per-project quota"), over HTTP: its 429s
 * as the provider clients read them, its counters, and its settings (controls, start options, command line). The
 * sandboxes run on a clock this file moves, so the windows are crossed by moving time, never by waiting.
 */

const START = Date.parse('2031-03-01T10:00:00.000Z');
let now = START;
const at = (offsetMs: number) => new Date(START + offsetMs).toISOString();

const ACCOUNT = 'acc-1';
const LOCATION = 'loc-1';
const post: AlphaLocalPost = { languageCode: 'en', summary: 'Spring hours', topicType: 'STANDARD' };
const ACME = BETA_SANDBOX_SEED.acme.id;

/** A raw call, to read the status, headers and body the client turns into an error. */
async function raw(url: string, init: RequestInit = {}): Promise<{ status: number; retryAfter: string | null; body: unknown }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: text ? (JSON.parse(text) as unknown) : undefined };
}

describe('the alpha sandbox', () => {
  let sandbox: AlphaSandboxServer;
  let control: AlphaSandboxControl;
  let client: AlphaClient;
  const listPosts = () => client.listLocalPosts({ accountId: ACCOUNT, locationId: LOCATION });
  const rawList = () =>
    raw(`${sandbox.url}/v4/accounts/${ACCOUNT}/locations/${LOCATION}/localPosts`, { headers: { authorization: 'Bearer t' } });

  beforeAll(async () => {
    sandbox = await startAlphaSandbox({ port: 0, clock: () => now });
    control = createAlphaSandboxControl(sandbox.url);
    client = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => 'sandbox-token' });
  });
  afterAll(() => sandbox?.close());
  beforeEach(async () => {
    now = START;
    await control.reset();
  });

  it('is unlimited by default, and counts every call it admits', async () => {
    expect((await control.state()).config).toMatchObject({ quotaPerSecond: null, quotaPerMinute: null });
    for (let call = 0; call < 40; call += 1) await listPosts();
    expect((await control.state()).quota).toEqual({
      admitted: 40,
      refused: 0,
      lastCallAt: at(0),
      callsDuringRetryAfter: 0,
      refusals: [],
    });
  });

  it('answers a call over the per-second quota 429 RESOURCE_EXHAUSTED, with RetryInfo and Retry-After, until room is made', async () => {
    expect(await control.configure({ quotaPerSecond: 3 })).toMatchObject({ quotaPerSecond: 3, quotaPerMinute: null });
    await listPosts();
    now = START + 200;
    await listPosts();
    now = START + 400;
    await listPosts();

    now = START + 500;
    const refused = await rawList();
    expect(refused).toEqual({
      status: 429,
      retryAfter: '1',
      body: {
        error: {
          code: 429,
          message: "Quota exceeded for quota metric 'Requests' and limit 'Requests per second per project' (3). Retry later.",
          status: 'RESOURCE_EXHAUSTED',
          details: [
            { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' },
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'RATE_LIMIT_EXCEEDED',
              domain: 'alpha.example',
              metadata: { quota_metric: 'requests', quota_limit: 'RequestsPerSecondPerProject', quota_limit_value: '3' },
            },
          ],
        },
      },
    });

    // Through the real client: a retryable ProviderError with the wait; the refused create made nothing.
    now = START + 999;
    const error = await failure(client.createLocalPost({ accountId: ACCOUNT, locationId: LOCATION, post, requestId: 'r1' }), AlphaProviderError);
    expect(error).toMatchObject({ status: 429, code: 429, reason: 'RESOURCE_EXHAUSTED', retryable: true, retryAfterSeconds: 1 });
    expect(error.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' });
    expect((await control.state()).publishes).toBe(0);

    // The oldest call leaves the window a second after it came: one more fits, then the next waits for the second.
    now = START + 1000;
    expect((await client.createLocalPost({ accountId: ACCOUNT, locationId: LOCATION, post, requestId: 'r1' })).summary).toBe('Spring hours');
    expect(await rawList()).toMatchObject({ status: 429, retryAfter: '1' });

    const state = await control.state();
    expect(state.publishes).toBe(1);
    expect(state.calls).toMatchObject({ list: 5, create: 2 });
    expect(state.quota).toEqual({
      admitted: 4,
      refused: 3,
      lastCallAt: at(1000),
      // The calls at 999 and 1000 came while the Retry-After of the refusal at 500 ran (to 1500).
      callsDuringRetryAfter: 3,
      refusals: [
        { at: at(500), limit: 'quotaPerSecond', retryAfterSeconds: 1, callsBeforeRetry: 3 },
        { at: at(999), limit: 'quotaPerSecond', retryAfterSeconds: 1, callsBeforeRetry: 2 },
        { at: at(1000), limit: 'quotaPerSecond', retryAfterSeconds: 1, callsBeforeRetry: 0 },
      ],
    });
  });

  it('waits out a per-minute quota in whole seconds, rounded up, and names the limit that holds the call longest', async () => {
    await control.configure({ quotaPerMinute: 2 });
    await listPosts();
    now = START + 10_500;
    await listPosts();
    now = START + 20_000;
    const refused = await failure(listPosts(), AlphaProviderError);
    expect(refused).toMatchObject({ status: 429, reason: 'RESOURCE_EXHAUSTED', retryAfterSeconds: 40 });
    expect(refused.message).toContain("limit 'Requests per minute per project' (2)");
    expect(refused.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '40s' });
    now = START + 59_999;
    expect(await failure(listPosts(), AlphaProviderError)).toMatchObject({ status: 429, retryAfterSeconds: 1 });
    now = START + 60_000;
    await listPosts();

    // Two limits: the minute has room for one more (calls at 10.5 s and 60 s), the second none.
    await control.configure({ quotaPerSecond: 1, quotaPerMinute: 3 });
    now = START + 60_500;
    const perSecond = await failure(listPosts(), AlphaProviderError);
    expect(perSecond).toMatchObject({ status: 429, retryAfterSeconds: 1 });
    expect(perSecond.message).toContain("limit 'Requests per second per project' (1)");
    now = START + 61_000;
    await listPosts();
    // Both reached: the second's frees in 0.5 s, the minute's in 9 s; the answer is the minute's.
    now = START + 61_500;
    const both = await failure(listPosts(), AlphaProviderError);
    expect(both).toMatchObject({ status: 429, retryAfterSeconds: 9 });
    expect(both.message).toContain("limit 'Requests per minute per project' (3)");
    expect((await control.state()).quota.refusals.map((refusal) => [refusal.limit, refusal.retryAfterSeconds])).toEqual([
      ['quotaPerMinute', 40],
      ['quotaPerMinute', 1],
      ['quotaPerSecond', 1],
      ['quotaPerMinute', 9],
    ]);
  });

  it('refuses at the door: a refused call takes no scripted failure and uses no quota', async () => {
    await control.configure({ quotaPerSecond: 1 });
    await listPosts();
    await control.fail({ count: 1, status: 503 });
    expect(await failure(listPosts(), AlphaProviderError)).toMatchObject({ status: 429 });
    now = START + 500;
    expect(await failure(listPosts(), AlphaProviderError)).toMatchObject({ status: 429 });
    expect((await control.state()).failures).toHaveLength(1);
    // Room again once the admitted call leaves the window: the refusal at 500 ms took none.
    now = START + 1000;
    expect(await failure(listPosts(), AlphaProviderError)).toMatchObject({ status: 503, reason: 'UNAVAILABLE' });
    expect((await control.state()).quota).toMatchObject({ admitted: 2, refused: 2 });
    expect((await control.state()).failures).toEqual([]);
  });

  it('charges every call of the provider API, the places search too, but not the identity provider nor the controls', async () => {
    await control.configure({ quotaPerMinute: 2 });
    const token = await raw(`${sandbox.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&refresh_token=unknown&client_id=listings-gateway-sandbox&client_secret=sandbox-client-secret',
    });
    expect(token.status).toBe(400);
    for (let read = 0; read < 3; read += 1) await control.state();
    expect((await control.state()).quota).toMatchObject({ admitted: 0, lastCallAt: null });

    await client.searchPlaces({ textQuery: 'coffee shop', latitude: 51.5, longitude: -0.12, radiusMeters: 1000 });
    await listPosts();
    expect(await failure(client.searchPlaces({ textQuery: 'bakery', latitude: 51.5, longitude: -0.12, radiusMeters: 1000 }), AlphaProviderError)).toMatchObject({
      status: 429,
    });
    // A call without a token is charged too: the sandbox has one project, every call is its.
    expect((await raw(`${sandbox.url}/v4/accounts`)).status).toBe(429);
    expect((await control.state()).quota).toMatchObject({ admitted: 2, refused: 2 });
  });

  it('takes its limits from the controls, refuses bad ones, lifts them with null, and a reset clears the counters', async () => {
    for (const bad of [0, 1.5, -3, '5', 1_000_001]) {
      await expect(control.configure({ quotaPerSecond: bad as number })).rejects.toThrow(/HTTP 400.*quotaPerSecond/);
    }
    await expect(control.configure({ quotaPerMinute: 0 })).rejects.toThrow(/HTTP 400.*quotaPerMinute/);
    expect(await control.configure({ quotaPerSecond: 1, quotaPerMinute: 100 })).toMatchObject({ quotaPerSecond: 1, quotaPerMinute: 100 });
    await listPosts();
    await failure(listPosts(), AlphaProviderError);
    expect(await control.configure({ quotaPerSecond: null })).toMatchObject({ quotaPerSecond: null, quotaPerMinute: 100 });
    await listPosts();

    await control.reset();
    const state = await control.state();
    expect(state.config).toMatchObject({ quotaPerSecond: null, quotaPerMinute: null });
    expect(state.quota).toEqual({ admitted: 0, refused: 0, lastCallAt: null, callsDuringRetryAfter: 0, refusals: [] });
  });

  it('started with a quota, keeps it across resets', async () => {
    const limited = await startAlphaSandbox({ port: 0, clock: () => now, quota: { quotaPerMinute: 1 } });
    try {
      const limitedControl = createAlphaSandboxControl(limited.url);
      const limitedClient = createAlphaClient({ baseUrl: limited.url, accessToken: () => 'sandbox-token' });
      await limitedControl.configure({ quotaPerMinute: 5 });
      await limitedControl.reset();
      expect((await limitedControl.state()).config).toMatchObject({ quotaPerSecond: null, quotaPerMinute: 1 });
      await limitedClient.listAccounts();
      expect(await failure(limitedClient.listAccounts(), AlphaProviderError)).toMatchObject({ status: 429, retryAfterSeconds: 60 });
    } finally {
      await limited.close();
    }
  });
});

describe('the beta sandbox', () => {
  let sandbox: BetaSandboxServer;
  let control: BetaSandboxControl;
  let client: BetaClient;
  let appToken: string;
  const listBrands = () => client.listBrands(ACME, {}, { accessToken: appToken });

  beforeAll(async () => {
    sandbox = await startBetaSandbox({ port: 0, clock: () => now });
    control = createBetaSandboxControl(sandbox.url);
    client = createBetaClient({ baseUrl: sandbox.url, accessToken: () => appToken });
  });
  afterAll(() => sandbox?.close());
  beforeEach(async () => {
    now = START;
    await control.reset();
    const oauth = createBetaOAuthClient({ baseUrl: sandbox.url, clientId: 'listings-gateway-beta-sandbox', clientSecret: 'beta-sandbox-secret' });
    appToken = (await oauth.clientCredentials()).access_token;
  });

  it('is unlimited by default; the token endpoint is not charged', async () => {
    expect((await control.state()).config).toMatchObject({ quotaPerSecond: null, quotaPerMinute: null });
    for (let call = 0; call < 30; call += 1) await listBrands();
    expect((await control.state()).quota).toEqual({ admitted: 30, refused: 0, lastCallAt: at(0), callsDuringRetryAfter: 0, refusals: [] });
  });

  it('answers a call over the quota 429 RATE_LIMITED with Retry-After, which the client reads', async () => {
    await control.configure({ quotaPerSecond: 2, quotaPerMinute: 3 });
    await listBrands();
    now = START + 300;
    await listBrands();
    now = START + 700;
    const refused = await raw(`${sandbox.url}/api/v1/orgs/${ACME}/brands`, { headers: { authorization: `Bearer ${appToken}` } });
    expect(refused).toEqual({
      status: 429,
      retryAfter: '1',
      body: { code: 'RATE_LIMITED', message: 'Too many requests: the limit is 2 requests per second. Retry after 1 s.', context: null, details: [] },
    });

    now = START + 1000;
    await listBrands();
    now = START + 1500;
    const error = await failure(listBrands(), BetaProviderError);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryable: true, retryAfterSeconds: 59 });
    expect(error.message).toContain('3 requests per minute');

    const state = await control.state();
    expect(state.calls['brand-list']).toBe(5);
    expect(state.quota).toEqual({
      admitted: 3,
      refused: 2,
      lastCallAt: at(1500),
      callsDuringRetryAfter: 2,
      refusals: [
        { at: at(700), limit: 'quotaPerSecond', retryAfterSeconds: 1, callsBeforeRetry: 2 },
        { at: at(1500), limit: 'quotaPerMinute', retryAfterSeconds: 59, callsBeforeRetry: 0 },
      ],
    });
  });

  it('refuses bad limits in its own error body, and a reset lifts the limits', async () => {
    await expect(control.configure({ quotaPerMinute: 0 })).rejects.toThrow(/HTTP 400.*VALIDATION_ERROR.*quotaPerMinute/);
    await control.configure({ quotaPerMinute: 1 });
    await control.reset();
    expect((await control.state()).config).toMatchObject({ quotaPerSecond: null, quotaPerMinute: null });
  });
});

describe('the settings of a sandbox process', () => {
  const running: ServerProcess[] = [];
  afterEach(async () => {
    for (const child of running.splice(0)) {
      child.child.kill('SIGTERM');
      await child.exited();
    }
  });

  async function started(name: 'alpha' | 'beta', env: Record<string, string>): Promise<string> {
    const child = startSandboxProcess(name, { PORT: '0', ...env });
    running.push(child);
    return (await child.waitFor(/listening on (http:\/\/\S+) /))[1]!;
  }

  it('the alpha sandbox takes ALPHA_SANDBOX_QUOTA_PER_SECOND and _PER_MINUTE, and keeps them across resets', async () => {
    const url = await started('alpha', { ALPHA_SANDBOX_QUOTA_PER_SECOND: '1000', ALPHA_SANDBOX_QUOTA_PER_MINUTE: '2' });
    const control = createAlphaSandboxControl(url);
    await control.reset();
    expect((await control.state()).config).toMatchObject({ quotaPerSecond: 1000, quotaPerMinute: 2 });
    const client = createAlphaClient({ baseUrl: url, accessToken: () => 'sandbox-token' });
    await client.listAccounts();
    await client.listAccounts();
    expect(await failure(client.listAccounts(), AlphaProviderError)).toMatchObject({ status: 429, reason: 'RESOURCE_EXHAUSTED' });
    expect((await control.state()).quota).toMatchObject({ admitted: 2, refused: 1 });
  });

  it('the beta sandbox takes BETA_SANDBOX_QUOTA_PER_MINUTE', async () => {
    const url = await started('beta', { BETA_SANDBOX_QUOTA_PER_MINUTE: '1' });
    const control = createBetaSandboxControl(url);
    expect((await control.state()).config).toMatchObject({ quotaPerSecond: null, quotaPerMinute: 1 });
    const oauth = createBetaOAuthClient({ baseUrl: url, clientId: 'listings-gateway-beta-sandbox', clientSecret: 'beta-sandbox-secret' });
    const token = (await oauth.clientCredentials()).access_token;
    const client = createBetaClient({ baseUrl: url, accessToken: () => token });
    await client.listBrands(ACME);
    expect(await failure(client.listBrands(ACME), BetaProviderError)).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
  });

  it('a bad quota setting stops the start with exit code 78, naming the variable', async () => {
    const child = startSandboxProcess('alpha', { PORT: '0', ALPHA_SANDBOX_QUOTA_PER_SECOND: '0' });
    expect(await child.exited()).toBe(78);
    expect(child.output()).toMatch(/^ALPHA_SANDBOX_QUOTA_PER_SECOND: /m);
  });
});
