import { createHmac } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createAlphaClient, type AlphaClient } from '../src/providers/alpha/alpha.client';
import { AlphaProviderError } from '../src/providers/alpha/alpha.errors';
import { OAuthError } from '../src/providers/shared/oauth-error';
import { createAlphaOAuthClient, createAlphaPkce, type AlphaOAuthClient } from '../src/providers/alpha/alpha.oauth';
import {
  ALPHA_CONNECT_SCOPES,
  ALPHA_SCOPE_BUSINESS_MANAGE,
  ALPHA_SCOPE_EMAIL,
  ALPHA_SCOPE_OPENID,
  ALPHA_SCOPE_PROFILE,
  type AlphaOAuthTokenAnswer,
} from '../src/providers/alpha/alpha.types';
import { ALPHA_SANDBOX_SEED } from '../sandboxes/alpha/alpha-sandbox';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { sandboxRestarts } from './support/sandbox-restarts';
import { startAlphaSandbox, type AlphaSandboxServer } from '../sandboxes/alpha/main';
import { failure } from './support/failure';

/**
 * The alpha sandbox's identity provider through the real OAuth client and a browser's view of the consent page,
 * and the business API with the tokens it issues. The sandbox runs on a clock this file moves, so codes and tokens
 * expire by moving time, never by waiting.
 */

const START = Date.parse('2031-03-01T10:00:00.000Z');
let now = START;
let sandbox: AlphaSandboxServer;
let control: AlphaSandboxControl;
let oauth: AlphaOAuthClient;
/** The gateway's client: the service token by default, an identity's token per call. */
let client: AlphaClient;

const CLIENT_ID = 'listings-gateway-sandbox';
const CLIENT_SECRET = 'sandbox-client-secret';
const REDIRECT = 'https://gateway.example/oauth/alpha/callback';
const { alice, bob, carol } = ALPHA_SANDBOX_SEED;

/** The consent page as a browser reads it: the form's target and every control a person can see or submit. */
interface ConsentForm {
  action: string;
  hidden: [string, string][];
  identities: { value: string; label: string; selected: boolean }[];
  identityField: string | undefined;
  checkboxes: { name: string; value: string; checked: boolean }[];
  buttons: { name: string; value: string; label: string }[];
}

function decodeEntities(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

function attributesOf(tag: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const match of tag.matchAll(/([a-zA-Z_-]+)(?:="([^"]*)")?/g)) {
    attributes[match[1]!] = decodeEntities(match[2] ?? '');
  }
  return attributes;
}

function parseConsentPage(html: string, pageUrl: string): ConsentForm {
  const formTag = /<form\b([^>]*)>/.exec(html);
  if (!formTag) throw new Error(`no form on the page:\n${html}`);
  const form = attributesOf(formTag[1]!);
  expect(form.method).toBe('post');
  const inputs = [...html.matchAll(/<input\b([^>]*)>/g)].map((match) => attributesOf(match[1]!));
  return {
    action: new URL(form.action ?? '', pageUrl).toString(),
    hidden: inputs.filter((input) => input.type === 'hidden').map((input): [string, string] => [input.name ?? '', input.value ?? '']),
    identityField: /<select\b([^>]*)>/.exec(html) ? attributesOf(/<select\b([^>]*)>/.exec(html)![1]!).name : undefined,
    identities: [...html.matchAll(/<option\b([^>]*)>([^<]*)<\/option>/g)].map((match) => {
      const attributes = attributesOf(match[1]!);
      return { value: attributes.value ?? '', label: decodeEntities(match[2]!), selected: 'selected' in attributes };
    }),
    checkboxes: inputs
      .filter((input) => input.type === 'checkbox')
      .map((input) => ({ name: input.name ?? '', value: input.value ?? '', checked: 'checked' in input })),
    buttons: [...html.matchAll(/<button\b([^>]*)>([^<]*)<\/button>/g)].map((match) => {
      const attributes = attributesOf(match[1]!);
      return { name: attributes.name ?? '', value: attributes.value ?? '', label: match[2]! };
    }),
  };
}

/** Submits the form as a browser would after the person's choices: a press of the button labelled `press`. */
async function submit(
  form: ConsentForm,
  choices: { press: 'Approve' | 'Decline'; identity?: string; untick?: string[] },
): Promise<Response> {
  const body = new URLSearchParams(form.hidden);
  const chosen = choices.identity ?? form.identities.find((option) => option.selected)?.value;
  if (form.identityField !== undefined && chosen !== undefined) body.append(form.identityField, chosen);
  for (const box of form.checkboxes) {
    if (box.checked && !choices.untick?.includes(box.value)) body.append(box.name, box.value);
  }
  const button = form.buttons.find((candidate) => candidate.label === choices.press);
  if (!button) throw new Error(`no ${choices.press} button`);
  body.append(button.name, button.value);
  return fetch(form.action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
    redirect: 'manual',
  });
}

async function openConsentPage(url: string): Promise<ConsentForm> {
  const page = await fetch(url, { redirect: 'manual' });
  expect(page.status).toBe(200);
  return parseConsentPage(await page.text(), url);
}

/** Where a 302 sends the browser. */
function redirectOf(response: Response): URL {
  expect(response.status).toBe(302);
  return new URL(response.headers.get('location') ?? '');
}

interface Consent {
  code: string;
  codeVerifier: string;
  redirectUri: string;
  scope: string;
}

