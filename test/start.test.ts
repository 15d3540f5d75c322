import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { http } from './support/http';
import { freePort } from './support/ports';
import { startServerProcess } from './support/process';

/** What `npm start` does after building: the whole stack in one process, as a user runs it. */
describe('npm start', () => {
  it('stops with a message naming the variable when the configuration is bad', async () => {
    for (const [name, value] of [['PORT', 'abc'], ['LOG_LEVEL', 'loud'], ['DATABASE_URL', 'mysql://x']]) {
      const server = startServerProcess({ [name!]: value! });
      expect(await server.exited()).toBe(78);
      expect(server.output()).toContain('Invalid configuration');
      expect(server.output()).toContain(`${name}="${value}"`);
    }
  });

  it('brings up the embedded PostgreSQL, seeds the demo once, serves, stops cleanly and keeps the data', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-start-'));
    const env = {
      DATA_DIR: dataDir,
      PORT: '0',
      NODE_ENV: 'development',
      EMBEDDED_PG_PORT: String(await freePort()),
    };
    try {
      const first = startServerProcess(env);
      const [, url] = await first.waitFor(/GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/, 90000);
      const [, token] = await first.waitFor(/its token \(also in .*demo\.json\):\n\s+(lgo_\S+)/);
      expect(first.output()).toContain('migrations applied now: Migration');

      expect((await http(url!, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
      expect((await http(url!, 'GET', '/readyz')).body).toEqual({ status: 'ready' });
      const organization = await http(url!, 'GET', '/organization', { token });
      expect(organization.status).toBe(200);
      expect(organization.body.payload.accounts).toHaveLength(2);
      const demoFile = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
      expect(demoFile.token).toBe(token);

      first.child.kill('SIGINT');
      expect(await first.exited()).toBe(0);
      // PostgreSQL removes its pid file only on a clean shutdown.
      expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);

      const second = startServerProcess(env);
      const [, url2] = await second.waitFor(/GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/, 60000);
      expect(second.output()).toContain('schema up to date');
      expect(second.output()).toContain(token);
      const again = await http(url2!, 'GET', '/organization', { token });
      expect(again.body.payload.id).toBe(organization.body.payload.id);
      second.child.kill('SIGTERM');
      expect(await second.exited()).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180000);
});
