import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually, pollPost, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { subscribe } from './support/ws';

let t: TestStack;
let org: OrganizationFixture;
let other: OrganizationFixture;

const POST_UPDATED = `subscription ($postId: ID, $locationId: ID) {
  postUpdated(postId: $postId, locationId: $locationId) { id state version postId locationId accountId source updateTime params { summary } }
}`;

beforeAll(async () => {
  t = await startTestStack({ POST_RATE_LIMIT_PER_MINUTE: '1000' });
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 2, connected: true });
  other = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
});
beforeEach(() => sandboxOf(t.url).reset());
afterAll(() => t.close());

function createPost(fixture: OrganizationFixture, account: number, location: number, summary: string) {
  return http(t.url, 'POST', `/post?account_id=${fixture.accounts[account]!.account.id}`, {
    token: fixture.token,
    body: { location_id: fixture.accounts[account]!.locations[location]!.id, params: { summary } },
  });
}

describe('postUpdated over graphql-ws', () => {
  it('delivers the whole post after each change, every transition in order', async () => {
    await sandboxOf(t.url).configure({ processingMs: 300 });
    const watcher = await subscribe(t.url, org.token, POST_UPDATED, {});
    try {
      const created = await createPost(org, 0, 0, 'Watched post');
      const id = created.body.payload.id;
      await pollPost(t.url, org.token, org.accounts[0]!.account.id, id, (p) => p.state === 'LIVE');
      await watcher.waitFor(3);
      const mine = watcher.events.map((e) => e.postUpdated).filter((p) => p.id === id);
      expect(mine.map((p) => p.state)).toEqual(['SENDING', 'PROCESSING', 'LIVE']);
      expect(mine.map((p) => p.version)).toEqual([1, 2, 3]);
      expect(mine[2]).toMatchObject({
        id,
        locationId: org.accounts[0]!.locations[0]!.id,
        accountId: org.accounts[0]!.account.id,
        source: 'EXTERNAL_API',
        postId: expect.stringMatching(/localPosts/),
        params: { summary: 'Watched post' },
      });
      expect(watcher.errors).toEqual([]);
    } finally {
      await watcher.close();
    }
  });

  it('filters by postId and locationId', async () => {
    const byLocation = await subscribe(t.url, org.token, POST_UPDATED, { locationId: org.accounts[0]!.locations[1]!.id });
    try {
      const elsewhere = await createPost(org, 0, 0, 'Not this location');
      const here = await createPost(org, 0, 1, 'This location');
      await pollPost(t.url, org.token, org.accounts[0]!.account.id, elsewhere.body.payload.id);
      await pollPost(t.url, org.token, org.accounts[0]!.account.id, here.body.payload.id);
      await byLocation.waitFor(2);
      expect(new Set(byLocation.events.map((e) => e.postUpdated.id))).toEqual(new Set([here.body.payload.id]));
    } finally {
      await byLocation.close();
    }
  });

  it('ends a running subscription when its token is revoked (the socket closes with 4403)', async () => {
    const created = await graphql(t.url, `mutation ($a: ID!) { createAccountToken(accountId: $a) { token apiToken { id } } }`, {
      token: org.token,
      variables: { a: org.accounts[0]!.account.id },
    });
    const { token, apiToken } = created.body.data.createAccountToken;
    const watcher = await subscribe(t.url, token, POST_UPDATED, {});
    try {
      await graphql(t.url, `mutation { revokeApiToken(id: "${apiToken.id}") { id } }`, { token: org.token });
      await eventually(async () => (watcher.errors.length > 0 ? true : undefined), 10000, 'the socket to close');
      expect((watcher.errors[0] as { code?: number }).code).toBe(4403);
      await createPost(org, 0, 0, 'After revocation');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(watcher.events).toEqual([]);
    } finally {
      await watcher.close();
    }
  });

  it('never delivers events of another organization, nor of another account to an account token', async () => {
    const outsider = await subscribe(t.url, other.token, POST_UPDATED, {});
    const otherAccount = await subscribe(t.url, org.accounts[1]!.token, POST_UPDATED, {});
    const sameAccount = await subscribe(t.url, org.accounts[0]!.token, POST_UPDATED, {});
    try {
      const created = await createPost(org, 0, 0, 'Private news');
      // Guessing the id does not help either.
      const guesser = await subscribe(t.url, other.token, POST_UPDATED, { postId: created.body.payload.id });
      await pollPost(t.url, org.token, org.accounts[0]!.account.id, created.body.payload.id);
      await sameAccount.waitFor(2);
      // The outsiders had every chance: the owner already has SENDING and LIVE.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(outsider.events).toEqual([]);
      expect(otherAccount.events).toEqual([]);
      expect(guesser.events).toEqual([]);
      await guesser.close();
    } finally {
      await Promise.all([outsider.close(), otherAccount.close(), sameAccount.close()]);
    }
  });
});