/** A person approves on the consent page; the code the client's callback receives. */
async function consent(
  options: {
    identity?: string;
    scopes?: readonly string[];
    untick?: string[];
    redirectUri?: string;
    online?: boolean;
    /** The identity provider to ask; default this file's sandbox. */
    via?: AlphaOAuthClient;
  } = {},
): Promise<Consent> {
  const { codeVerifier, codeChallenge } = createAlphaPkce();
  const redirectUri = options.redirectUri ?? REDIRECT;
  const url = new URL(
    (options.via ?? oauth).authorizeUrl({
      redirectUri,
      state: 'st',
      codeChallenge,
      scopes: options.scopes ?? ALPHA_CONNECT_SCOPES,
    }),
  );
  if (options.online) url.searchParams.set('access_type', 'online');
  const form = await openConsentPage(url.toString());
  const back = redirectOf(
    await submit(form, { press: 'Approve', identity: options.identity ?? alice.sub, untick: options.untick }),
  );
  expect(back.searchParams.get('state')).toBe('st');
  return {
    code: back.searchParams.get('code') ?? '',
    codeVerifier,
    redirectUri,
    scope: back.searchParams.get('scope') ?? '',
  };
}

async function connect(
  identity: string = alice.sub,
  scopes?: readonly string[],
  via: AlphaOAuthClient = oauth,
): Promise<AlphaOAuthTokenAnswer> {
  const { code, codeVerifier, redirectUri } = await consent({ identity, scopes, via });
  return via.exchangeCode({ code, redirectUri, codeVerifier });
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

function jwtPayload(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

beforeAll(async () => {
  sandbox = await startAlphaSandbox({ port: 0, clock: () => now });
  control = createAlphaSandboxControl(sandbox.url);
  oauth = createAlphaOAuthClient({ baseUrl: sandbox.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  client = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => 'sandbox-access-token' });
});
afterAll(() => sandbox?.close());
beforeEach(async () => {
  now = START;
  await control.reset();
});

describe('the consent page', () => {
  it('offers the sandbox identities and one ticked box per requested scope, and carries the request in hidden fields', async () => {
    const { codeChallenge } = createAlphaPkce();
    const url = oauth.authorizeUrl({
      redirectUri: REDIRECT,
      state: 'abc',
      codeChallenge,
      scopes: ALPHA_CONNECT_SCOPES,
      loginHint: carol.email,
    });
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain(CLIENT_ID);

    const form = parseConsentPage(html, url);
    expect(form.action).toBe(`${sandbox.url}/oauth/authorize`);
    expect(form.identities).toEqual([
      { value: alice.sub, label: 'Alice Example (alice@sandbox.example)', selected: false },
      { value: bob.sub, label: 'Bob Example (bob@sandbox.example)', selected: false },
      // login_hint chose her.
      { value: carol.sub, label: 'Carol Example (carol@sandbox.example)', selected: true },
    ]);
    expect(form.checkboxes).toEqual(
      ALPHA_CONNECT_SCOPES.map((scope) => ({ name: 'grant', value: scope, checked: true })),
    );
    expect(form.buttons.map((button) => button.label)).toEqual(['Approve', 'Decline']);
    expect(Object.fromEntries(form.hidden)).toEqual({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
      scope: ALPHA_CONNECT_SCOPES.join(' '),
      state: 'abc',
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
      access_type: 'offline',
      prompt: 'consent',
      login_hint: carol.email,
    });
  });

  it('escapes everything it echoes, and the form carries it back unchanged', async () => {
    const { codeChallenge } = createAlphaPkce();
    const state = `"><script>alert('x')</script>&amp;`;
    const redirectUri = 'https://gateway.example/cb?next=<b>"quoted"</b>&x=1';
    const url = oauth.authorizeUrl({ redirectUri, state, codeChallenge, scopes: [ALPHA_SCOPE_BUSINESS_MANAGE] });
    const html = await (await fetch(url)).text();
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>');
    expect(html).toContain('&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;');

    const form = parseConsentPage(html, url);
    expect(Object.fromEntries(form.hidden)).toMatchObject({ state, redirect_uri: redirectUri });
    const back = redirectOf(await submit(form, { press: 'Approve' }));
    expect(back.searchParams.get('state')).toBe(state);
    // The redirect keeps the query its redirect_uri already had.
    expect(back.searchParams.get('next')).toBe('<b>"quoted"</b>');
    expect(back.searchParams.get('x')).toBe('1');
  });

  it('answers a bad client, redirect or PKCE request with a 400 page, never a redirect', async () => {
    const { codeChallenge } = createAlphaPkce();
    const good = new URL(
      oauth.authorizeUrl({ redirectUri: REDIRECT, state: 's', codeChallenge, scopes: ALPHA_CONNECT_SCOPES }),
    );
    const cases: [string, (query: URLSearchParams) => void, string][] = [
      ['an unknown client_id', (query) => query.set('client_id', 'someone-else'), 'invalid_client'],
      ['no client_id', (query) => query.delete('client_id'), 'invalid_request'],
      ['no redirect_uri', (query) => query.delete('redirect_uri'), 'invalid_request'],
      ['a relative redirect_uri', (query) => query.set('redirect_uri', '/callback'), 'invalid_request'],
      ['a redirect_uri with a fragment', (query) => query.set('redirect_uri', `${REDIRECT}#frag`), 'invalid_request'],
      ['response_type token', (query) => query.set('response_type', 'token'), 'unsupported_response_type'],
      ['no code_challenge', (query) => query.delete('code_challenge'), 'invalid_request'],
      ['code_challenge_method plain', (query) => query.set('code_challenge_method', 'plain'), 'invalid_request'],
      ['no code_challenge_method', (query) => query.delete('code_challenge_method'), 'invalid_request'],
      ['a code_challenge too short', (query) => query.set('code_challenge', 'short'), 'invalid_request'],
      [
        'an unknown scope',
        (query) => query.set('scope', 'openid https://alpha.example/auth/everything'),
        'invalid_scope',
      ],
      ['no scope', (query) => query.delete('scope'), 'invalid_scope'],
      ['access_type sometimes', (query) => query.set('access_type', 'sometimes'), 'invalid_request'],
      ['state given twice', (query) => query.append('state', 'again'), 'invalid_request'],
    ];
    for (const [, change, error] of cases) {
      const url = new URL(good);
      change(url.searchParams);
      const page = await fetch(url, { redirect: 'manual' });
      expect({
        status: page.status,
        location: page.headers.get('location'),
        type: page.headers.get('content-type'),
      }).toEqual({
        status: 400,
        location: null,
        type: 'text/html; charset=utf-8',
      });
      expect(await page.text()).toContain(`Error 400: ${error}`);
    }
  });

  it('checks the posted form again: altered hidden fields or an unknown identity are a 400 page', async () => {
    const { codeChallenge } = createAlphaPkce();
    const url = oauth.authorizeUrl({ redirectUri: REDIRECT, state: 's', codeChallenge, scopes: ALPHA_CONNECT_SCOPES });
    const form = await openConsentPage(url);

    const altered = {
      ...form,
      hidden: form.hidden.map(([name, value]): [string, string] => [name, name === 'client_id' ? 'evil' : value]),
    };
    const refused = await submit(altered, { press: 'Approve' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('location')).toBeNull();

    const stranger = await submit(form, { press: 'Approve', identity: 'alpha-user-nobody' });
    expect(stranger.status).toBe(400);
    expect(await stranger.text()).toContain('sandbox identities');

    const widened = {
      ...form,
      checkboxes: [...form.checkboxes, { name: 'grant', value: 'https://alpha.example/auth/admin', checked: true }],
    };
    const tooMuch = await submit(widened, { press: 'Approve' });
    expect(tooMuch.status).toBe(400);
    expect(await tooMuch.text()).toContain('invalid_scope');
    expect((await control.state()).oauth.codes.issued).toBe(0);
  });
});

describe('approve and decline', () => {
  it('approve redirects with a code, the state and the granted scopes', async () => {
    const given = await consent();
    expect(given.code).toMatch(/^4\/[A-Za-z0-9_-]{43}$/);
    expect(given.scope.split(' ')).toEqual([...ALPHA_CONNECT_SCOPES]);
    expect((await control.state()).oauth.codes).toEqual({ issued: 1, pending: 1 });
  });

  it('decline redirects with access_denied and the state, and no code', async () => {
    const { codeChallenge } = createAlphaPkce();
    const url = oauth.authorizeUrl({
      redirectUri: REDIRECT,
      state: 'keep-me',
      codeChallenge,
      scopes: ALPHA_CONNECT_SCOPES,
    });
    const back = redirectOf(await submit(await openConsentPage(url), { press: 'Decline' }));
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'access_denied', state: 'keep-me' });
    expect((await control.state()).oauth.codes.issued).toBe(0);
  });

  it('does not grant the scopes left unticked, and approving none is a refusal', async () => {
    const partial = await consent({ untick: [ALPHA_SCOPE_BUSINESS_MANAGE, ALPHA_SCOPE_PROFILE] });
    expect(partial.scope).toBe(`${ALPHA_SCOPE_OPENID} ${ALPHA_SCOPE_EMAIL}`);
    const tokens = await oauth.exchangeCode({
      code: partial.code,
      redirectUri: REDIRECT,
      codeVerifier: partial.codeVerifier,
    });
    expect(tokens.scope).toBe(`${ALPHA_SCOPE_OPENID} ${ALPHA_SCOPE_EMAIL}`);
    expect(await oauth.userInfo(tokens.access_token)).toEqual({
      sub: alice.sub,
      email: alice.email,
      email_verified: true,
    });

    // Without business.manage the business API refuses the token.
    const denied = await failure(client.listAccounts({}, { accessToken: tokens.access_token }), AlphaProviderError);
    expect(denied).toMatchObject({ status: 403, reason: 'PERMISSION_DENIED', retryable: false });
    expect(denied.message).toContain('insufficient authentication scopes');

    const { codeChallenge } = createAlphaPkce();
    const url = oauth.authorizeUrl({ redirectUri: REDIRECT, state: 's', codeChallenge, scopes: ALPHA_CONNECT_SCOPES });
    const back = redirectOf(
      await submit(await openConsentPage(url), { press: 'Approve', untick: [...ALPHA_CONNECT_SCOPES] }),
    );
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
  });
});

describe('the token endpoint', () => {
  it('exchanges a code for an access token, a refresh token and a signed ID token', async () => {
    const tokens = await connect(carol.sub);
    expect(tokens).toEqual({
      access_token: expect.stringMatching(/^ya29\.[A-Za-z0-9_-]{43}$/),
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^1\/\/[A-Za-z0-9_-]{43}$/),
      scope: ALPHA_CONNECT_SCOPES.join(' '),
      token_type: 'Bearer',
      id_token: expect.any(String),
    });
    const [header, payload, signature] = tokens.id_token!.split('.');
    expect(createHmac('sha256', CLIENT_SECRET).update(`${header}.${payload}`).digest('base64url')).toBe(signature);
    expect(jwtPayload(tokens.id_token!)).toEqual({
      iss: 'https://accounts.alpha.example',
      aud: CLIENT_ID,
      sub: carol.sub,
      iat: START / 1000,
      exp: START / 1000 + 3600,
      email: carol.email,
      email_verified: true,
      name: 'Carol Example',
      picture: 'https://alpha.example/avatars/carol.png',
    });
    expect((await control.state()).oauth).toEqual({
      codes: { issued: 1, pending: 0 },
      accessTokens: { issued: 1, active: 1 },
      refreshTokens: { issued: 1, active: 1 },
    });
  });

  it('gives no refresh token for online access, and no ID token without openid', async () => {
    const online = await consent({ online: true, scopes: [ALPHA_SCOPE_BUSINESS_MANAGE] });
    const tokens = await oauth.exchangeCode({
      code: online.code,
      redirectUri: REDIRECT,
      codeVerifier: online.codeVerifier,
    });
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.scope).toBe(ALPHA_SCOPE_BUSINESS_MANAGE);
  });

  it('refuses bad client credentials as invalid_client, from the form or HTTP Basic', async () => {
    const given = await consent();
    const exchange = {
      grant_type: 'authorization_code',
      code: given.code,
      redirect_uri: REDIRECT,
      code_verifier: given.codeVerifier,
    };

    const wrongSecret = createAlphaOAuthClient({ baseUrl: sandbox.url, clientId: CLIENT_ID, clientSecret: 'guess' });
    expect(
      await failure(
        wrongSecret.exchangeCode({ code: given.code, redirectUri: REDIRECT, codeVerifier: given.codeVerifier }),
        OAuthError,
      ),
    ).toMatchObject({
      status: 401,
      error: 'invalid_client',
      retryable: false,
    });
    const stranger = createAlphaOAuthClient({
      baseUrl: sandbox.url,
      clientId: 'stranger',
      clientSecret: CLIENT_SECRET,
    });
    expect(await failure(stranger.refresh('1//whatever'), OAuthError)).toMatchObject({
      status: 401,
      error: 'invalid_client',
    });

    const anonymous = await tokenRequest(exchange);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });

    const badBasic = await tokenRequest(exchange, { authorization: basic(CLIENT_ID, 'guess') });
    expect(badBasic.status).toBe(401);
    expect(badBasic.headers.get('www-authenticate')).toBe('Basic realm="alpha-sandbox"');

    const twice = await tokenRequest(
      { ...exchange, client_secret: CLIENT_SECRET },
      { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    );
    expect(twice.status).toBe(400);
    expect(((await twice.json()) as { error: string }).error).toBe('invalid_request');

    // None of that used the code: HTTP Basic with the right secret exchanges it.
    const viaBasic = await tokenRequest(exchange, { authorization: basic(CLIENT_ID, CLIENT_SECRET) });
    expect(viaBasic.status).toBe(200);
    expect(viaBasic.headers.get('cache-control')).toBe('no-store');
    expect(await viaBasic.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
  });

  it('refuses malformed requests as invalid_request or unsupported_grant_type', async () => {
    const credentials = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
    const cases: [string, Record<string, string> | string, Record<string, string>, string, string][] = [
      ['no grant_type', credentials, {}, 'invalid_request', 'grant_type'],
      [
        'a password grant',
        { ...credentials, grant_type: 'password', username: 'alice', password: 'x' },
        {},
        'unsupported_grant_type',
        'password',
      ],
      [
        'no code',
        { ...credentials, grant_type: 'authorization_code', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) },
        {},
        'invalid_request',
        'code',
      ],
      [
        'no redirect_uri',
        { ...credentials, grant_type: 'authorization_code', code: '4/x', code_verifier: 'v'.repeat(43) },
        {},
        'invalid_request',
        'redirect_uri',
      ],
      [
        'no code_verifier',
        { ...credentials, grant_type: 'authorization_code', code: '4/x', redirect_uri: REDIRECT },
        {},
        'invalid_request',
        'code_verifier',
      ],
      [
        'a malformed code_verifier',
        {
          ...credentials,
          grant_type: 'authorization_code',
          code: '4/x',
          redirect_uri: REDIRECT,
          code_verifier: 'short',
        },
        {},
        'invalid_request',
        'code_verifier',
      ],
      ['no refresh_token', { ...credentials, grant_type: 'refresh_token' }, {}, 'invalid_request', 'refresh_token'],
      [
        'a parameter twice',
        `grant_type=refresh_token&refresh_token=a&refresh_token=b&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`,
        {},
        'invalid_request',
        'more than once',
      ],
      [
        'a JSON body',
        JSON.stringify({ ...credentials, grant_type: 'refresh_token', refresh_token: 'a' }),
        { 'content-type': 'application/json' },
        'invalid_request',
        'x-www-form-urlencoded',
      ],
    ];
    for (const [, body, headers, error, mentions] of cases) {
      const answer = await tokenRequest(body, headers);
      expect(answer.status).toBe(400);
      const parsed = (await answer.json()) as { error: string; error_description: string };
      expect(parsed.error).toBe(error);
      expect(parsed.error_description).toContain(mentions);
    }
  });

  it('refuses a code that is unknown, for another redirect_uri, with the wrong verifier, or of another client, as invalid_grant', async () => {
    await control.configure({
      oauthClients: [
        { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
        { clientId: 'other-app', clientSecret: 'other-secret' },
      ],
    });
    const given = await consent();
    const exchange = (overrides: Partial<{ code: string; redirectUri: string; codeVerifier: string }>, using = oauth) =>
      failure(
        using.exchangeCode({ code: given.code, redirectUri: REDIRECT, codeVerifier: given.codeVerifier, ...overrides }),
        OAuthError,
      );

    expect(await exchange({ code: '4/never-issued' })).toMatchObject({
      status: 400,
      error: 'invalid_grant',
      retryable: false,
    });
    expect((await exchange({ redirectUri: `${REDIRECT}/` })).description).toContain('redirect_uri');
    const pkce = await exchange({ codeVerifier: createAlphaPkce().codeVerifier });
    expect(pkce).toMatchObject({ error: 'invalid_grant' });
    expect(pkce.description).toContain('code_verifier');
    const otherApp = createAlphaOAuthClient({
      baseUrl: sandbox.url,
      clientId: 'other-app',
      clientSecret: 'other-secret',
    });
    expect((await exchange({}, otherApp)).description).toContain('another client');

    // Refused exchanges leave the code usable by its own client, with its own verifier.
    expect(
      (await oauth.exchangeCode({ code: given.code, redirectUri: REDIRECT, codeVerifier: given.codeVerifier }))
        .access_token,
    ).toMatch(/^ya29\./);
  });

  it('a code used twice is refused, and the tokens it gave are revoked', async () => {
    const given = await consent();
    const first = await oauth.exchangeCode({
      code: given.code,
      redirectUri: REDIRECT,
      codeVerifier: given.codeVerifier,
    });
    expect((await client.listAccounts({}, { accessToken: first.access_token })).accounts).toHaveLength(1);

    const again = await failure(
      oauth.exchangeCode({ code: given.code, redirectUri: REDIRECT, codeVerifier: given.codeVerifier }),
      OAuthError,
    );
    expect(again).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(again.description).toContain('already used');
    expect(
      await failure(client.listAccounts({}, { accessToken: first.access_token }), AlphaProviderError),
    ).toMatchObject({ status: 401, reason: 'UNAUTHENTICATED' });
    expect(await failure(oauth.refresh(first.refresh_token!), OAuthError)).toMatchObject({
      error: 'invalid_grant',
    });
    expect((await control.state()).oauth).toMatchObject({ accessTokens: { active: 0 }, refreshTokens: { active: 0 } });
  });

  it('a code expires 10 minutes after it was issued, on the sandbox clock', async () => {
    const early = await consent();
    const late = await consent();
    now = START + 10 * 60_000 - 1;
    await oauth.exchangeCode({ code: early.code, redirectUri: REDIRECT, codeVerifier: early.codeVerifier });
    now = START + 10 * 60_000;
    const expired = await failure(
      oauth.exchangeCode({ code: late.code, redirectUri: REDIRECT, codeVerifier: late.codeVerifier }),
      OAuthError,
    );
    expect(expired).toMatchObject({ error: 'invalid_grant' });
    expect(expired.description).toContain('expired');
  });
});

