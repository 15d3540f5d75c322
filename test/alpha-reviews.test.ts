import { writeFile } from 'node:fs/promises';
import { createAlphaClient, type AlphaClient } from '../src/providers/alpha/alpha.client';
import { AlphaProviderError } from '../src/providers/alpha/alpha.errors';
import { createAlphaOAuthClient, createAlphaPkce } from '../src/providers/alpha/alpha.oauth';
import { ALPHA_CONNECT_SCOPES, type AlphaReview } from '../src/providers/alpha/alpha.types';
import { ALPHA_SANDBOX_SEED } from '../sandboxes/alpha/alpha-sandbox';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { sandboxRestarts } from './support/sandbox-restarts';
import { startAlphaSandbox, type AlphaSandboxServer } from '../sandboxes/alpha/main';
import { expectSucceeded, waitForWork } from './support/async-work';
import { connectAlice } from './support/consent';
import { createOrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { failure } from './support/failure';

/**
 * The alpha client's account and review calls against the alpha sandbox, both real, over HTTP: the seeded accounts,
 * paging, reviews and their replies through moderation. The sandbox runs on a clock this file moves, so moderation
 * is followed by moving time, never by waiting. One test answers a review through the service instead (its own server
 * and mounted sandbox), to see the reply's send and moderation check listed as asynchronous work.
 */

const START = Date.parse('2031-03-01T10:00:00.000Z');
const DAY_MS = 24 * 3600_000;
let now = START;
let sandbox: AlphaSandboxServer;
let control: AlphaSandboxControl;
let client: AlphaClient;

const { alice, carol } = ALPHA_SANDBOX_SEED;
const KREUZBERG = { accountId: '1001', locationId: '10011' };
const MITTE = { accountId: '1001', locationId: '10012' };
const review = (id: string, at = KREUZBERG) => `accounts/${at.accountId}/locations/${at.locationId}/reviews/${id}`;

/** The AlphaProviderError a call fails with (and a test failure if it succeeds or fails otherwise). */
const providerError = (call: Promise<unknown>): Promise<AlphaProviderError> => failure(call, AlphaProviderError);

/** A 400 INVALID_ARGUMENT naming `field` in its message and in its one field violation. */
function expectFieldRefusal(error: AlphaProviderError, field: string): void {
  expect(error).toMatchObject({ status: 400, reason: 'INVALID_ARGUMENT', retryable: false });
  expect(error.message).toContain(field);
  expect(error.details).toEqual([
    {
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field, description: expect.any(String) }],
    },
  ]);
}

/** An identity's access token, through the consent page as a browser would get it. */
async function accessTokenOf(sub: string): Promise<string> {
  const oauth = createAlphaOAuthClient({
    baseUrl: sandbox.url,
    clientId: 'listings-gateway-sandbox',
    clientSecret: 'sandbox-client-secret',
  });
  const { codeVerifier, codeChallenge } = createAlphaPkce();
  const redirectUri = 'https://gateway.example/callback';
  const url = oauth.authorizeUrl({ redirectUri, state: 's', codeChallenge, scopes: ALPHA_CONNECT_SCOPES });
  const html = await (await fetch(url)).text();
  const form = new URLSearchParams();
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.append(name!, value!);
  }
  form.append('identity', sub);
  for (const scope of ALPHA_CONNECT_SCOPES) form.append('grant', scope);
  form.append('decision', 'approve');
  const approved = await fetch(new URL('authorize', url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    redirect: 'manual',
  });
  const code = new URL(approved.headers.get('location') ?? '').searchParams.get('code') ?? '';
  return (await oauth.exchangeCode({ code, redirectUri, codeVerifier })).access_token;
}

beforeAll(async () => {
  sandbox = await startAlphaSandbox({ port: 0, clock: () => now });
  control = createAlphaSandboxControl(sandbox.url);
  client = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => 'sandbox-access-token' });
});
afterAll(() => sandbox?.close());
beforeEach(async () => {
  now = START;
  await control.reset();
});

