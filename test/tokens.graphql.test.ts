import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

let t: TestStack;
let org: OrganizationFixture;
let other: OrganizationFixture;
beforeAll(async () => {
  t = await startTestStack();
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 1 });
  other = await createOrganizationFixture(t.em(), { accounts: 1 });
});
afterAll(() => t.close());

const CREATE = `mutation ($accountId: ID!, $label: String) {
  createAccountToken(accountId: $accountId, label: $label) { token apiToken { id kind accountId label prefix createdAt revokedAt } }
}`;

describe('account token management in GraphQL', () => {
  it('creates an account token shown once, lists it without its secret, and revokes it at once', async () => {
    const account = org.accounts[1]!.account;
    const created = await graphql(t.url, CREATE, { token: org.token, variables: { accountId: account.id, label: 'kiosk' } });
    expect(created.body.errors).toBeUndefined();
    const { token, apiToken } = created.body.data.createAccountToken;
    expect(token).toMatch(/^lga_[A-Za-z0-9_-]{43}$/);
    expect(apiToken).toMatchObject({ kind: 'ACCOUNT', accountId: account.id, label: 'kiosk', prefix: token.slice(0, 10), revokedAt: null });

    // The new token works, confined to its account.
    const locations = await graphql(t.url, '{ locations { totalCount } }', { token });
    expect(locations.body.data.locations.totalCount).toBe(1);

    const listed = await graphql(t.url, `{ apiTokens(accountId: "${account.id}") { id prefix label } }`, { token: org.token });
    expect(listed.body.data.apiTokens.map((x: { id: string }) => x.id)).toContain(apiToken.id);
    expect(JSON.stringify(listed.body)).not.toContain(token);

    const revoked = await graphql(t.url, `mutation { revokeApiToken(id: "${apiToken.id}") { id revokedAt } }`, { token: org.token });
    expect(revoked.body.data.revokeApiToken.revokedAt).toEqual(expect.any(String));
    const refused = await http(t.url, 'GET', '/business-profile', { token });
    expect(refused.status).toBe(401);

    const hidden = await graphql(t.url, `{ apiTokens(accountId: "${account.id}") { id } }`, { token: org.token });
    expect(hidden.body.data.apiTokens.map((x: { id: string }) => x.id)).not.toContain(apiToken.id);
    const withRevoked = await graphql(t.url, `{ apiTokens(accountId: "${account.id}", includeRevoked: true) { id } }`, { token: org.token });
    expect(withRevoked.body.data.apiTokens.map((x: { id: string }) => x.id)).toContain(apiToken.id);
  });

  it('is for organization tokens only, and never reaches another organization', async () => {
    const byAccount = await graphql(t.url, CREATE, { token: org.accounts[0]!.token, variables: { accountId: org.accounts[0]!.account.id } });
    expect(byAccount.body.errors?.[0]?.extensions?.code).toBe('ORGANIZATION_TOKEN_REQUIRED');

    const foreignAccount = await graphql(t.url, CREATE, { token: org.token, variables: { accountId: other.accounts[0]!.account.id } });
    expect(foreignAccount.body.errors?.[0]).toMatchObject({ message: 'Account not found', extensions: { code: 'NOT_FOUND' } });

    const theirs = await graphql(t.url, CREATE, { token: other.token, variables: { accountId: other.accounts[0]!.account.id } });
    const foreignRevoke = await graphql(t.url, `mutation { revokeApiToken(id: "${theirs.body.data.createAccountToken.apiToken.id}") { id } }`, {
      token: org.token,
    });
    expect(foreignRevoke.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const stillWorks = await graphql(t.url, '{ locations { totalCount } }', { token: theirs.body.data.createAccountToken.token });
    expect(stillWorks.body.errors).toBeUndefined();

    const everything = await graphql(t.url, '{ apiTokens { accountId } }', { token: org.token });
    const accountIds = new Set(everything.body.data.apiTokens.map((x: { accountId: string }) => x.accountId));
    expect(accountIds.has(other.accounts[0]!.account.id)).toBe(false);
  });
});