describe('expiry, refresh and revocation', () => {
  it('an access token works for 3600 s of the clock; a refresh gives a new one and keeps the refresh token', async () => {
    const tokens = await connect();
    now = START + 3_599_999;
    expect(
      (await client.listAccounts({}, { accessToken: tokens.access_token })).accounts.map((account) => account.name),
    ).toEqual(alice.accounts);
    expect((await oauth.userInfo(tokens.access_token)).sub).toBe(alice.sub);

    now = START + 3_600_000;
    const expired = await failure(client.listAccounts({}, { accessToken: tokens.access_token }), AlphaProviderError);
    expect(expired).toMatchObject({ status: 401, code: 401, reason: 'UNAUTHENTICATED', retryable: false });
    expect(expired.message).toContain('expired');
    expect(expired.details).toEqual([
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_EXPIRED', domain: 'alpha.example' },
    ]);
    expect(await failure(oauth.userInfo(tokens.access_token), OAuthError)).toMatchObject({
      status: 401,
      error: 'invalid_token',
    });

    const refreshed = await oauth.refresh(tokens.refresh_token!);
    expect(refreshed).toEqual({
      access_token: expect.stringMatching(/^ya29\./),
      expires_in: 3600,
      scope: tokens.scope,
      token_type: 'Bearer',
      id_token: expect.any(String),
    });
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect((await client.listAccounts({}, { accessToken: refreshed.access_token })).accounts).toHaveLength(1);
    // The same refresh token keeps working.
    expect((await oauth.refresh(tokens.refresh_token!)).access_token).not.toBe(refreshed.access_token);
  });

  it('honours a configured lifetime, and a refresh may narrow the scopes but not widen them', async () => {
    expect(await control.configure({ accessTokenTtlSeconds: 60 })).toMatchObject({ accessTokenTtlSeconds: 60 });
    const tokens = await connect(alice.sub, [ALPHA_SCOPE_OPENID, ALPHA_SCOPE_BUSINESS_MANAGE]);
    expect(tokens.expires_in).toBe(60);
    now = START + 60_000;
    expect(
      await failure(client.listAccounts({}, { accessToken: tokens.access_token }), AlphaProviderError),
    ).toMatchObject({ status: 401 });

    const narrowed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      scope: ALPHA_SCOPE_OPENID,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
    expect(await narrowed.json()).toMatchObject({ scope: ALPHA_SCOPE_OPENID, expires_in: 60 });
    const widened = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      scope: `${ALPHA_SCOPE_OPENID} ${ALPHA_SCOPE_EMAIL}`,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
    expect(widened.status).toBe(400);
    expect(await widened.json()).toMatchObject({ error: 'invalid_scope' });

    await expect(control.configure({ accessTokenTtlSeconds: 0 })).rejects.toThrow(/HTTP 400/);
  });

  it('refuses a refresh token it does not know, or of another client', async () => {
    expect(await failure(oauth.refresh('1//never-issued'), OAuthError)).toMatchObject({
      status: 400,
      error: 'invalid_grant',
      retryable: false,
    });
    await control.configure({
      oauthClients: [
        { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
        { clientId: 'other-app', clientSecret: 'other-secret' },
      ],
    });
    const tokens = await connect();
    const otherApp = createAlphaOAuthClient({
      baseUrl: sandbox.url,
      clientId: 'other-app',
      clientSecret: 'other-secret',
    });
    expect(await failure(otherApp.refresh(tokens.refresh_token!), OAuthError)).toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('revoking the refresh token revokes its access tokens; revoking an access token revokes its grant', async () => {
    const first = await connect();
    const second = await oauth.refresh(first.refresh_token!);
    const untouched = await connect(carol.sub);
    await oauth.revoke(first.refresh_token!);
    for (const token of [first.access_token, second.access_token]) {
      expect(await failure(client.listAccounts({}, { accessToken: token }), AlphaProviderError)).toMatchObject({
        status: 401,
      });
    }
    expect(await failure(oauth.refresh(first.refresh_token!), OAuthError)).toMatchObject({
      error: 'invalid_grant',
    });
    expect((await client.listAccounts({}, { accessToken: untouched.access_token })).accounts).toHaveLength(2);

    await oauth.revoke(untouched.access_token);
    expect(await failure(oauth.refresh(untouched.refresh_token!), OAuthError)).toMatchObject({
      error: 'invalid_grant',
    });

    // An unknown token is not an error (RFC 7009); no token at all is.
    await oauth.revoke('ya29.never-issued');
    const empty = await fetch(`${sandbox.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('userinfo', () => {
  it('tells what the granted scopes allow', async () => {
    const cases: [readonly string[], Record<string, unknown>][] = [
      [
        ALPHA_CONNECT_SCOPES,
        {
          sub: bob.sub,
          email: bob.email,
          email_verified: true,
          name: 'Bob Example',
          picture: 'https://alpha.example/avatars/bob.png',
        },
      ],
      [[ALPHA_SCOPE_OPENID, ALPHA_SCOPE_BUSINESS_MANAGE], { sub: bob.sub }],
      [[ALPHA_SCOPE_EMAIL], { sub: bob.sub, email: bob.email, email_verified: true }],
      [[ALPHA_SCOPE_PROFILE], { sub: bob.sub, name: 'Bob Example', picture: 'https://alpha.example/avatars/bob.png' }],
    ];
    for (const [scopes, expected] of cases) {
      const tokens = await connect(bob.sub, scopes);
      expect(await oauth.userInfo(tokens.access_token)).toEqual(expected);
    }
  });

  it('answers 401 without a token or with one it did not issue', async () => {
    const bare = await fetch(`${sandbox.url}/oauth/userinfo`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toContain('Bearer');
    expect(await failure(oauth.userInfo('ya29.forged'), OAuthError)).toMatchObject({
      status: 401,
      error: 'invalid_token',
      retryable: false,
    });
    expect(await failure(oauth.userInfo('sandbox-access-token'), OAuthError)).toMatchObject({ status: 401 });
  });
});

describe('the business API with identity tokens', () => {
  it("reaches only the identity's own accounts", async () => {
    const aliceToken = (await connect(alice.sub)).access_token;
    const asAlice = { accessToken: aliceToken };
    expect(await client.listAccounts({}, asAlice)).toEqual({
      accounts: [
        {
          name: 'accounts/1001',
          accountName: 'Alice Bakery Group',
          type: 'LOCATION_GROUP',
          verificationState: 'VERIFIED',
          role: 'OWNER',
        },
      ],
    });
    expect((await client.getAccount('accounts/1001', asAlice)).accountName).toBe('Alice Bakery Group');
    expect(
      (await client.listLocations({ accountId: '1001' }, asAlice)).locations.map((location) => location.name),
    ).toEqual(alice.locations);

    for (const call of [
      client.getAccount('accounts/2002', asAlice),
      client.getAccount('accounts/9999', asAlice),
      client.listLocations({ accountId: '3003' }, asAlice),
      client.getLocation(carol.locations[0], asAlice),
      client.listReviews({ accountId: '3003', locationId: '30031' }, asAlice),
      client.createLocation(
        {
          accountId: '3003',
          requestId: 'r1',
          location: {
            title: 'Not hers',
            categories: { primaryCategory: { name: 'gcid:bakery' } },
            storefrontAddress: { regionCode: 'DE' },
          },
        },
        asAlice,
      ),
      client.createLocalPost(
        { accountId: 'acc-1', locationId: 'l1', requestId: 'p1', post: { summary: 'Not hers either' } },
        asAlice,
      ),
    ]) {
      expect(await failure(call, AlphaProviderError)).toMatchObject({
        status: 403,
        code: 403,
        reason: 'PERMISSION_DENIED',
        retryable: false,
      });
    }
    const state = await control.state();
    expect(state.locations.filter((location) => location.accountId === '3003')).toHaveLength(1);
    expect(state.posts).toEqual([]);

    const carolToken = (await connect(carol.sub)).access_token;
    expect(
      (await client.listAccounts({}, { accessToken: carolToken })).accounts.map((account) => account.name),
    ).toEqual(carol.accounts);
    const bobToken = (await connect(bob.sub)).access_token;
    expect((await client.listAccounts({}, { accessToken: bobToken })).accounts.map((account) => account.name)).toEqual(
      bob.accounts,
    );
    expect(await client.listLocations({ accountId: '2002' }, { accessToken: bobToken })).toEqual({ locations: [] });
  });

  it('keeps the service token (and any other non-identity token) reaching every account', async () => {
    expect((await client.listAccounts()).accounts.map((account) => account.name)).toEqual([
      ...alice.accounts,
      ...bob.accounts,
      ...carol.accounts,
    ]);
    expect((await client.listLocations({ accountId: '3003' })).locations).toHaveLength(1);
    const anyToken = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => 'a-test-token' });
    expect((await anyToken.getAccount('accounts/2002')).accountName).toBe('Bob Without Shops');
    await anyToken.createLocalPost({
      accountId: 'acc-1',
      locationId: 'l1',
      requestId: 'p1',
      post: { summary: 'Anywhere' },
    });

    // A token shaped like the identity provider's that it never issued is not a service token.
    const forged = await failure(client.listAccounts({}, { accessToken: 'ya29.forged' }), AlphaProviderError);
    expect(forged).toMatchObject({ status: 401, reason: 'UNAUTHENTICATED' });
  });

  it('answers 404 for an account that does not exist, to the service token', async () => {
    expect(await failure(client.getAccount('accounts/9999'), AlphaProviderError)).toMatchObject({
      status: 404,
      reason: 'NOT_FOUND',
    });
    expect(await failure(client.getAccount('accounts/1001/locations/10011'), AlphaProviderError)).toMatchObject({
      status: 0,
      reason: 'INVALID_ARGUMENT',
    });
  });
});

describe('identities added by a control', () => {
  it('adds an identity with accounts, locations and reviews, offered on the consent page at once', async () => {
    const added = await control.addIdentity({
      email: 'dave@sandbox.example',
      name: 'Dave <Example>',
      accounts: [
        {
          accountName: 'Dave Deli',
          locations: [
            {
              location: {
                title: 'Dave Deli',
                storeCode: 'dave-1',
                categories: { primaryCategory: { name: 'gcid:deli' } },
                storefrontAddress: { regionCode: 'GB' },
              },
              reviews: [{ starRating: 'FOUR', reviewer: { displayName: 'Eve' }, comment: 'Tasty' }],
            },
          ],
        },
      ],
    });
    expect(added.identity).toEqual({
      sub: expect.stringMatching(/^alpha-user-/),
      email: 'dave@sandbox.example',
      name: 'Dave <Example>',
      picture: expect.any(String),
    });
    expect(added.accounts).toEqual([
      expect.objectContaining({
        name: expect.stringMatching(/^accounts\/\d+$/),
        accountName: 'Dave Deli',
        type: 'LOCATION_GROUP',
        verificationState: 'VERIFIED',
      }),
    ]);
    expect(added.reviews).toEqual([
      expect.objectContaining({ starRating: 'FOUR', comment: 'Tasty', createTime: new Date(START).toISOString() }),
    ]);

    const { codeChallenge } = createAlphaPkce();
    const url = oauth.authorizeUrl({
      redirectUri: REDIRECT,
      state: 's',
      codeChallenge,
      scopes: ALPHA_CONNECT_SCOPES,
      loginHint: 'dave@sandbox.example',
    });
    const html = await (await fetch(url)).text();
    expect(html).toContain('Dave &lt;Example&gt; (dave@sandbox.example)');
    expect(parseConsentPage(html, url).identities.find((option) => option.selected)?.value).toBe(added.identity.sub);

    const tokens = await connect(added.identity.sub);
    const account = (await client.listAccounts({}, { accessToken: tokens.access_token })).accounts[0]!;
    expect(account.name).toBe(added.accounts[0]!.name);
    const locations = await client.listLocations(
      { accountId: account.name.split('/')[1]! },
      { accessToken: tokens.access_token },
    );
    expect(locations.locations.map((location) => location.storeCode)).toEqual(['dave-1']);
    expect((await control.state()).identities.map((identity) => identity.email)).toEqual([
      alice.email,
      bob.email,
      carol.email,
      'dave@sandbox.example',
    ]);
  });

  it('refuses taken ids and emails (409) and locations the location API would refuse (400 naming the field), adding nothing', async () => {
    await expect(control.addIdentity({ sub: alice.sub, email: 'new@sandbox.example', name: 'Copy' })).rejects.toThrow(
      /HTTP 409/,
    );
    await expect(control.addIdentity({ email: alice.email, name: 'Copy' })).rejects.toThrow(/HTTP 409/);
    await expect(
      control.addIdentity({
        email: 'x@sandbox.example',
        name: 'X',
        accounts: [{ accountId: '1001', accountName: 'Taken' }],
      }),
    ).rejects.toThrow(/HTTP 409/);
    await expect(
      control.addIdentity({
        email: 'y@sandbox.example',
        name: 'Y',
        accounts: [
          {
            accountName: 'Y',
            locations: [
              {
                location: {
                  categories: { primaryCategory: { name: 'gcid:deli' } },
                  storefrontAddress: { regionCode: 'GB' },
                },
              },
            ],
          },
        ],
      }),
    ).rejects.toThrow(/HTTP 400 .*accounts\[0\]\.locations\[0\]\.location\.title/);
    await expect(control.addIdentity({ email: 'not-an-email', name: 'Z' })).rejects.toThrow(/HTTP 400 .*email/);
    expect((await control.state()).identities).toHaveLength(3);
  });
});

describe('scripted failures of the identity provider', () => {
  it('a 503 aimed at the token endpoint is retryable and leaves the code usable', async () => {
    const given = await consent();
    await control.fail({ count: 1, status: 503, pathContains: '/oauth/token' });
    const error = await failure(
      oauth.exchangeCode({ code: given.code, redirectUri: REDIRECT, codeVerifier: given.codeVerifier }),
      OAuthError,
    );
    expect(error).toMatchObject({ status: 503, error: 'temporarily_unavailable', retryable: true });
    expect(
      (await oauth.exchangeCode({ code: given.code, redirectUri: REDIRECT, codeVerifier: given.codeVerifier }))
        .access_token,
    ).toMatch(/^ya29\./);
  });

  it('an exchange whose answer is lost used the code: the retry is invalid_grant and the lost tokens are revoked', async () => {
    const given = await consent();
    await control.fail({ count: 1, status: 0, pathContains: '/oauth/token', when: 'after' });
    expect(
      await failure(
        oauth.exchangeCode({ code: given.code, redirectUri: REDIRECT, codeVerifier: given.codeVerifier }),
        OAuthError,
      ),
    ).toMatchObject({
      status: 0,
      error: 'network_error',
      retryable: true,
    });
    expect((await control.state()).oauth.accessTokens).toEqual({ issued: 1, active: 1 });
    expect(
      await failure(
        oauth.exchangeCode({ code: given.code, redirectUri: REDIRECT, codeVerifier: given.codeVerifier }),
        OAuthError,
      ),
    ).toMatchObject({ error: 'invalid_grant' });
    expect((await control.state()).oauth.accessTokens).toEqual({ issued: 1, active: 0 });
  });

  it('a failure aimed at no path hits the business API, not the identity provider', async () => {
    const given = await consent();
    await control.fail({ count: 1, status: 500 });
    const tokens = await oauth.exchangeCode({
      code: given.code,
      redirectUri: REDIRECT,
      codeVerifier: given.codeVerifier,
    });
    expect(await oauth.userInfo(tokens.access_token)).toMatchObject({ sub: alice.sub });
    expect(
      await failure(client.listAccounts({}, { accessToken: tokens.access_token }), AlphaProviderError),
    ).toMatchObject({ status: 500, retryable: true });
    expect((await control.state()).failures).toEqual([]);
  });
});

describe('persistence in a state file', () => {
  const restarts = sandboxRestarts('alpha-sandbox-oauth-', (stateFile, logged?: string[]) =>
    startAlphaSandbox({
      port: 0,
      clock: () => now,
      stateFile,
      ...(logged ? { logger: { level: 'warn', stream: { write: (line: string) => void logged.push(line) } } } : {}),
    }),
  );

  async function start(stateFile: string) {
    const started = await restarts.start(stateFile);
    return {
      close: () => started.close(),
      oauth: createAlphaOAuthClient({ baseUrl: started.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }),
      client: createAlphaClient({ baseUrl: started.url, accessToken: () => 'sandbox-access-token' }),
      control: createAlphaSandboxControl(started.url),
    };
  }

  it('keeps identities, codes and tokens (hashed) across a close and a new start', async () => {
    const stateFile = restarts.file('oauth.json');
    const first = await start(stateFile);
    const added = await first.control.addIdentity({
      email: 'kept@sandbox.example',
      name: 'Kept',
      accounts: [{ accountName: 'Kept Co' }],
    });
    const tokens = await connect(added.identity.sub, ALPHA_CONNECT_SCOPES, first.oauth);
    const pending = await consent({ identity: alice.sub, via: first.oauth });
    await first.close();
    const text = await readFile(stateFile, 'utf8');
    for (const secret of [tokens.access_token, tokens.refresh_token!, pending.code]) expect(text).not.toContain(secret);

    const second = await start(stateFile);
    const state = await second.control.state();
    expect(state.identities.map((identity) => identity.email)).toContain('kept@sandbox.example');
    expect(state.oauth).toMatchObject({
      accessTokens: { active: 1 },
      refreshTokens: { active: 1 },
      codes: { pending: 1 },
    });
    expect(
      (await second.client.listAccounts({}, { accessToken: tokens.access_token })).accounts.map(
        (account) => account.accountName,
      ),
    ).toEqual(['Kept Co']);
    expect((await second.oauth.refresh(tokens.refresh_token!)).access_token).toMatch(/^ya29\./);
    expect(
      (
        await second.oauth.exchangeCode({
          code: pending.code,
          redirectUri: REDIRECT,
          codeVerifier: pending.codeVerifier,
        })
      ).scope,
    ).toBe(ALPHA_CONNECT_SCOPES.join(' '));
    await second.close();
  });

  it('reads a state file of the version before identities, and adds the seeded ones', async () => {
    const stateFile = restarts.file('version-1.json');
    const location = {
      seq: 1,
      id: '77',
      accountId: 'a',
      requestId: null,
      content: {
        title: 'Old',
        categories: { primaryCategory: { name: 'gcid:x' } },
        storefrontAddress: { regionCode: 'DE' },
      },
      edits: 0,
      recentEdits: [],
    };
    await writeFile(stateFile, JSON.stringify({ version: 1, nextSeq: 2, posts: [], locations: [location] }));
    const old = await start(stateFile);
    expect((await old.client.listLocations({ accountId: 'a' })).locations.map((served) => served.title)).toEqual([
      'Old',
    ]);
    expect((await old.control.state()).identities.map((identity) => identity.sub)).toEqual([
      alice.sub,
      bob.sub,
      carol.sub,
    ]);
    await old.close();
  });

  it('starts seeded, with a warning, from a file whose tokens belong to nobody', async () => {
    const stateFile = restarts.file('orphans.json');
    const orphan = {
      hash: 'a'.repeat(64),
      grantId: 'g',
      clientId: CLIENT_ID,
      sub: 'alpha-user-ghost',
      scopes: ['openid'],
      issuedAt: 0,
    };
    await writeFile(
      stateFile,
      JSON.stringify({
        version: 2,
        nextSeq: 1,
        posts: [],
        locations: [],
        identities: [],
        accounts: [],
        reviews: [],
        oauth: { codes: [], refreshTokens: [orphan], accessTokens: [] },
      }),
    );
    const lines: string[] = [];
    const started = await restarts.start(stateFile, lines);
    const state = await createAlphaSandboxControl(started.url).state();
    expect(state.identities).toHaveLength(3);
    expect(state.oauth.refreshTokens.active).toBe(0);
    expect(lines.map((line) => JSON.parse(line) as { msg: string })).toEqual([
      expect.objectContaining({ msg: expect.stringContaining('malformed') }),
    ]);
    await started.close();
  });
});