describe('accounts', () => {
  it('lists the seeded accounts, oldest first, and gets one', async () => {
    expect(await client.listAccounts()).toEqual({
      accounts: [
        {
          name: 'accounts/1001',
          accountName: 'Alice Bakery Group',
          type: 'LOCATION_GROUP',
          verificationState: 'VERIFIED',
          role: 'OWNER',
        },
        {
          name: 'accounts/2002',
          accountName: 'Bob Without Shops',
          type: 'PERSONAL',
          verificationState: 'VERIFIED',
          role: 'OWNER',
        },
        {
          name: 'accounts/3003',
          accountName: 'Carol Coffee North',
          type: 'LOCATION_GROUP',
          verificationState: 'VERIFIED',
          role: 'OWNER',
        },
        {
          name: 'accounts/3004',
          accountName: 'Carol Coffee South',
          type: 'LOCATION_GROUP',
          verificationState: 'VERIFIED',
          role: 'OWNER',
        },
      ],
    });
    expect(await client.getAccount('accounts/3004')).toMatchObject({ accountName: 'Carol Coffee South' });
    expect(await providerError(client.getAccount('accounts/404'))).toMatchObject({ status: 404, reason: 'NOT_FOUND' });
    const state = await control.state();
    expect(state.calls).toMatchObject({ 'account-list': 1, 'account-get': 2 });
    expect(state.accounts.map((account) => [account.name, account.ownerSub])).toEqual([
      ['accounts/1001', alice.sub],
      ['accounts/2002', 'alpha-user-bob'],
      ['accounts/3003', carol.sub],
      ['accounts/3004', carol.sub],
    ]);
  });

  it('pages: 20 by default and at most, a token per page, accounts added between pages at the end', async () => {
    await control.addIdentity({
      email: 'many@sandbox.example',
      name: 'Many',
      accounts: Array.from({ length: 25 }, (_, index) => ({
        accountId: `m${String(index).padStart(2, '0')}`,
        accountName: `Many ${index}`,
      })),
    });
    const all = [
      'accounts/1001',
      'accounts/2002',
      'accounts/3003',
      'accounts/3004',
      ...Array.from({ length: 25 }, (_, index) => `accounts/m${String(index).padStart(2, '0')}`),
    ];

    const first = await client.listAccounts();
    expect(first.accounts.map((account) => account.name)).toEqual(all.slice(0, 20));
    expect((await client.listAccounts({ pageSize: 500 })).accounts).toHaveLength(20);
    const rest = await client.listAccounts({ pageToken: first.nextPageToken });
    expect(rest).toEqual({ accounts: expect.any(Array) });
    expect(rest.accounts.map((account) => account.name)).toEqual(all.slice(20));

    const page1 = await client.listAccounts({ pageSize: 3 });
    await control.addIdentity({
      email: 'late@sandbox.example',
      name: 'Late',
      accounts: [{ accountId: 'late', accountName: 'Late' }],
    });
    const page2 = await client.listAccounts({ pageSize: 3, pageToken: page1.nextPageToken });
    expect(page2.accounts.map((account) => account.name)).toEqual(all.slice(3, 6));

    expectFieldRefusal(await providerError(client.listAccounts({ pageToken: 'not-a-token' })), 'pageToken');
    // A location list's token belongs to another list.
    const locations = await client.listLocations({ accountId: '1001', pageSize: 1 });
    expectFieldRefusal(await providerError(client.listAccounts({ pageToken: locations.nextPageToken })), 'pageToken');
  });

  it('serves the seeded locations of an account through the location API', async () => {
    const { locations } = await client.listLocations({ accountId: '1001' });
    expect(locations.map((location) => [location.name, location.storeCode])).toEqual([
      ['accounts/1001/locations/10011', 'alice-1'],
      ['accounts/1001/locations/10012', 'alice-2'],
    ]);
    expect(locations[0]).toMatchObject({
      title: 'Alice Bakery Kreuzberg',
      phoneNumbers: { primaryPhone: '+49 30 1234501' },
      categories: { primaryCategory: { name: 'gcid:bakery', displayName: 'Bakery' } },
      storefrontAddress: {
        regionCode: 'DE',
        postalCode: '10999',
        locality: 'Berlin',
        addressLines: ['Oranienstraße 25'],
      },
      regularHours: {
        periods: expect.arrayContaining([
          { openDay: 'MONDAY', openTime: { hours: 7 }, closeDay: 'MONDAY', closeTime: { hours: 18 } },
        ]),
      },
      metadata: { placeId: expect.stringMatching(/^ChIJ/) },
    });
    expect(await client.listLocations({ accountId: '2002' })).toEqual({ locations: [] });
    expect((await client.listLocations({ accountId: '3004' })).locations.map((location) => location.storeCode)).toEqual(
      ['carol-south'],
    );
    // The seeded locations take edits like any other.
    expect(
      (
        await client.updateLocation({
          name: alice.locations[1],
          location: { title: 'Alice Bakery Mitte (new)' },
          updateMask: ['title'],
        })
      ).title,
    ).toBe('Alice Bakery Mitte (new)');
  });
});

