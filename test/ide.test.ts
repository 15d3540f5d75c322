import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, NoDeprecatedCustomRule, parse, specifiedRules, validate } from 'graphql';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The browser IDE (Ruru) at GET /graphql, checked over HTTP (the page is Ruru's own; the dashboard, ours, has a
 * browser test): what a blank IDE page would have broken: a URL to a CDN (the machine has no internet), an asset not
 * served or served with the wrong type, or the IDE answering API requests.
 */

/** What a browser sends when the address bar opens a page. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
// The package's own files, to compare with what is served (its exports hide package.json: go via ruru/static).
const RURU_STATIC = path.join(path.dirname(require.resolve('ruru/static')), '..', 'static');

let t: TestStack;
let html: string;
let pageUrl: URL;

beforeAll(async () => {
  t = await startTestStack();
  pageUrl = new URL('/graphql', t.url);
  const res = await fetch(pageUrl, { headers: { accept: BROWSER_ACCEPT } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  html = await res.text();
});

afterAll(async () => {
  await t?.close();
});

/** The IDE's client config, as the page's inline script assigns it. */
function ruruConfig(): Record<string, unknown> {
  const match = /const RURU_CONFIG = ([\s\S]*?);\s*<\/script>/.exec(html);
  expect(match).not.toBeNull();
  return JSON.parse(match![1]!) as Record<string, unknown>;
}

/** Every URL the page makes the browser load: tags, inline module imports, and Monaco's worker scripts. */
function referencedAssets(): string[] {
  const urls = new Set<string>();
  for (const [, url] of html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)) urls.add(url!);
  for (const [, url] of html.matchAll(/\b(?:from|import)\s*"([^"]+)"/g)) urls.add(url!);
  // The worker files are named in an inline script and resolved against the config's staticPath.
  const staticPath = String(ruruConfig().staticPath);
  for (const [, file] of html.matchAll(/worker\("([^"]+)"\)/g)) urls.add(staticPath + file);
  return [...urls].map((url) => url.replaceAll('&amp;', '&'));
}

describe('GET /graphql from a browser', () => {
  test('answers the IDE page with the root it mounts into', () => {
    expect(html).toContain('<div id="ruru-root">');
    expect(ruruConfig()).toMatchObject({ endpoint: '/graphql', staticPath: '/graphql-ide/' });
  });

  test('opens with a document of current fields only: valid against the schema, nothing @deprecated', () => {
    const schema = buildSchema(readFileSync(path.join(__dirname, '..', 'schema.graphql'), 'utf8'));
    const document = parse(String(ruruConfig().initialQuery));
    expect(validate(schema, document, [...specifiedRules, NoDeprecatedCustomRule]).map((error) => error.message)).toEqual([]);
  });

  test('points every script, stylesheet, worker and config URL at this server', () => {
    const assets = referencedAssets();
    // Guards the extraction itself: an empty list would make the checks below pass vacuously.
    expect(assets).toEqual(
      expect.arrayContaining(['/graphql-ide/ruru.js', '/graphql-ide/ruru.css', '/graphql-ide/graphqlWorker.js']),
    );
    const config = ruruConfig();
    const configUrls = ['endpoint', 'staticPath', 'subscriptionEndpoint']
      .map((key) => config[key])
      .filter((value): value is string => typeof value === 'string');
    for (const url of [...assets, ...configUrls]) {
      expect({ url, origin: new URL(url, pageUrl).origin }).toEqual({ url, origin: pageUrl.origin });
    }
    // Nothing absolute to another host anywhere in the page (a CDN link in any form).
    const absolute = [...html.matchAll(/(?:https?|wss?):\/\/[^\s"'<>)]+|["'(]\/\/[^\s"'<>)]+/g)].map((m) => m[0]);
    expect(absolute.filter((url) => !url.includes(`//${pageUrl.host}`))).toEqual([]);
  });
});

describe('the IDE assets under /graphql-ide/', () => {
  function expectedType(url: string): RegExp {
    if (url.endsWith('.ttf')) return /^font\/ttf/;
    return url.endsWith('.css') ? /^text\/css/ : /^(text|application)\/javascript/;
  }

  function packageFile(url: string): Buffer {
    return readFileSync(path.join(RURU_STATIC, url.slice('/graphql-ide/'.length)));
  }

  test('serves every asset the page references, brotli-compressed to a browser, with its type', async () => {
    for (const url of referencedAssets()) {
      // Browsers accept br, and the package stores its files brotli-compressed: fetch decodes them.
      const res = await fetch(new URL(url, pageUrl), { headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect({ url, status: res.status }).toEqual({ url, status: 200 });
      expect(res.headers.get('content-type')).toMatch(expectedType(url));
      expect(res.headers.get('content-encoding')).toBe('br');
      expect(Buffer.from(await res.arrayBuffer()).equals(packageFile(url))).toBe(true);
    }
  });

  test('serves the chunks ruru.js loads on demand, decompressed for a client without brotli', async () => {
    const files = readdirSync(RURU_STATIC).filter((file) => /\.(js|css|ttf)$/.test(file));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const url = `/graphql-ide/${file}`;
      const res = await fetch(new URL(url, pageUrl), { headers: { 'accept-encoding': 'identity' } });
      expect({ url, status: res.status }).toEqual({ url, status: 200 });
      expect(res.headers.get('content-type')).toMatch(expectedType(url));
      expect(res.headers.get('content-encoding')).toBeNull();
      expect(Buffer.from(await res.arrayBuffer()).equals(packageFile(url))).toBe(true);
    }
  });

  test('answers 304 to a browser revalidating an unchanged asset, per encoding', async () => {
    const url = new URL('/graphql-ide/ruru.css', pageUrl);
    for (const encoding of ['br', 'identity']) {
      const first = await fetch(url, { headers: { 'accept-encoding': encoding } });
      await first.arrayBuffer();
      const etag = first.headers.get('etag');
      expect(etag).toMatch(/^"[^"]+"$/);
      const again = await fetch(url, { headers: { 'accept-encoding': encoding, 'if-none-match': etag! } });
      expect(again.status).toBe(304);
    }
  });

  test('answers 404 for a file the package does not have, or one outside its folder', async () => {
    for (const url of ['/graphql-ide/missing.js', '/graphql-ide/ruru.js.map', '/graphql-ide/..%2Fpackage.json']) {
      const res = await fetch(new URL(url, pageUrl));
      expect({ url, status: res.status }).toEqual({ url, status: 404 });
    }
  });
});

describe('the IDE does not swallow API requests', () => {
  test('POST /graphql with JSON runs the operation, even with a browser Accept header', async () => {
    for (const accept of ['application/json', BROWSER_ACCEPT]) {
      const res = await fetch(new URL('/graphql', t.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ data: { __typename: 'Query' } });
    }
  });

  test('GET /graphql?query= answers JSON, to a GraphQL client and to a browser following a link', async () => {
    for (const accept of ['application/json', BROWSER_ACCEPT]) {
      const res = await fetch(new URL('/graphql?query={__typename}', t.url), { headers: { accept } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ data: { __typename: 'Query' } });
    }
  });

  test('GET /graphql without a query from a GraphQL client is a GraphQL error, not the page', async () => {
    const res = await fetch(new URL('/graphql', t.url), { headers: { accept: 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).not.toMatch(/html/);
  });
});
