import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './support/process';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The front door (GET /), the icon, and the reference page's copy of the document, over HTTP. Outside development
 * (this stack runs NODE_ENV=test): no token anywhere. The token in development and the pages in a browser:
 * test/front-door.browser.test.ts and test/start.test.ts.
 */

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
});

afterAll(async () => {
  await t?.close();
});

describe('GET /', () => {
  test('answers an API client with JSON: the service, its version and its links, every one of which answers', async () => {
    const res = await fetch(t.url, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('vary')).toMatch(/accept/i);
    const body = (await res.json()) as { service: string; version: string; links: Record<string, { href: string; title: string }>; demo_token?: string };
    expect(body.service).toBe('Listings Gateway');
    expect(body.version).toBe(VERSION);
    expect(Object.fromEntries(Object.entries(body.links).map(([rel, link]) => [rel, link.href]))).toEqual({
      graphql: '/graphql',
      docs: '/docs',
      dashboard: '/dashboard',
      openapi: '/openapi.json',
      metrics: '/metrics',
      health: '/healthz',
      ready: '/readyz',
    });
    expect(body).not.toHaveProperty('demo_token');
    for (const link of Object.values(body.links)) {
      const followed = await fetch(new URL(link.href, t.url), { headers: { accept: BROWSER_ACCEPT } });
      expect({ href: link.href, status: followed.status }).toEqual({ href: link.href, status: 200 });
      await followed.arrayBuffer();
    }
  });

  test('answers curl (no Accept) with the same JSON', async () => {
    const res = await fetch(t.url, { headers: { accept: '*/*' } });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ service: 'Listings Gateway', links: { docs: { href: '/docs' } } });
  });

  test('answers a browser with a page naming the service and its version, linking the same places', async () => {
    const res = await fetch(t.url, { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await res.text();
    expect(html).toContain('<h1>Listings Gateway</h1>');
    expect(html).toContain(`Version ${VERSION}`);
    const hrefs = [...html.matchAll(/<a href="([^"]+)"/g)].map((match) => match[1]);
    expect(hrefs).toEqual(['/graphql', '/docs', '/dashboard', '/openapi.json', '/metrics', '/healthz', '/readyz']);
    // Outside development there is no token to show.
    expect(html).not.toMatch(/lgo_|Demo token/);
  });
});

test('GET /favicon.ico answers an icon', async () => {
  const res = await fetch(new URL('/favicon.ico', t.url));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/x-icon');
  const icon = Buffer.from(await res.arrayBuffer());
  // ICONDIR: reserved 0, type 1 (icon), one image of 16x16 at 32 bits.
  expect([icon.readUInt16LE(0), icon.readUInt16LE(2), icon.readUInt16LE(4), icon[6], icon[7], icon.readUInt16LE(12)]).toEqual([0, 1, 1, 16, 16, 32]);
  expect(icon.readUInt32LE(14) + icon.readUInt32LE(18)).toBe(icon.length);
});

describe('the reference page', () => {
  /** Every object of a JSON document, with its path. */
  function* objects(node: unknown, at = '#'): Generator<[string, Record<string, unknown>]> {
    if (Array.isArray(node)) for (const [index, item] of node.entries()) yield* objects(item, `${at}/${index}`);
    else if (typeof node === 'object' && node !== null) {
      yield [at, node as Record<string, unknown>];
      for (const [key, value] of Object.entries(node)) yield* objects(value, `${at}/${key}`);
    }
  }

  test('renders /openapi.json in its OpenAPI 3.0 form, which Swagger UI draws fast, saying the same', async () => {
    const page = await (await fetch(new URL('/docs', t.url))).text();
    expect(page).toContain("url: '/docs/openapi.json'");
    expect(page).toContain('<div id="swagger-ui"></div>');
    const original = (await (await fetch(new URL('/openapi.json', t.url))).json()) as Record<string, any>;
    const view = (await (await fetch(new URL('/docs/openapi.json', t.url))).json()) as Record<string, any>;
    expect(original.openapi).toMatch(/^3\.1\./);
    expect(view.openapi).toBe('3.0.3');
    expect(Object.keys(view.paths)).toEqual(Object.keys(original.paths));
    expect(Object.keys(view.components.schemas)).toEqual(Object.keys(original.components.schemas));
    // Nothing of 3.1 is left in the copy, and each 3.1 form became its 3.0 equivalent at the same place.
    const viewAt = new Map(objects(view));
    let translated = 0;
    for (const [at, node] of objects(original)) {
      const copy = viewAt.get(at);
      if (Array.isArray(node.type)) {
        expect({ at, type: copy?.type, nullable: copy?.nullable }).toEqual({ at, type: node.type.find((type: string) => type !== 'null'), nullable: true });
        translated += 1;
      }
      if ('const' in node && !at.includes('/properties/const')) expect({ at, enum: copy?.enum }).toEqual({ at, enum: [node.const] });
    }
    expect(translated).toBeGreaterThan(10);
    for (const [at, node] of viewAt) {
      expect({ at, type: Array.isArray(node.type) || node.type === 'null' }).toEqual({ at, type: false });
      expect({ at, const: 'const' in node && !at.endsWith('/properties') }).toEqual({ at, const: false });
    }
  });
});