describe('reviews', () => {
  it("lists a location's reviews newest first, with the average and count of all of them", async () => {
    const page = await client.listReviews(KREUZBERG);
    expect(page.reviews.map((entry) => [entry.reviewId, entry.starRating])).toEqual([
      ['alice1-noor', 'FIVE'],
      ['alice1-anonymous', 'ONE'],
      ['alice1-tom', 'TWO'],
      ['alice1-lea', 'THREE'],
      ['alice1-jonas', 'FOUR'],
      ['alice1-maja', 'FIVE'],
    ]);
    expect(page).toMatchObject({ averageRating: 3.3, totalReviewCount: 6 });
    expect(page.nextPageToken).toBeUndefined();

    const [newest, anonymous] = page.reviews;
    expect(newest).toEqual({
      name: review('alice1-noor'),
      reviewId: 'alice1-noor',
      reviewer: { displayName: 'Noor A.', isAnonymous: false },
      starRating: 'FIVE',
      comment: 'Lovely cinnamon buns!',
      createTime: new Date(START - DAY_MS).toISOString(),
      updateTime: new Date(START - DAY_MS).toISOString(),
    });
    expect(anonymous).toMatchObject({ reviewer: { displayName: 'Anonymous', isAnonymous: true }, starRating: 'ONE' });
    expect(anonymous?.comment).toBeUndefined();
    expect(page.reviews.at(-1)).toMatchObject({
      reviewer: {
        displayName: 'Maja K.',
        profilePhotoUrl: 'https://alpha.example/avatars/maja.png',
        isAnonymous: false,
      },
      reviewReply: {
        comment: 'Thank you, Maja! See you on Saturday.',
        state: 'APPROVED',
        updateTime: new Date(START - 29 * DAY_MS).toISOString(),
      },
    });
    expect((await client.listReviews(MITTE)).reviews.map((entry) => entry.reviewId)).toEqual(['alice2-ben']);
  });

  it('pages newest first; a review written between pages neither shifts nor repeats the rest', async () => {
    const page1 = await client.listReviews({ ...KREUZBERG, pageSize: 4 });
    expect(page1.reviews.map((entry) => entry.reviewId)).toEqual([
      'alice1-noor',
      'alice1-anonymous',
      'alice1-tom',
      'alice1-lea',
    ]);
    const [written] = await control.addReviews(alice.locations[0], [
      { starRating: 'FOUR', reviewer: { displayName: 'New' }, comment: 'Just now' },
    ]);
    const page2 = await client.listReviews({ ...KREUZBERG, pageSize: 4, pageToken: page1.nextPageToken });
    expect(page2).toEqual({
      reviews: [
        expect.objectContaining({ reviewId: 'alice1-jonas' }),
        expect.objectContaining({ reviewId: 'alice1-maja' }),
      ],
      averageRating: 3.4,
      totalReviewCount: 7,
    });
    expect((await client.listReviews(KREUZBERG)).reviews[0]).toEqual(written);

    // 50 by default and at most.
    await control.addReviews(
      alice.locations[1],
      Array.from({ length: 60 }, (_, index) => ({
        starRating: 'FIVE' as const,
        createTime: new Date(START - index * 1000).toISOString(),
      })),
    );
    const capped = await client.listReviews({ ...MITTE, pageSize: 100 });
    expect(capped.reviews).toHaveLength(50);
    expect(capped.totalReviewCount).toBe(61);
    expect((await client.listReviews({ ...MITTE, pageToken: capped.nextPageToken })).reviews).toHaveLength(11);

    expectFieldRefusal(
      await providerError(client.listReviews({ ...KREUZBERG, pageToken: 'bm90LWEtdG9rZW4' })),
      'pageToken',
    );
  });

  it('answers a location without reviews with nothing, and an unknown location with 404', async () => {
    await control.addIdentity({
      email: 'quiet@sandbox.example',
      name: 'Quiet',
      accounts: [
        {
          accountId: 'q1',
          accountName: 'Quiet',
          locations: [
            {
              locationId: 'l1',
              location: {
                title: 'Quiet',
                categories: { primaryCategory: { name: 'gcid:x' } },
                storefrontAddress: { regionCode: 'DE' },
              },
            },
          ],
        },
      ],
    });
    expect(await client.listReviews({ accountId: 'q1', locationId: 'l1' })).toEqual({
      reviews: [],
      averageRating: 0,
      totalReviewCount: 0,
    });
    const raw = await fetch(`${sandbox.url}/v4/accounts/q1/locations/l1/reviews`, {
      headers: { authorization: 'Bearer t' },
    });
    expect(await raw.json()).toEqual({});
    expect(await providerError(client.listReviews({ accountId: '1001', locationId: '404' }))).toMatchObject({
      status: 404,
      reason: 'NOT_FOUND',
    });
  });

  it('gets one review, 404 for an unknown one, and refuses a malformed name without calling', async () => {
    const listed = (await client.listReviews(KREUZBERG)).reviews.find((entry) => entry.reviewId === 'alice1-maja');
    expect(await client.getReview(review('alice1-maja'))).toEqual(listed);
    expect(await providerError(client.getReview(review('nobody')))).toMatchObject({ status: 404, reason: 'NOT_FOUND' });
    expect(await providerError(client.getReview('accounts/1001/locations/10011'))).toMatchObject({
      status: 0,
      reason: 'INVALID_ARGUMENT',
    });
    expect((await control.state()).calls).toMatchObject({ 'review-get': 2, 'review-list': 1 });
  });
});

