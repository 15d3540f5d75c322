import { networkInterfaces } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../src/config';
import { sandboxesWanted } from '../dev/provider-sandboxes';
import { startAlphaSandbox } from '../sandboxes/alpha/main';
import { ROOT, startServerProcess } from './support/process';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The provider sandboxes are mounted only when asked for and never beside a real provider, and their controls
 * (reset, scripted failures, new identities: no authentication) answer only this machine.
 */

/** An address of this machine that is not loopback: a request to it comes from that address, not from 127.0.0.1. */
function nonLoopbackAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && !entry.internal && entry.family === 'IPv4');
  if (!found) throw new Error('this test needs a network interface with a non-loopback IPv4 address');
  return found.address;
}

/** The same server, reached through another interface of this machine. */
function through(url: string, host: string): string {
  const parsed = new URL(url);
  parsed.hostname = host;
  return parsed.toString().replace(/\/$/, '');
}

async function send(url: string, method: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Every control route a Fastify instance serves, as [method, path], read from its own route table. */
function controlRoutesOf(app: { printRoutes(options: { commonPrefix: boolean }): string }): [string, string][] {
  // printRoutes draws a tree: each line is a path segment under the line above it one level up (4 characters of
  // indent a level), with its methods when a route ends there.
  const segments: string[] = [];
  return app
    .printRoutes({ commonPrefix: false })
    .split('\n')
    .flatMap((line) => {
      const match = /^((?:[│ ├└─]{4})+)(\S+)(?: \(([A-Z, ]+)\))?$/.exec(line.trimEnd());
      if (!match) return [];
      const depth = match[1]!.length / 4 - 1;
      segments.length = depth;
      segments.push(match[2]!);
      const path = segments.join('');
      if (!match[3] || !path.includes('/_control/')) return [];
      return match[3].split(', ').filter((method) => method !== 'HEAD').map((method): [string, string] => [method, path]);
    });
}

describe('when the sandboxes are mounted', () => {
  it('defaults to on only in development without a provider URL', () => {
    expect(sandboxesWanted({})).toBe(true);
    expect(sandboxesWanted({ NODE_ENV: 'development' })).toBe(true);
    expect(sandboxesWanted({ NODE_ENV: 'test' })).toBe(false);
    expect(sandboxesWanted({ NODE_ENV: 'production' })).toBe(false);
    for (const name of ['ALPHA_API_URL', 'ALPHA_OAUTH_URL', 'BETA_API_URL']) {
      expect(sandboxesWanted({ [name]: 'https://provider.example' })).toBe(false);
      expect(sandboxesWanted({ NODE_ENV: 'development', [name]: 'https://provider.example' })).toBe(false);
      expect(sandboxesWanted({ SANDBOX: 'off', [name]: 'https://provider.example' })).toBe(false);
    }
    expect(sandboxesWanted({ NODE_ENV: 'test', SANDBOX: 'on' })).toBe(true);
    expect(sandboxesWanted({ SANDBOX: 'off' })).toBe(false);
    expect(sandboxesWanted({ SANDBOX: '' })).toBe(true);
    expect(() => sandboxesWanted({ SANDBOX: 'yes' })).toThrow(ConfigError);
  });

  it('refuses SANDBOX=on beside a provider URL, naming the variables', () => {
    const attempt = () => sandboxesWanted({ SANDBOX: 'on', ALPHA_API_URL: 'https://alpha.example', BETA_API_URL: 'https://beta.example' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/SANDBOX="on".*ALPHA_API_URL="https:\/\/alpha\.example".*BETA_API_URL="https:\/\/beta\.example"/);
    expect(() => sandboxesWanted({ SANDBOX: 'on', ALPHA_OAUTH_URL: 'https://id.example' })).toThrow(/ALPHA_OAUTH_URL/);
  });

  it('stops `npm start` with exit code 78 on SANDBOX=on beside a provider URL', async () => {
    const server = startServerProcess({ NODE_ENV: 'development', SANDBOX: 'on', ALPHA_API_URL: 'https://alpha.example' });
    expect(await server.exited()).toBe(78);
    expect(server.output()).toContain('Invalid configuration');
    expect(server.output()).toContain('SANDBOX="on"');
    expect(server.output()).toContain('ALPHA_API_URL="https://alpha.example"');
  }, 60000);

  it('has no simulator in the production build', () => {
    const built = readdirSync(path.join(ROOT, 'dist'), { recursive: true, encoding: 'utf8' });
    expect(built.filter((file) => file.endsWith('.js')).length).toBeGreaterThan(100);
    expect(built.filter((file) => /sandbox/i.test(file))).toEqual([]);
    for (const file of built.filter((name) => name.endsWith('.js'))) {
      const required = [...readFileSync(path.join(ROOT, 'dist', file), 'utf8').matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]!);
      expect([file, required.filter((name) => /sandbox|\/dev\//.test(name))]).toEqual([file, []]);
    }
  }, 60000);

  it('serves no sandbox unless asked for: not in tests, not beside a provider URL in development', async () => {
    const provider = await startAlphaSandbox({ port: 0 });
    const stacks: TestStack[] = [];
    try {
      // SANDBOX empty counts as unset: the default applies.
      const providers = { ALPHA_API_URL: provider.url, BETA_API_URL: provider.url };
      stacks.push(await startTestStack({ SANDBOX: '', ...providers }));
      stacks.push(await startTestStack({ SANDBOX: '', NODE_ENV: 'development', ...providers }));
      for (const stack of stacks) {
        for (const path of ['/sandbox/alpha/_control/state', '/sandbox/beta/_control/state', '/sandbox/alpha/oauth/authorize']) {
          const answer = await send(`${stack.url}${path}`, 'GET');
          expect([path, answer.status, answer.body]).toEqual([path, 404, { error: 404, message: expect.any(String) }]);
        }
        expect((await send(`${stack.url}/sandbox/alpha/_control/reset`, 'POST')).status).toBe(404);
      }
    } finally {
      for (const stack of stacks) await stack.close();
      await provider.close();
    }
  }, 120000);
});

describe('the sandbox controls', () => {
  let t: TestStack;
  let outside: string;

  beforeAll(async () => {
    // Listening on every interface, IPv6 and IPv4 (whose peers then show as ::ffff:a.b.c.d): the controls must
    // still answer only this machine.
    t = await startTestStack({ HOST: '::' });
    outside = through(t.url, nonLoopbackAddress());
  });
  afterAll(() => t?.close());

  it('answers every control of both sandboxes on loopback, and 403 from another address whatever its headers say', async () => {
    const controls = controlRoutesOf(t.stack.server!.app);
    // Both sandboxes' controls are seen: the list is the server's own, so a new control is checked by existing.
    expect(controls.map(([method, path]) => `${method} ${path}`)).toEqual(
      expect.arrayContaining(['POST /sandbox/alpha/_control/reset', 'POST /sandbox/alpha/_control/identities', 'POST /sandbox/beta/_control/companies', 'GET /sandbox/beta/_control/state']),
    );
    const loopback = through(t.url, '127.0.0.1');
    const before = await send(`${loopback}/sandbox/alpha/_control/state`, 'GET');
    expect(before.status).toBe(200);
    for (const [method, path] of controls) {
      const forged: Record<string, string> = { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1', forwarded: 'for=127.0.0.1' };
      for (const headers of [{}, forged]) {
        const refused = await send(`${outside}${path}`, method, method === 'GET' ? undefined : {}, headers);
        expect([method, path, refused.status]).toEqual([method, path, 403]);
        // In each sandbox's own error shape.
        expect(refused.body).toEqual(
          path.startsWith('/sandbox/alpha')
            ? { error: expect.objectContaining({ code: 403, status: 'PERMISSION_DENIED', message: expect.stringContaining('loopback') }) }
            : expect.objectContaining({ code: 'FORBIDDEN', message: expect.stringContaining('loopback') }),
        );
      }
    }
    // Nothing the refused requests asked for happened: no reset, no identity, no failure scripted.
    const after = await send(`${loopback}/sandbox/alpha/_control/state`, 'GET');
    expect(after.body.identities).toEqual(before.body.identities);
    expect(after.body.failures).toEqual([]);
    // The same controls answer loopback, IPv4 and IPv6.
    expect((await send(`${loopback}/sandbox/beta/_control/state`, 'GET')).status).toBe(200);
    expect((await send(`${through(t.url, '[::1]')}/sandbox/alpha/_control/state`, 'GET')).status).toBe(200);
  });

  it('keeps the provider API itself open to any address, as the provider is', async () => {
    const accounts = await send(`${outside}/sandbox/alpha/v4/accounts`, 'GET', undefined, { authorization: 'Bearer sandbox-access-token' });
    expect(accounts.status).toBe(200);
    expect(accounts.body.accounts.length).toBeGreaterThan(0);
    // An unknown control is not found from anywhere.
    expect((await send(`${outside}/sandbox/alpha/_control/nothing`, 'GET')).status).toBe(404);
  });

  it('guards a sandbox running on its own the same way', async () => {
    const sandbox = await startAlphaSandbox({ port: 0, host: '0.0.0.0' });
    try {
      expect((await send(`${through(sandbox.url, nonLoopbackAddress())}/_control/reset`, 'POST')).status).toBe(403);
      expect((await send(`${through(sandbox.url, '127.0.0.1')}/_control/reset`, 'POST')).status).toBe(200);
    } finally {
      await sandbox.close();
    }
  });
});
