import { graphql, http } from './support/http';
import { eventually } from './support/posts';
import { runCli } from './support/process';
import { startTestStack, type TestStack } from './support/stack';

let t: TestStack;
let env: Record<string, string>;
beforeAll(async () => {
  t = await startTestStack();
  // The CLI runs against the same database as the running server, as product decisions require.
  env = { DATABASE_URL: t.databaseUrl };
});
afterAll(() => t.close());

function json(stdout: string): any {
  return JSON.parse(stdout);
}

describe('npm run cli', () => {
  it('org create prints {organization_id, token}, and the token works against the running server', async () => {
    const result = await runCli(['org', 'create', '--name', 'Acme Dental', '--beta-api'], env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = json(result.stdout);
    expect(Object.keys(out).sort()).toEqual(['organization_id', 'token']);
    expect(out.token).toMatch(/^lgo_[A-Za-z0-9_-]{43}$/);

    const organization = await http(t.url, 'GET', '/organization', { token: out.token });
    expect(organization.status).toBe(200);
    expect(organization.body.payload).toMatchObject({ id: out.organization_id, name: 'Acme Dental', accounts: [] });
    const flags = await graphql(t.url, '{ organization { betaApi citationsApi } }', { token: out.token });
    expect(flags.body.data.organization).toEqual({ betaApi: true, citationsApi: false });
  });

  it('demo prints the documented JSON, and its organization and account tokens work', async () => {
    const result = await runCli(['demo'], env);
    expect(result.code).toBe(0);
    const demo = json(result.stdout);
    expect(Object.keys(demo).sort()).toEqual(['accounts', 'organization_id', 'token']);
    expect(demo.accounts).toHaveLength(3);

    const accounts = await http(t.url, 'GET', '/organization/accounts', { token: demo.token });
    expect(accounts.status).toBe(200);
    expect(accounts.body.payload.map((a: { id: string }) => a.id)).toEqual(demo.accounts.map((a: { id: string }) => a.id));
    const flags = await graphql(t.url, '{ organization { betaApi citationsApi } }', { token: demo.token });
    expect(flags.body.data.organization).toEqual({ betaApi: true, citationsApi: true });

    for (const account of demo.accounts) expect(Object.keys(account).sort()).toEqual(['id', 'location_ids', 'token']);
    // The third account's locations are imported from the provider after the seed (the next test): it prints none.
    expect(demo.accounts[2].location_ids).toEqual([]);
    for (const account of demo.accounts.slice(0, 2)) {
      const locations = await graphql(t.url, '{ locations(first: 100) { edges { node { id websiteUri } } } }', {
        token: account.token,
      });
      const nodes = locations.body.data.locations.edges.map((e: { node: { id: string; websiteUri: string | null } }) => e.node);
      expect(nodes.map((n: { id: string }) => n.id).sort()).toEqual([...account.location_ids].sort());
    }
    // Locations with a website and without, as the demo promises (the post rules depend on it).
    const all = await graphql(t.url, `{ locations(accountId: "${demo.accounts[0].id}") { edges { node { websiteUri } } } }`, {
      token: demo.token,
    });
    const websites = all.body.data.locations.edges.map((e: { node: { websiteUri: string | null } }) => e.node.websiteUri);
    expect(websites.some((w: string | null) => w)).toBe(true);
    expect(websites.some((w: string | null) => w === null)).toBe(true);
  });

  it('demo on a running server: its jobs are the server\'s at once, so its import ends and its locations reach the provider without a restart', async () => {
    const result = await runCli(['demo'], env);
    expect(result.code).toBe(0);
    const demo = json(result.stdout);
    // The CLI runs no workers: the running server's take the jobs the seed queued, woken by its commit.
    const accounts = await eventually(async () => {
      const answer = await graphql(t.url, '{ accounts { name syncStatus syncError } }', { token: demo.token });
      const all: { name: string; syncStatus: string }[] = answer.body.data.accounts;
      return all.every((account) => !['QUEUED', 'RUNNING'].includes(account.syncStatus)) ? all : undefined;
    }, 30000, 'the demo\'s import');
    // Its own two are made here (nothing to import); Alice's bakeries come from the provider.
    expect(accounts.map((account) => account.syncStatus).sort()).toEqual(['NONE', 'NONE', 'SUCCEEDED']);
    const connected = await eventually(async () => {
      const flags: boolean[] = [];
      for (const account of demo.accounts) {
        const locations = await http(t.url, 'GET', `/location?account_id=${account.id}&include_fields=connected`, { token: demo.token });
        flags.push(...locations.body.data.map((location: { connected: boolean }) => location.connected));
      }
      return flags.every(Boolean) ? flags : undefined;
    }, 30000, 'the demo\'s locations at the provider');
    // Its own three, and Alice's two, imported.
    expect(connected).toHaveLength(5);
  });

  it('token create prints {token} for the organization or one of its accounts', async () => {
    const org = json((await runCli(['org', 'create', '--name', 'Tokens Inc'], env)).stdout);
    const orgToken = json((await runCli(['token', 'create', '--org', org.organization_id], env)).stdout);
    expect(Object.keys(orgToken)).toEqual(['token']);
    expect((await http(t.url, 'GET', '/organization', { token: orgToken.token })).status).toBe(200);

    const demo = json((await runCli(['demo'], env)).stdout);
    const accountToken = json(
      (await runCli(['token', 'create', '--org', demo.organization_id, '--account', demo.accounts[1].id], env)).stdout,
    );
    expect(accountToken.token).toMatch(/^lga_/);
    // An account token is an account token: organization-only routes refuse it.
    expect((await http(t.url, 'GET', '/organization', { token: accountToken.token })).status).toBe(403);
  });

  it('fails clearly: unknown organization (exit 1), foreign account (exit 1), bad usage (exit 2)', async () => {
    const unknown = await runCli(['token', 'create', '--org', '01a20148-0000-7000-8000-000000000000'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('Organization not found');

    const a = json((await runCli(['org', 'create', '--name', 'A'], env)).stdout);
    const demo = json((await runCli(['demo'], env)).stdout);
    const foreign = await runCli(['token', 'create', '--org', a.organization_id, '--account', demo.accounts[0].id], env);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr.trim()).toBe('Account not found');

    for (const args of [['org', 'create'], ['org', 'create', '--name', 'x', '--bogus'], ['nothing']]) {
      const usage = await runCli(args, env);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toMatch(/Usage:/);
      expect(usage.stdout).toBe('');
    }
  });
});