describe('replies and moderation', () => {
  it('a reply is PENDING when sent and APPROVED at the next read (moderationMs 0)', async () => {
    now = START + 5000;
    const reply = await client.replyToReview(review('alice1-tom'), 'Sorry, Tom: fresh batches come at 3 pm now.');
    expect(reply).toEqual({
      comment: 'Sorry, Tom: fresh batches come at 3 pm now.',
      updateTime: new Date(START + 5000).toISOString(),
      state: 'PENDING',
    });
    expect((await client.getReview(review('alice1-tom'))).reviewReply).toEqual({ ...reply, state: 'APPROVED' });
    expect((await control.state()).reviews.find((entry) => entry.reviewId === 'alice1-tom')?.reviewReply?.state).toBe(
      'APPROVED',
    );
  });

  it('follows the moderation period on the clock to APPROVED, or REJECTED for the reject marker', async () => {
    await control.configure({ moderationMs: 60_000 });
    await client.replyToReview(review('alice1-lea'), 'We have a new espresso machine.');
    await client.replyToReview(review('alice1-jonas'), 'Queue jumpers welcome [[reject]]');
    const states = async () =>
      Promise.all(
        ['alice1-lea', 'alice1-jonas'].map(async (id) => (await client.getReview(review(id))).reviewReply?.state),
      );

    now = START + 59_999;
    expect(await states()).toEqual(['PENDING', 'PENDING']);
    now = START + 60_000;
    expect(await states()).toEqual(['APPROVED', 'REJECTED']);

    // A new reply replaces the old one and is moderated afresh, by the marker of its own time.
    await control.configure({ rejectMarker: 'NEVER' });
    await client.replyToReview(review('alice1-jonas'), 'Thanks for your patience [[reject]]');
    expect(await states()).toEqual(['APPROVED', 'PENDING']);
    now += 60_000;
    expect(await states()).toEqual(['APPROVED', 'APPROVED']);
    expect((await control.state()).calls).toMatchObject({ 'review-reply': 3, 'review-get': 8 });
    await expect(control.configure({ moderationMs: -1 })).rejects.toThrow(/HTTP 400/);
  });

  it('takes 1 to 4096 bytes of UTF-8 and refuses the rest naming comment', async () => {
    const name = review('alice1-noor');
    const exactly = `${'€'.repeat(1365)}a`;
    expect(Buffer.byteLength(exactly)).toBe(4096);
    expect((await client.replyToReview(name, exactly)).comment).toBe(exactly);
    expect((await client.replyToReview(name, 'x')).comment).toBe('x');

    for (const comment of ['', 'a'.repeat(4097), `${'€'.repeat(1365)}ab`]) {
      expectFieldRefusal(await providerError(client.replyToReview(name, comment)), 'comment');
    }
    const send = (body: unknown) =>
      fetch(`${sandbox.url}/v4/${name}/reply`, {
        method: 'PUT',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (const [body, field] of [
      [{}, 'comment'],
      [{ comment: 42 }, 'comment'],
      [{ comment: 'ok', mood: 'happy' }, 'mood'],
    ] as const) {
      const answer = await send(body);
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({
        error: { status: 'INVALID_ARGUMENT', details: [{ fieldViolations: [{ field }] }] },
      });
    }
    // Output-only fields sent back are ignored.
    expect((await send({ comment: 'Back again', state: 'APPROVED', updateTime: 'whenever' })).status).toBe(200);
    expect((await client.getReview(name)).reviewReply?.comment).toBe('Back again');
  });

  it('deletes a reply; deleting it again is 404', async () => {
    await client.deleteReviewReply(review('alice1-maja'));
    expect((await client.getReview(review('alice1-maja'))).reviewReply).toBeUndefined();
    expect(await providerError(client.deleteReviewReply(review('alice1-maja')))).toMatchObject({
      status: 404,
      reason: 'NOT_FOUND',
    });
    expect((await control.state()).calls['review-reply-delete']).toBe(2);
  });

  it('a deleted review is 404 for every call, and leaves the list and its average', async () => {
    await control.deleteReview(review('alice1-anonymous'));
    const name = review('alice1-anonymous');
    for (const call of [
      client.getReview(name),
      client.replyToReview(name, 'Sorry to hear that'),
      client.deleteReviewReply(name),
    ]) {
      expect(await providerError(call)).toMatchObject({ status: 404, reason: 'NOT_FOUND', retryable: false });
    }
    const page = await client.listReviews(KREUZBERG);
    expect(page.reviews.map((entry) => entry.reviewId)).not.toContain('alice1-anonymous');
    expect(page).toMatchObject({ totalReviewCount: 5, averageRating: 3.8 });
    await expect(control.deleteReview(name)).rejects.toThrow(/HTTP 404/);
    // A reset brings the seed back.
    await control.reset();
    expect((await client.getReview(name)).starRating).toBe('ONE');
  });

  it('a scripted failure before the reply changes nothing; after it, the reply took effect', async () => {
    await control.fail({ count: 1, status: 503, method: 'PUT', pathContains: '/reviews/' });
    expect(await providerError(client.replyToReview(review('alice1-lea'), 'Lost'))).toMatchObject({
      status: 503,
      retryable: true,
    });
    expect((await client.getReview(review('alice1-lea'))).reviewReply).toBeUndefined();

    await control.fail({ count: 1, status: 0, method: 'PUT', when: 'after' });
    expect(await providerError(client.replyToReview(review('alice1-lea'), 'Sent'))).toMatchObject({
      reason: 'NETWORK_ERROR',
      retryable: true,
    });
    expect((await client.getReview(review('alice1-lea'))).reviewReply).toMatchObject({
      comment: 'Sent',
      state: 'APPROVED',
    });
  });
});

describe('a reply answered through the service', () => {
  // The service with its own mounted sandbox (moderation 0: the provider decides at the first look).
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack();
  });
  afterAll(() => t?.close());

  it('is listed as REVIEW_REPLY_SEND and REVIEW_REPLY_CHECK work about the review, each finished', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 0 });
    const accountId = await connectAlice(t.url, org.token);
    const reviewOf = async () => {
      const answer = await graphql(t.url, `query ($a: ID, $id: ID!) { review(accountId: $a, id: $id) { id reviewReplyState } }`, {
        token: org.token,
        variables: { a: accountId, id: review('alice1-tom') },
      });
      return answer.body.data.review;
    };
    const { id: reviewId } = await reviewOf();
    const sent = await http(t.url, 'POST', `/review/answer?account_id=${accountId}`, { token: org.token, body: { review_id: review('alice1-tom'), answer: 'Fresh batches at 3 pm now.' } });
    expect(sent.status).toBe(200);
    await eventually(async () => ((await reviewOf()).reviewReplyState === 'ACTIVE' ? true : undefined), 30000, 'the reply to be moderated');

    const owner = { subjectId: reviewId, accountId, organizationId: org.organization.id, retryable: false };
    const sends = await waitForWork(t.url, org.token, 'REVIEW_REPLY_SEND', reviewId);
    expect(sends).toHaveLength(1);
    expect(sends[0]).toMatchObject({ kind: 'REVIEW_REPLY_SEND', ...owner });
    expectSucceeded(sends[0]!);
    // The check the send queued found the reply decided: one check, queued once the send had started.
    const checks = await waitForWork(t.url, org.token, 'REVIEW_REPLY_CHECK', reviewId);
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({ kind: 'REVIEW_REPLY_CHECK', ...owner });
    expectSucceeded(checks[0]!);
    expect(Date.parse(checks[0]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(sends[0]!.startedAt!));
  });
});

