import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http, type JsonResponse } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

/**
 * POST /citations/disable and its GraphQL twin `disableCitations`, through HTTP only: the status machine
 * (ACTIVE -> DISABLING -> DISABLED), the coded error bodies, scope and auth, and the per-account rate limit.
 */

const UNKNOWN_ID = '01900000-0000-7000-8000-000000000000';

const DISABLE_MUTATION = `mutation ($accountId: ID, $locationId: ID!) {
  disableCitations(accountId: $accountId, locationId: $locationId) { message locationId removed }
}`;

function disable(
  stack: TestStack,
  options: { token?: string; accountId?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
): Promise<JsonResponse> {
  const path = options.accountId === undefined ? '/citations/disable' : `/citations/disable?account_id=${options.accountId}`;
  return http(stack.url, 'POST', path, { token: options.token, body: options.body, rawBody: options.rawBody, headers: options.headers });
}

/** Disables through REST with the organization token, acting on account `account` of the fixture. */
function disableAs(stack: TestStack, org: OrganizationFixture, account: number, locationId: string): Promise<JsonResponse> {
  return disable(stack, { token: org.token, accountId: org.accounts[account]!.account.id, body: { location_id: locationId } });
}

function disableViaGraphql(stack: TestStack, token: string, locationId: string, accountId?: string) {
  return graphql<{ disableCitations: { message: string; locationId: string; removed: boolean } }>(stack.url, DISABLE_MUTATION, {
    token,
    variables: { locationId, ...(accountId === undefined ? {} : { accountId }) },
  });
}

/** citations_status of every location of the account, as GET /location shows it. */
async function statuses(stack: TestStack, org: OrganizationFixture, account: number): Promise<Record<string, string>> {
  const res = await http(stack.url, 'GET', `/location?account_id=${org.accounts[account]!.account.id}&per_page=250&include_fields=citations_status`, {
    token: org.token,
  });
  expect(res.status).toBe(200);
  return Object.fromEntries((res.body.data as { id: string; citations_status: string }[]).map((l) => [l.id, l.citations_status]));
}

async function setStatus(stack: TestStack, locationId: string, status: string): Promise<void> {
  await stack.em().getConnection().execute('update location set citations_status = ? where id = ?', [status, locationId]);
}

const locationOf = (org: OrganizationFixture, account: number, index: number) => org.accounts[account]!.locations[index]!.id;

const coded = (code: string, missingFields: string[] = []) => ({ success: false, code, msg: expect.any(String), missing_fields: missingFields });

describe('with the default limits', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack();
  });
  afterAll(() => t.close());

  describe('POST /citations/disable', () => {
    it('disables an ACTIVE location: 200 with the documented payload, and GET /location shows DISABLED', async () => {
      const org = await createOrganizationFixture(t.em(), { citationsApi: true, locationsEach: 2 });
      const target = locationOf(org, 0, 0);
      expect(await statuses(t, org, 0)).toEqual({ [target]: 'ACTIVE', [locationOf(org, 0, 1)]: 'ACTIVE' });

      const res = await disableAs(t, org, 0, target);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, payload: { message: expect.any(String), location_id: target, removed: true } });
      expect(res.body.payload.message).not.toBe('');
      expect(res.headers.get('ratelimit-policy')).toBe('"citations";q=10;w=60');
      expect(res.headers.get('ratelimit')).toMatch(/^"citations";r=9;t=\d+$/);

      // Only that location.
      expect(await statuses(t, org, 0)).toEqual({ [target]: 'DISABLED', [locationOf(org, 0, 1)]: 'ACTIVE' });
    });

    it('answers 409 NOT_ACTIVE to a second request for the same location', async () => {
      const org = await createOrganizationFixture(t.em(), { citationsApi: true, locationsEach: 1 });
      const target = locationOf(org, 0, 0);
      expect((await disableAs(t, org, 0, target)).status).toBe(200);

      const again = await disableAs(t, org, 0, target);
      expect(again.status).toBe(409);
      expect(again.body).toEqual(coded('NOT_ACTIVE'));
      expect((await statuses(t, org, 0))[target]).toBe('DISABLED');
    });

    it('answers 409 IN_PROGRESS while the location is DISABLING, and leaves it so', async () => {
      const org = await createOrganizationFixture(t.em(), { citationsApi: true, locationsEach: 1 });
      const target = locationOf(org, 0, 0);
      await setStatus(t, target, 'DISABLING');

      const res = await disableAs(t, org, 0, target);
      expect(res.status).toBe(409);
      expect(res.body).toEqual(coded('IN_PROGRESS'));
      expect((await statuses(t, org, 0))[target]).toBe('DISABLING');
    });

    it('lets exactly one of two concurrent requests for an ACTIVE location through, for every location', async () => {
      // One account per location: the pairs race each other, not the per-account limit.
      const org = await createOrganizationFixture(t.em(), { citationsApi: true, accounts: 8, locationsEach: 1 });
      const pairs = await Promise.all(
        org.accounts.map((_, account) =>
          Promise.all([disableAs(t, org, account, locationOf(org, account, 0)), disableAs(t, org, account, locationOf(org, account, 0))]),
        ),
      );
      for (const [account, pair] of pairs.entries()) {
        const target = locationOf(org, account, 0);
        const statusesOfPair = pair.map((res) => res.status).sort();
        expect(statusesOfPair).toEqual([200, 409]);
        const won = pair.find((res) => res.status === 200)!;
        const lost = pair.find((res) => res.status === 409)!;
        expect(won.body).toEqual({ success: true, payload: { message: expect.any(String), location_id: target, removed: true } });
        expect(lost.body).toEqual({ ...coded(lost.body.code), code: expect.stringMatching(/^(NOT_ACTIVE|IN_PROGRESS)$/) });
        expect((await statuses(t, org, account))[target]).toBe('DISABLED');
      }
    });

    it('answers 403 CITATIONS_API_DISABLED without the organization’s citations flag, and changes nothing', async () => {
      const org = await createOrganizationFixture(t.em(), { citationsApi: false, locationsEach: 1 });
      const target = locationOf(org, 0, 0);

      const asOrganization = await disableAs(t, org, 0, target);
      expect(asOrganization.status).toBe(403);
      expect(asOrganization.body).toEqual(coded('CITATIONS_API_DISABLED'));
      const asAccount = await disable(t, { token: org.accounts[0]!.token, body: { location_id: target } });
      expect(asAccount.status).toBe(403);
      expect(asAccount.body).toEqual(coded('CITATIONS_API_DISABLED'));

      expect((await statuses(t, org, 0))[target]).toBe('ACTIVE');
    });

    describe('input', () => {
      let org: OrganizationFixture;
      beforeAll(async () => {
        org = await createOrganizationFixture(t.em(), { citationsApi: true, locationsEach: 1 });
      });
      afterAll(async () => {
        // No refusal touched the location.
        expect((await statuses(t, org, 0))[locationOf(org, 0, 0)]).toBe('ACTIVE');
      });

      it.each([
        ['no body at all', {}],
        ['an empty object', { body: {} }],
        ['a null location_id', { body: { location_id: null } }],
        ['other fields only', { body: { id: 'x' } }],
        ['an empty location_id', { body: { location_id: '  ' } }],
      ])('answers 400 MISSING_FIELDS [location_id] to %s', async (_case, request) => {
        const res = await disable(t, { token: org.token, accountId: org.accounts[0]!.account.id, ...request });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(coded('MISSING_FIELDS', ['location_id']));
      });

      it.each([
        ['a boolean', true],
        ['an object', { id: 'x' }],
        ['a list', ['x']],
        ['a fraction', 1.5],
        ['an integer', 42],
      ])('answers 400 with the generic body to a location_id that is %s', async (_case, value) => {
        const res = await disable(t, { token: org.token, accountId: org.accounts[0]!.account.id, body: { location_id: value } });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 400, message: 'location_id must be a string' });
      });

      it('answers 400 with the generic body to a body that is not an object, and to malformed JSON', async () => {
        const list = await disable(t, { token: org.token, accountId: org.accounts[0]!.account.id, body: [locationOf(org, 0, 0)] });
        expect(list.status).toBe(400);
        expect(list.body).toEqual({ error: 400, message: 'The request body must be a JSON object' });

        const malformed = await disable(t, {
          token: org.token,
          accountId: org.accounts[0]!.account.id,
          rawBody: '{"location_id":',
          headers: { 'content-type': 'application/json' },
        });
        expect(malformed.status).toBe(400);
        expect(malformed.body).toEqual({ error: 400, message: expect.stringMatching(/JSON/) });
      });
    });

    describe('scope and authentication', () => {
      let org: OrganizationFixture;
      let other: OrganizationFixture;
      beforeAll(async () => {
        org = await createOrganizationFixture(t.em(), { citationsApi: true, accounts: 2, locationsEach: 2 });
        other = await createOrganizationFixture(t.em(), { citationsApi: true, locationsEach: 1 });
      });

      it('answers 404 with the generic body to an unknown location, and to a location_id that is no id', async () => {
        for (const locationId of [UNKNOWN_ID, 'not-an-id']) {
          const res = await disableAs(t, org, 0, locationId);
          expect(res.status).toBe(404);
          expect(res.body).toEqual({ error: 404, message: expect.any(String) });
        }
      });

      it('answers 404 to a location of another account of the organization, or of another organization', async () => {
        const ofOtherAccount = await disableAs(t, org, 0, locationOf(org, 1, 0));
        expect(ofOtherAccount.status).toBe(404);
        expect(ofOtherAccount.body).toEqual({ error: 404, message: expect.any(String) });

        const ofOtherOrganization = await disableAs(t, org, 0, locationOf(other, 0, 0));
        expect(ofOtherOrganization.status).toBe(404);
        expect(ofOtherOrganization.body).toEqual({ error: 404, message: expect.any(String) });

        // An account token of the organization cannot reach its sibling account's location either.
        const bySiblingToken = await disable(t, { token: org.accounts[0]!.token, body: { location_id: locationOf(org, 1, 0) } });
        expect(bySiblingToken.status).toBe(404);

        // account_id of another organization: not found, whatever the location.
        const foreignAccount = await disable(t, { token: org.token, accountId: other.accounts[0]!.account.id, body: { location_id: locationOf(other, 0, 0) } });
        expect(foreignAccount.status).toBe(404);
        expect(foreignAccount.body).toEqual({ error: 404, message: expect.any(String) });

        expect((await statuses(t, org, 1))[locationOf(org, 1, 0)]).toBe('ACTIVE');
        expect((await statuses(t, other, 0))[locationOf(other, 0, 0)]).toBe('ACTIVE');
      });

      it('lets an account token act on its own account’s location, ignoring account_id', async () => {
        const target = locationOf(org, 0, 1);
        // account_id names the sibling account: an account token ignores it.
        const res = await disable(t, { token: org.accounts[0]!.token, accountId: org.accounts[1]!.account.id, body: { location_id: target } });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ success: true, payload: { message: expect.any(String), location_id: target, removed: true } });
        expect((await statuses(t, org, 0))[target]).toBe('DISABLED');
      });

      it('answers 400 to an organization token without account_id', async () => {
        const res = await disable(t, { token: org.token, body: { location_id: locationOf(org, 0, 0) } });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 400, message: expect.stringContaining('account_id') });
        expect((await statuses(t, org, 0))[locationOf(org, 0, 0)]).toBe('ACTIVE');
      });

      it('answers 401 without a token or with an unknown one, before judging the body', async () => {
        for (const token of [undefined, 'not-a-token']) {
          for (const body of [{ location_id: locationOf(org, 0, 0) }, {}]) {
            const res = await disable(t, { token, accountId: org.accounts[0]!.account.id, body });
            expect(res.status).toBe(401);
            expect(res.body).toEqual({ error: 401, message: expect.any(String) });
          }
        }
        expect((await statuses(t, org, 0))[locationOf(org, 0, 0)]).toBe('ACTIVE');
      });
    });

    it('allows 10 requests per account per minute by default, then 429 RATE_LIMIT_EXCEEDED', async () => {
      const org = await createOrganizationFixture(t.em(), { citationsApi: true, accounts: 2, locationsEach: 11 });
      for (let i = 0; i < 10; i += 1) {
        const res = await disableAs(t, org, 0, locationOf(org, 0, i));
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"citations";r=${9 - i};t=\\d+$`));
      }
      const refused = await disableAs(t, org, 0, locationOf(org, 0, 10));
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        success: false,
        msg: 'RATE_LIMIT_EXCEEDED',
        payload: { allowed: false, limit: 10, remaining: 0, retryAfter: expect.any(Number) },
      });
      expect((await statuses(t, org, 0))[locationOf(org, 0, 10)]).toBe('ACTIVE');
      // Per account: the other account of the organization has its own minute.
      expect((await disableAs(t, org, 1, locationOf(org, 1, 0))).status).toBe(200);
    });
  });

  describe('the GraphQL twin disableCitations', () => {
    it('disables an ACTIVE location, with an organization token and accountId or an account token alone', async () => {
      const org = await createOrganizationFixture(t.em(), { citationsApi: true, locationsEach: 2 });
      const [first, second] = [locationOf(org, 0, 0), locationOf(org, 0, 1)];

      const asOrganization = await disableViaGraphql(t, org.token, first, org.accounts[0]!.account.id);
      expect(asOrganization.body.errors).toBeUndefined();
      expect(asOrganization.body.data).toEqual({ disableCitations: { message: expect.any(String), locationId: first, removed: true } });
      expect(asOrganization.headers.get('ratelimit-policy')).toBe('"citations";q=10;w=60');

      const asAccount = await disableViaGraphql(t, org.accounts[0]!.token, second);
      expect(asAccount.body.errors).toBeUndefined();
      expect(asAccount.body.data?.disableCitations).toEqual({ message: expect.any(String), locationId: second, removed: true });

      expect(await statuses(t, org, 0)).toEqual({ [first]: 'DISABLED', [second]: 'DISABLED' });
    });

    it('reports NOT_ACTIVE, IN_PROGRESS and CITATIONS_API_DISABLED as extensions.code', async () => {
      const org = await createOrganizationFixture(t.em(), { citationsApi: true, locationsEach: 2 });
      const [disabled, disabling] = [locationOf(org, 0, 0), locationOf(org, 0, 1)];
      expect((await disableAs(t, org, 0, disabled)).status).toBe(200);
      await setStatus(t, disabling, 'DISABLING');

      const notActive = await disableViaGraphql(t, org.accounts[0]!.token, disabled);
      expect(notActive.body.data?.disableCitations ?? null).toBeNull();
      expect(notActive.body.errors?.[0]?.extensions?.code).toBe('NOT_ACTIVE');

      const inProgress = await disableViaGraphql(t, org.accounts[0]!.token, disabling);
      expect(inProgress.body.errors?.[0]?.extensions?.code).toBe('IN_PROGRESS');

      const withoutFlag = await createOrganizationFixture(t.em(), { citationsApi: false, locationsEach: 1 });
      const forbidden = await disableViaGraphql(t, withoutFlag.accounts[0]!.token, locationOf(withoutFlag, 0, 0));
      expect(forbidden.body.errors?.[0]?.extensions?.code).toBe('CITATIONS_API_DISABLED');
      expect((await statuses(t, withoutFlag, 0))[locationOf(withoutFlag, 0, 0)]).toBe('ACTIVE');
      expect((await statuses(t, org, 0))[disabling]).toBe('DISABLING');
    });

    it('lets exactly one of a concurrent REST and GraphQL request through', async () => {
      const org = await createOrganizationFixture(t.em(), { citationsApi: true, accounts: 6, locationsEach: 1 });
      const outcomes = await Promise.all(
        org.accounts.map(async ({ token }, account) => {
          const [rest, viaGraphql] = await Promise.all([
            disableAs(t, org, account, locationOf(org, account, 0)),
            disableViaGraphql(t, token, locationOf(org, account, 0)),
          ]);
          return [rest.status === 200, viaGraphql.body.data?.disableCitations?.removed === true, rest.body.code ?? viaGraphql.body.errors?.[0]?.extensions?.code];
        }),
      );
      for (const [restWon, graphqlWon, loserCode] of outcomes) {
        expect([restWon, graphqlWon].filter(Boolean)).toHaveLength(1);
        expect(loserCode).toMatch(/^(NOT_ACTIVE|IN_PROGRESS)$/);
      }
    });
  });
});

describe('with CITATIONS_RATE_LIMIT_PER_MINUTE=2', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ CITATIONS_RATE_LIMIT_PER_MINUTE: '2' });
  });
  afterAll(() => t.close());

  it('answers the third request of a minute with 429 RATE_LIMIT_EXCEEDED, its headers, and the GraphQL twin likewise', async () => {
    const org = await createOrganizationFixture(t.em(), { citationsApi: true, accounts: 2, locationsEach: 3 });
    const answers = [];
    for (const index of [0, 1]) answers.push(await disableAs(t, org, 0, locationOf(org, 0, index)));
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.map((a) => a.headers.get('ratelimit'))).toEqual([
      expect.stringMatching(/^"citations";r=1;t=\d+$/),
      expect.stringMatching(/^"citations";r=0;t=\d+$/),
    ]);
    expect(answers.map((a) => a.headers.get('ratelimit-policy'))).toEqual(['"citations";q=2;w=60', '"citations";q=2;w=60']);

    const refused = await disableAs(t, org, 0, locationOf(org, 0, 2));
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      success: false,
      msg: 'RATE_LIMIT_EXCEEDED',
      payload: { allowed: false, limit: 2, remaining: 0, retryAfter: expect.any(Number) },
    });
    const { retryAfter } = refused.body.payload;
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('retry-after')).toBe(String(retryAfter));
    expect(refused.headers.get('ratelimit-policy')).toBe('"citations";q=2;w=60');
    expect(refused.headers.get('ratelimit')).toBe(`"citations";r=0;t=${retryAfter}`);
    expect((await statuses(t, org, 0))[locationOf(org, 0, 2)]).toBe('ACTIVE');

    // The same limit for the GraphQL twin: one count per account, whichever way the request came.
    const viaGraphql = await disableViaGraphql(t, org.accounts[0]!.token, locationOf(org, 0, 2));
    expect(viaGraphql.body.errors?.[0]?.extensions).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      payload: { allowed: false, limit: 2, remaining: 0 },
    });
    expect(viaGraphql.headers.get('retry-after')).toEqual(expect.stringMatching(/^\d+$/));
    expect((await statuses(t, org, 0))[locationOf(org, 0, 2)]).toBe('ACTIVE');

    // Per account: the other account of the organization still has its own minute.
    expect((await disableAs(t, org, 1, locationOf(org, 1, 0))).status).toBe(200);
  });

  it('does not count 404 nor 409 refusals; once the limit is spent, a 404 stays 404 and a 409 becomes 429', async () => {
    const org = await createOrganizationFixture(t.em(), { citationsApi: true, locationsEach: 4 });
    const [first, disabling, third, fourth] = [0, 1, 2, 3].map((index) => locationOf(org, 0, index)) as [string, string, string, string];
    await setStatus(t, disabling, 'DISABLING');

    // The location is looked up before the request is counted: 404s never count.
    for (let i = 0; i < 3; i += 1) expect((await disableAs(t, org, 0, UNKNOWN_ID)).status).toBe(404);

    const counted = await disableAs(t, org, 0, first);
    expect(counted.status).toBe(200);
    expect(counted.headers.get('ratelimit')).toMatch(/^"citations";r=1;/);

    // 409s are counted, then refunded: both leave the one remaining request in place.
    const notActive = await disableAs(t, org, 0, first);
    expect(notActive.status).toBe(409);
    expect(notActive.body).toEqual(coded('NOT_ACTIVE'));
    const inProgress = await disableAs(t, org, 0, disabling);
    expect(inProgress.status).toBe(409);
    expect(inProgress.body).toEqual(coded('IN_PROGRESS'));
    const notActiveViaGraphql = await disableViaGraphql(t, org.accounts[0]!.token, first);
    expect(notActiveViaGraphql.body.errors?.[0]?.extensions?.code).toBe('NOT_ACTIVE');

    const last = await disableAs(t, org, 0, third);
    expect(last.status).toBe(200);
    expect(last.headers.get('ratelimit')).toMatch(/^"citations";r=0;/);

    // Spent: a new request is refused, and so is one that would be a 409 (it is counted before the status check)...
    expect((await disableAs(t, org, 0, fourth)).status).toBe(429);
    const wouldConflict = await disableAs(t, org, 0, first);
    expect(wouldConflict.status).toBe(429);
    expect(wouldConflict.body.msg).toBe('RATE_LIMIT_EXCEEDED');
    // ... while an unknown location is still a 404 (it is looked up before counting).
    const unknown = await disableAs(t, org, 0, UNKNOWN_ID);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 404, message: expect.any(String) });

    expect(await statuses(t, org, 0)).toEqual({ [first]: 'DISABLED', [disabling]: 'DISABLING', [third]: 'DISABLED', [fourth]: 'ACTIVE' });
  });

  it('does not count requests refused for the missing citations flag', async () => {
    const withoutFlag = await createOrganizationFixture(t.em(), { citationsApi: false, locationsEach: 2 });
    for (let i = 0; i < 3; i += 1) expect((await disableAs(t, withoutFlag, 0, locationOf(withoutFlag, 0, 0))).status).toBe(403);
    // The flag is switched on, and a new token (its principal not yet cached) sees it: the account's minute is untouched.
    await t.em().getConnection().execute('update organization set citations_api = true where id = ?', [withoutFlag.organization.id]);
    const created = await graphql<{ createAccountToken: { token: string } }>(t.url, 'mutation ($a: ID!) { createAccountToken(accountId: $a) { token } }', {
      token: withoutFlag.token,
      variables: { a: withoutFlag.accounts[0]!.account.id },
    });
    const res = await disable(t, { token: created.body.data!.createAccountToken.token, body: { location_id: locationOf(withoutFlag, 0, 0) } });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toMatch(/^"citations";r=1;/);
  });
});
