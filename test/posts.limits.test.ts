import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { TestClock } from './support/clock';
import { startTestStack, type TestStack } from './support/stack';

let t: TestStack;
/** Held in the middle of a month, so the quota's calendar month is known exactly (and never ends mid-test). */
const clock = new TestClock();
const MID_MONTH = new Date('2031-03-15T12:00:00.000Z');
beforeAll(async () => {
  clock.hold(MID_MONTH);
  t = await startTestStack({ POST_RATE_LIMIT_PER_MINUTE: '3', POST_QUOTA_PER_MONTH: '5' }, { clock });
});
beforeEach(() => clock.hold(MID_MONTH));
afterAll(() => t.close());

function post(fixture: OrganizationFixture, account: number) {
  return http(t.url, 'POST', `/post?account_id=${fixture.accounts[account]!.account.id}`, {
    token: fixture.token,
    body: { location_id: fixture.accounts[account]!.locations[0]!.id, params: { summary: 'Limited' } },
  });
}

describe('post creation limits', () => {
  it('allows POST_RATE_LIMIT_PER_MINUTE posts per account in a rolling minute, then 429 RATE_LIMIT_EXCEEDED', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 1, connected: true });
    const answers = [];
    for (let i = 0; i < 3; i += 1) answers.push(await post(org, 0));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(answers.map((a) => a.headers.get('ratelimit'))).toEqual([
      expect.stringMatching(/^"posts";r=2;t=\d+$/),
      expect.stringMatching(/^"posts";r=1;t=\d+$/),
      expect.stringMatching(/^"posts";r=0;t=\d+$/),
    ]);
    expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"posts";q=3;w=60');

    const refused = await post(org, 0);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      success: false,
      msg: 'RATE_LIMIT_EXCEEDED',
      payload: { allowed: false, limit: 3, remaining: 0, retryAfter: expect.any(Number) },
    });
    const retryAfter = refused.body.payload.retryAfter;
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('retry-after')).toBe(String(retryAfter));
    expect(refused.headers.get('ratelimit')).toBe(`"posts";r=0;t=${retryAfter}`);

    // The same limit, in the same place, for the GraphQL twin.
    const viaGraphql = await graphql(
      t.url,
      `mutation ($l: ID!) { createPost(input: { locationId: $l, params: { summary: "x" } }) { post { id } } }`,
      { token: org.accounts[0]!.token, variables: { l: org.accounts[0]!.locations[0]!.id } },
    );
    expect(viaGraphql.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', payload: { limit: 3, remaining: 0 } });
    expect(viaGraphql.headers.get('retry-after')).toEqual(expect.any(String));

    // Per account: the other account still has its own minute.
    expect((await post(org, 1)).status).toBe(202);
  });

  it('refuses posts past the monthly quota of the organization with 429 QUOTA_REACHED', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 1, connected: true });
    for (const account of [0, 0, 0, 1, 1]) expect((await post(org, account)).status).toBe(202);
    const refused = await post(org, 1);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ success: false, msg: 'QUOTA_REACHED', payload: { allowed: false, retryAfter: expect.any(Number) } });
    // From 2031-03-15T12:00Z to 2031-04-01T00:00Z.
    expect(refused.body.payload.retryAfter).toBe(16.5 * 24 * 3600);
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.payload.retryAfter));
  });

  it('counts the quota per calendar month (UTC): the next month starts from zero', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 1, connected: true });
    clock.hold(new Date('2031-03-31T23:59:58.000Z'));
    for (const account of [0, 0, 0, 1, 1]) expect((await post(org, account)).status).toBe(202);
    const refused = await post(org, 1);
    expect(refused.status).toBe(429);
    expect(refused.body.payload.retryAfter).toBe(2);
    clock.advance(2000);
    const april = await post(org, 1);
    expect(april.status).toBe(202);
    expect(april.body.payload.create_time).toBe(Date.parse('2031-04-01T00:00:00.000Z'));
  });

  it('does not count refused requests or idempotent replays', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
    const bad = await http(t.url, 'POST', `/post?account_id=${org.accounts[0]!.account.id}`, {
      token: org.token,
      body: { location_id: org.accounts[0]!.locations[0]!.id, params: { summary: 'x', scheduledTime: '2000-01-01T00:00:00Z' } },
    });
    expect(bad.status).toBe(400);
    const keyed = () =>
      http(t.url, 'POST', `/post?account_id=${org.accounts[0]!.account.id}`, {
        token: org.token,
        body: { location_id: org.accounts[0]!.locations[0]!.id, params: { summary: 'Once' } },
        headers: { 'Idempotency-Key': 'same' },
      });
    const statuses = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await keyed()).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202]);
    expect((await post(org, 0)).headers.get('ratelimit')).toMatch(/^"posts";r=1;/);
  });
});