describe('reviews with identity tokens', () => {
  it('an identity reads and replies to its own reviews only', async () => {
    const aliceToken = await accessTokenOf(alice.sub);
    const carolToken = await accessTokenOf(carol.sub);
    expect((await client.listReviews(KREUZBERG, { accessToken: aliceToken })).totalReviewCount).toBe(6);
    expect((await client.replyToReview(review('alice1-lea'), 'Thanks!', { accessToken: aliceToken })).state).toBe(
      'PENDING',
    );

    for (const call of [
      client.listReviews(KREUZBERG, { accessToken: carolToken }),
      client.getReview(review('alice1-lea'), { accessToken: carolToken }),
      client.replyToReview(review('alice1-lea'), 'Not mine to answer', { accessToken: carolToken }),
      client.deleteReviewReply(review('alice1-lea'), { accessToken: carolToken }),
    ]) {
      expect(await providerError(call)).toMatchObject({ status: 403, reason: 'PERMISSION_DENIED' });
    }
    expect((await client.getReview(review('alice1-lea'))).reviewReply?.comment).toBe('Thanks!');
    const north = { accountId: '3003', locationId: '30031' };
    expect(
      (await client.listReviews(north, { accessToken: carolToken })).reviews.map((entry) => entry.reviewId),
    ).toEqual(['carol-north-ida']);

    now += 3600_000;
    expect(await providerError(client.listReviews(north, { accessToken: carolToken }))).toMatchObject({
      status: 401,
      reason: 'UNAUTHENTICATED',
    });
  });
});

