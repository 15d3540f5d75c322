import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config';
import { launchChromium } from './support/chromium';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Cross-origin calls from browsers (CORS_ORIGINS, docs/frontend.md): real preflights over HTTP as a browser sends
 * them, the headers of the answers that follow (errors too), origins refused, the setting off; and a page on another
 * origin calling the API in Chromium, which makes the preflight itself and enforces the answer.
 */

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with exactly these headers (fetch would add its own, and may not send Origin as given). */
function send(baseUrl: string, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const APP_ORIGIN = 'https://app.example.com';
const OTHER_APP_ORIGIN = 'https://admin.example.com';
const STRANGER = 'https://evil.example.net';

const preflight = (baseUrl: string, path: string, origin: string, method: string, requestHeaders: string) =>
  send(baseUrl, 'OPTIONS', path, { origin, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders });

const listOf = (value: string | string[] | undefined) =>
  String(value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

describe('CORS_ORIGINS set to a list of origins', () => {
  let t: TestStack;
  let org: OrganizationFixture;
  beforeAll(async () => {
    t = await startTestStack({ CORS_ORIGINS: `${APP_ORIGIN}, ${OTHER_APP_ORIGIN}` });
    org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1 });
  });
  afterAll(() => t?.close());

  it('answers a preflight of /graphql from an allowed origin: 204, the origin, methods, headers, cached ten minutes, no credentials', async () => {
    const answer = await preflight(t.url, '/graphql', APP_ORIGIN, 'POST', 'authorization,content-type');
    expect(answer.status).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(listOf(answer.headers['access-control-allow-methods'])).toEqual(expect.arrayContaining(['get', 'post', 'patch', 'delete']));
    expect(listOf(answer.headers['access-control-allow-headers'])).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key', 'x-request-id']));
    expect(answer.headers['access-control-max-age']).toBe('600');
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
    // The answer depends on the origin: caches must keep one per origin.
    expect(listOf(answer.headers.vary)).toContain('origin');
  });

  it('answers a preflight of a REST path with an id and an Idempotency-Key for the second allowed origin', async () => {
    const answer = await preflight(t.url, '/post/some-id', OTHER_APP_ORIGIN, 'DELETE', 'authorization');
    expect(answer.status).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe(OTHER_APP_ORIGIN);
    const post = await preflight(t.url, '/post', APP_ORIGIN, 'POST', 'authorization,content-type,idempotency-key');
    expect(post.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  });

  it('puts the origin and the exposed headers on answers, refusals included', async () => {
    const accountId = org.accounts[0]!.account.id;
    const ok = await send(t.url, 'GET', `/location?account_id=${accountId}`, { origin: APP_ORIGIN, authorization: `Bearer ${org.token}` });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(listOf(ok.headers['access-control-expose-headers'])).toEqual(
      expect.arrayContaining(['x-request-id', 'ratelimit', 'ratelimit-policy', 'retry-after', 'idempotent-replayed']),
    );
    // Limited answers carry the headers the browser app may now read.
    expect(ok.headers['ratelimit']).toEqual(expect.any(String));
    const refused = await send(t.url, 'GET', '/organization', { origin: APP_ORIGIN });
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(JSON.parse(refused.body)).toEqual({ error: 401, message: expect.any(String) });
    const unknownPath = await send(t.url, 'GET', '/no-such-path', { origin: APP_ORIGIN });
    expect(unknownPath.status).toBe(404);
    expect(unknownPath.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  });

  it('gives an origin not in the list no CORS header, preflight or not: its browser withholds the answer', async () => {
    const answer = await preflight(t.url, '/graphql', STRANGER, 'POST', 'authorization,content-type');
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    const read = await send(t.url, 'GET', '/organization', { origin: STRANGER, authorization: `Bearer ${org.token}` });
    expect(read.status).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
    // An origin that only starts like an allowed one is another origin.
    const lookalike = await preflight(t.url, '/graphql', `${APP_ORIGIN}.evil.example.net`, 'POST', 'authorization');
    expect(lookalike.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a page on an allowed origin calls GraphQL and REST with its token in Chromium, reading the request id; a page on another origin cannot', async () => {
    const pages = await servePages();
    const browser = await launchChromium();
    try {
      const allowed = await startTestStack({ CORS_ORIGINS: pages.origins[0]! }, { sharedDatabaseUrl: t.databaseUrl });
      try {
        const call = async (origin: string) => {
          const page = await browser.context.newPage();
          await page.goto(`${origin}/`);
          // Runs in the page (text: the tests compile without the DOM's types). A bearer header makes it a non-simple
          // request: the browser sends a preflight first.
          const result = await page.evaluate<Record<string, unknown>>(`(async () => {
            try {
              const graphql = await fetch(${JSON.stringify(`${allowed.url}/graphql`)}, {
                method: 'POST',
                headers: { authorization: 'Bearer ${org.token}', 'content-type': 'application/json' },
                body: JSON.stringify({ query: '{ organization { id } }' }),
              });
              const rest = await fetch(${JSON.stringify(`${allowed.url}/organization`)}, { headers: { authorization: 'Bearer ${org.token}' } });
              return { graphql: await graphql.json(), requestId: graphql.headers.get('x-request-id'), rest: rest.status };
            } catch (error) {
              return { failed: String(error) };
            }
          })()`);
          await page.close();
          return result;
        };
        const fromAllowed = await call(pages.origins[0]!);
        expect(fromAllowed).toEqual({ graphql: { data: { organization: { id: org.organization.id } } }, requestId: expect.any(String), rest: 200 });
        const fromOther = await call(pages.origins[1]!);
        expect(fromOther).toEqual({ failed: expect.stringContaining('Failed to fetch') });
      } finally {
        await allowed.close();
      }
    } finally {
      await browser.close();
      await pages.close();
    }
  }, 60_000);
});

describe('CORS_ORIGINS unset outside development', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack();
  });
  afterAll(() => t?.close());

  it('answers no preflight (405 as for any method a path does not take) and puts no CORS header on answers', async () => {
    const answer = await preflight(t.url, '/graphql', APP_ORIGIN, 'POST', 'authorization');
    expect(answer.status).toBe(405);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    const read = await send(t.url, 'GET', '/organization', { origin: APP_ORIGIN });
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('the CORS_ORIGINS setting', () => {
  const base = { NODE_ENV: 'test' };
  it('reads a list, *, off; unset: this machine’s origins in development, none elsewhere; anything else stops the start', () => {
    expect(loadConfig({ ...base, CORS_ORIGINS: 'https://a.example.com,http://localhost:5173' }).cors).toEqual({
      mode: 'list',
      origins: ['https://a.example.com', 'http://localhost:5173'],
    });
    expect(loadConfig({ ...base, CORS_ORIGINS: '*' }).cors).toEqual({ mode: 'any' });
    expect(loadConfig({ ...base, CORS_ORIGINS: 'off' }).cors).toEqual({ mode: 'off' });
    expect(loadConfig({ NODE_ENV: 'development' }).cors).toEqual({ mode: 'loopback' });
    expect(loadConfig({ NODE_ENV: 'production', TOKEN_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64') }).cors).toEqual({ mode: 'off' });
    for (const bad of ['https://a.example.com/path', 'a.example.com', 'ftp://a.example.com', 'https://a.example.com:99999']) {
      expect(() => loadConfig({ ...base, CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS/);
    }
  });
});

/** Two pages on two loopback origins of their own (other ports than the API's): what a browser app is served from. */
async function servePages(): Promise<{ origins: string[]; close(): Promise<void> }> {
  const servers: Server[] = [];
  for (let i = 0; i < 2; i += 1) {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>A browser app</title>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }
  return {
    origins: servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    close: () => Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))).then(() => undefined),
  };
}
