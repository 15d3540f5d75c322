import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';

/**
 * What the front door (GET /) and the start banner both list: the places a newcomer looks for, each once, so the
 * page, its JSON and the banner never disagree (docs/operations.md, "The front door").
 */

export const SERVICE_NAME = 'Listings Gateway';

export interface FrontDoorLink {
  /** The link's key in the JSON answer. */
  rel: string;
  /** On this server's origin. */
  path: string;
  /** What it is, as the page and the banner say it. */
  title: string;
}

/**
 * The links of this server. Metrics are listed only when this port serves them (METRICS=on): on a listener of their
 * own (METRICS=<port>) they are kept off the API's port on purpose, and the page does not point there.
 */
export function frontDoorLinks(config: Pick<Config, 'metrics'>): FrontDoorLink[] {
  return [
    { rel: 'graphql', path: '/graphql', title: 'GraphQL (HTTP, WebSocket and the IDE in a browser)' },
    { rel: 'docs', path: '/docs', title: 'REST reference (in a browser)' },
    { rel: 'dashboard', path: '/dashboard', title: 'Operations dashboard (in a browser)' },
    { rel: 'openapi', path: '/openapi.json', title: 'OpenAPI of the REST paths' },
    ...(config.metrics.mode === 'on' ? [{ rel: 'metrics', path: '/metrics', title: 'Metrics (Prometheus)' }] : []),
    { rel: 'health', path: '/healthz', title: 'Health (the process answers)' },
    { rel: 'ready', path: '/readyz', title: 'Ready (the database answers)' },
  ];
}

let version: string | undefined;

/**
 * The product's version, from its package.json: the nearest one up from this file (src/home in the sources,
 * dist/src/home or dist-dev/src/home once built, the project's root above both). Read once.
 */
export function productVersion(): string {
  if (version === undefined) {
    let dir = __dirname;
    for (;;) {
      const candidate = path.join(dir, 'package.json');
      const found = readPackage(candidate);
      if (found) {
        version = found;
        break;
      }
      const parent = path.dirname(dir);
      // No package.json of ours above: a copy of the build without it; the page says so rather than failing.
      if (parent === dir) {
        version = 'unknown';
        break;
      }
      dir = parent;
    }
  }
  return version;
}

/** The version in a package.json that names this product; undefined for another package's, or no file. */
function readPackage(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined; // no package.json at this level: look one up
  }
  const manifest = JSON.parse(text) as { name?: unknown; version?: unknown };
  return manifest.name === 'listings-gateway' && typeof manifest.version === 'string' ? manifest.version : undefined;
}