describe('controls for reviews', () => {
  it('adds reviews to a location, refusing unknown locations, taken ids and malformed reviews', async () => {
    const added = await control.addReviews(carol.locations[1], [
      {
        reviewId: 'custom-1',
        starRating: 'TWO',
        reviewer: { displayName: 'Kim' },
        comment: 'Cold coffee',
        createTime: '2031-02-01T08:00:00Z',
        reviewReply: { comment: 'We are on it', state: 'PENDING' },
      },
    ]);
    expect(added).toEqual([
      {
        name: 'accounts/3004/locations/30041/reviews/custom-1',
        reviewId: 'custom-1',
        reviewer: { displayName: 'Kim', isAnonymous: false },
        starRating: 'TWO',
        comment: 'Cold coffee',
        createTime: '2031-02-01T08:00:00.000Z',
        updateTime: '2031-02-01T08:00:00.000Z',
        reviewReply: { comment: 'We are on it', updateTime: '2031-02-01T08:00:00.000Z', state: 'PENDING' },
      },
    ]);
    // A reply seeded PENDING stays so until the owner replies again.
    now += 365 * DAY_MS;
    expect((await client.getReview(added[0]!.name)).reviewReply?.state).toBe('PENDING');

    await expect(control.addReviews('accounts/3004/locations/404', [{ starRating: 'ONE' }])).rejects.toThrow(
      /HTTP 404/,
    );
    await expect(control.addReviews(carol.locations[1], [{ reviewId: 'custom-1', starRating: 'ONE' }])).rejects.toThrow(
      /HTTP 409/,
    );
    await expect(control.addReviews(carol.locations[1], [{ starRating: 'SIX' as 'ONE' }])).rejects.toThrow(
      /HTTP 400 .*starRating/,
    );
    await expect(
      control.addReviews(carol.locations[1], [
        { starRating: 'ONE', createTime: '2031-02-02T00:00:00Z', updateTime: '2031-02-01T00:00:00Z' },
      ]),
    ).rejects.toThrow(/HTTP 400 .*reviews\[0\]\.updateTime/);
    await expect(
      control.addReviews(carol.locations[1], [
        { starRating: 'ONE', reviewer: { displayName: 'Named', isAnonymous: false }, reviewReply: { comment: '' } },
      ]),
    ).rejects.toThrow(/HTTP 400/);
    expect((await client.listReviews({ accountId: '3004', locationId: '30041' })).totalReviewCount).toBe(2);
  });
});

describe('persistence in a state file', () => {
  type Logger = { level: string; stream: { write(line: string): void } };
  const restarts = sandboxRestarts('alpha-sandbox-reviews-', (stateFile, logger?: Logger) => startAlphaSandbox({ port: 0, clock: () => now, stateFile, ...(logger ? { logger } : {}) }));

  async function start(stateFile: string, logger?: Logger) {
    const started = await restarts.start(stateFile, logger);
    return {
      close: () => started.close(),
      client: createAlphaClient({ baseUrl: started.url, accessToken: () => 't' }),
      control: createAlphaSandboxControl(started.url),
    };
  }

  it('keeps accounts, reviews, replies in moderation and deletions across a close and a new start', async () => {
    const stateFile = restarts.file('reviews.json');
    const first = await start(stateFile);
    await first.control.configure({ moderationMs: 60_000 });
    await first.client.replyToReview(review('alice1-lea'), 'Kept in moderation');
    await first.control.deleteReview(review('alice1-tom'));
    const [added] = await first.control.addReviews(alice.locations[1], [{ starRating: 'THREE', comment: 'Added' }]);
    const before: AlphaReview[] = (await first.client.listReviews(KREUZBERG)).reviews;
    await first.close();

    const second = await start(stateFile);
    expect((await second.client.listReviews(KREUZBERG)).reviews).toEqual(before);
    expect((await second.client.getReview(review('alice1-lea'))).reviewReply?.state).toBe('PENDING');
    now = START + 60_000;
    expect((await second.client.getReview(review('alice1-lea'))).reviewReply?.state).toBe('APPROVED');
    expect(await providerError(second.client.getReview(review('alice1-tom')))).toMatchObject({ status: 404 });
    expect(await second.client.getReview(added!.name)).toEqual(added);
    expect((await second.client.listAccounts()).accounts).toHaveLength(4);
    await second.close();
  });

  it('starts seeded, with a warning, from a file with a reply the provider would refuse', async () => {
    const stateFile = restarts.file('refused.json');
    const location = {
      seq: 1,
      id: 'l1',
      accountId: 'a1',
      requestId: null,
      content: {
        title: 'T',
        categories: { primaryCategory: { name: 'gcid:x' } },
        storefrontAddress: { regionCode: 'DE' },
      },
      edits: 0,
      recentEdits: [],
    };
    const tooLong = {
      seq: 2,
      id: 'r1',
      accountId: 'a1',
      locationId: 'l1',
      reviewer: { displayName: 'R', isAnonymous: false },
      starRating: 'ONE',
      createdAt: 0,
      updatedAt: 0,
      reply: { comment: 'x'.repeat(4097), updatedAt: 0, decideAt: 0, decision: 'APPROVED' },
    };
    await writeFile(
      stateFile,
      JSON.stringify({
        version: 2,
        nextSeq: 3,
        posts: [],
        locations: [location],
        identities: [],
        accounts: [],
        reviews: [tooLong],
        oauth: { codes: [], refreshTokens: [], accessTokens: [] },
      }),
    );
    const lines: string[] = [];
    const refused = await start(stateFile, { level: 'warn', stream: { write: (line) => void lines.push(line) } });
    expect(await refused.client.listLocations({ accountId: 'a1' })).toEqual({ locations: [] });
    expect((await refused.client.listReviews(KREUZBERG)).totalReviewCount).toBe(6);
    expect(lines.map((line) => JSON.parse(line) as { msg: string })).toEqual([
      expect.objectContaining({ msg: expect.stringContaining('malformed') }),
    ]);
    await refused.close();
  });
});
