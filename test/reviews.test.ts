import { TestClock } from './support/clock';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { connectAlice } from './support/consent';
import { graphql, http } from './support/http';
import { eventually, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Reviews of a connected account and replies to them, over HTTP against the sandbox: the reviews imported, their
 * filters, a reply moderated to ACTIVE or REJECTED (the sandbox's moderation runs on the test's clock), the
 * document's 409 while one is pending and 410 for a review the provider no longer has.
 */

const clock = new TestClock();
let t: TestStack;
let org: OrganizationFixture;
let accountId: string;
let locationId: string;
let reviews: { id: string; name: string; createTime: string; starRating: number; reviewReplyState: string | null; comment: string | null }[];

const REVIEW_FIELDS = 'id name createTime starRating comment reviewReplyState replyComment reviewerName reviewerAnonymous deletedAt locationId accountId';

async function listReviews(filters = ''): Promise<typeof reviews> {
  const answer = await graphql(t.url, `query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l${filters}) { totalCount edges { node { ${REVIEW_FIELDS} } } } }`, {
    token: org.token,
    variables: { a: accountId, l: locationId },
  });
  expect(answer.body.errors).toBeUndefined();
  return answer.body.data.reviews.edges.map((edge: { node: unknown }) => edge.node);
}

async function review(name: string): Promise<any> {
  const answer = await graphql(t.url, `query ($a: ID, $id: ID!) { review(accountId: $a, id: $id) { ${REVIEW_FIELDS} } }`, {
    token: org.token,
    variables: { a: accountId, id: name },
  });
  return answer.body.data?.review;
}

function answer(reviewId: unknown, text: unknown, options: { token?: string; account?: string } = {}) {
  return http(t.url, 'POST', `/review/answer?account_id=${options.account ?? accountId}`, {
    token: options.token ?? org.token,
    body: { review_id: reviewId, answer: text },
  });
}

/** Until the provider holds this reply: its send is a job (the answer only queues it). */
function sentToProvider(name: string, text: string): Promise<unknown> {
  return eventually(async () => {
    const remote = (await sandboxOf(t.url).state()).reviews.find((item: { name: string }) => item.name === name) as any;
    return remote?.reviewReply?.comment === text ? remote : undefined;
  }, 30000, `the reply to ${name} at the provider`);
}

/** Until the review's reply has left PENDING. */
function moderated(name: string): Promise<any> {
  return eventually(async () => {
    const current = await review(name);
    return current.reviewReplyState !== 'PENDING' ? current : undefined;
  }, 30000, `the moderation of ${name}`);
}

beforeAll(async () => {
  t = await startTestStack({ JOB_RETRY_DELAY_SECONDS: '1' }, { clock });
  org = await createOrganizationFixture(t.em(), { accounts: 0 });
  accountId = await connectAlice(t.url, org.token);
  const locations = await http(t.url, 'GET', `/location?account_id=${accountId}&store_code=alice-1`, { token: org.token });
  locationId = locations.body.data[0].id;
  reviews = await listReviews();
});
beforeEach(() => clock.release());
afterAll(() => t?.close());

describe('reviews of a location', () => {
  it('are imported with the provider’s ratings, text, reviewers and replies, newest first', async () => {
    expect(reviews).toHaveLength(6);
    const times = reviews.map((item) => Date.parse(item.createTime));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(new Set(reviews.map((item) => item.starRating))).toEqual(new Set([1, 2, 3, 4, 5]));
    expect(reviews.every((item) => item.name.startsWith('accounts/1001/locations/10011/reviews/'))).toBe(true);
    const anonymous = reviews.find((item) => item.name.endsWith('alice1-anonymous')) as any;
    expect(anonymous).toMatchObject({ reviewerAnonymous: true, reviewerName: null, locationId, accountId });
    const replied = reviews.find((item) => item.name.endsWith('alice1-maja')) as any;
    expect(replied).toMatchObject({ reviewReplyState: 'ACTIVE', replyComment: expect.any(String) });
  });

  it('filter by star rating, by replied or not, and by reply state', async () => {
    expect((await listReviews(', starRating: 5')).every((item) => item.starRating === 5)).toBe(true);
    const replied = await listReviews(', replied: true');
    expect(replied.map((item) => item.name)).toEqual([expect.stringMatching(/alice1-maja$/)]);
    expect(await listReviews(', replied: false')).toHaveLength(5);
    expect((await listReviews(', replyState: ACTIVE')).map((item) => item.name)).toEqual(replied.map((item) => item.name));
    const refused = await graphql(t.url, `query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l, starRating: 6) { totalCount } }`, {
      token: org.token,
      variables: { a: accountId, l: locationId },
    });
    expect(refused.body.errors?.[0]).toMatchObject({ message: 'starRating must be 1 to 5', extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('are the account’s only: another organization’s token finds none', async () => {
    const other = await createOrganizationFixture(t.em(), { accounts: 1 });
    const hidden = await graphql(t.url, `query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l) { totalCount } }`, {
      token: other.token,
      variables: { a: other.accounts[0]!.account.id, l: locationId },
    });
    expect(hidden.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const replied = await answer(reviews[0]!.name, 'Not yours', { token: other.token, account: other.accounts[0]!.account.id });
    expect(replied.status).toBe(404);
    expect(replied.body).toEqual({ error: 404, message: 'Review not found' });
  });
});

describe('one provider account connected by two organizations', () => {
  it('gives each its own reviews: one’s import and replies never touch the other’s', async () => {
    const second = await createOrganizationFixture(t.em(), { accounts: 0 });
    const secondAccount = await connectAlice(t.url, second.token);
    const secondLocation = (await http(t.url, 'GET', `/location?account_id=${secondAccount}&store_code=alice-1`, { token: second.token })).body.data[0].id;
    const theirs = await graphql(t.url, `query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l) { edges { node { id name accountId } } } }`, {
      token: second.token,
      variables: { a: secondAccount, l: secondLocation },
    });
    const nodes = theirs.body.data.reviews.edges.map((edge: { node: { id: string; name: string; accountId: string } }) => edge.node);
    expect(nodes.map((node: { name: string }) => node.name).sort()).toEqual(reviews.map((item) => item.name).sort());
    expect(nodes.every((node: { accountId: string }) => node.accountId === secondAccount)).toBe(true);
    // Their records are their own: the first organization's are as they were.
    expect(nodes.map((node: { id: string }) => node.id)).not.toEqual(expect.arrayContaining([reviews[0]!.id]));
    expect((await listReviews()).map((item) => item.id).sort()).toEqual(reviews.map((item) => item.id).sort());
  });
});

describe('POST /review/answer', () => {
  it('sends the reply, answers 409 REPLY_IN_PROGRESS while it is moderated, and follows it to ACTIVE', async () => {
    clock.hold();
    await sandboxOf(t.url).configure({ moderationMs: 60_000 });
    const target = reviews.find((item) => item.starRating === 5 && !item.reviewReplyState)!;
    const sent = await answer(target.name, 'Thank you for the kind words!');
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ success: true, payload: 'The reply was accepted: it is sent to the provider, which then moderates it' });
    expect(await review(target.name)).toMatchObject({ reviewReplyState: 'PENDING', replyComment: 'Thank you for the kind words!' });
    // Moderation starts when the provider receives it, on the held clock: only then may the clock move.
    await sentToProvider(target.name, 'Thank you for the kind words!');

    const again = await answer(target.name, 'A second thank you');
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ success: false, msg: 'REPLY_IN_PROGRESS', payload: { msg: expect.any(String) } });

    clock.advance(61_000);
    expect(await moderated(target.name)).toMatchObject({ reviewReplyState: 'ACTIVE', replyComment: 'Thank you for the kind words!' });
    const remote = (await sandboxOf(t.url).state()).reviews.find((item: { name: string }) => item.name === target.name) as any;
    expect(remote.reviewReply).toMatchObject({ comment: 'Thank you for the kind words!', state: 'APPROVED' });
    await sandboxOf(t.url).configure({ moderationMs: 0 });
  });

  it('follows a reply the moderation refuses to REJECTED; a new reply may then be sent', async () => {
    const target = reviews.find((item) => item.starRating === 1)!;
    expect((await answer(target.name, 'We are sorry [[reject]]')).status).toBe(200);
    expect(await moderated(target.name)).toMatchObject({ reviewReplyState: 'REJECTED' });
    expect((await answer(target.name, 'We are sorry, and will do better')).status).toBe(200);
    expect(await moderated(target.name)).toMatchObject({ reviewReplyState: 'ACTIVE', replyComment: 'We are sorry, and will do better' });
  });

  it('of two concurrent replies to one review, sends one and answers the other 409', async () => {
    clock.hold();
    await sandboxOf(t.url).configure({ moderationMs: 60_000 });
    const target = reviews.find((item) => item.starRating === 3)!;
    const [a, b] = await Promise.all([answer(target.name, 'Reply A'), answer(target.name, 'Reply B')]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const sentText = a.status === 200 ? 'Reply A' : 'Reply B';
    expect(await review(target.name)).toMatchObject({ reviewReplyState: 'PENDING', replyComment: sentText });
    await sentToProvider(target.name, sentText);
    clock.advance(61_000);
    await moderated(target.name);
    await sandboxOf(t.url).configure({ moderationMs: 0 });
  });

  it('answers 410 for a review the provider no longer has, and marks it deleted', async () => {
    const target = reviews.find((item) => item.starRating === 2)!;
    await sandboxOf(t.url).deleteReview(target.name);
    const gone = await answer(target.name, 'Too late');
    expect(gone.status).toBe(410);
    expect(gone.body).toEqual({ error: 410, message: 'The review was deleted' });
    expect((await review(target.name)).deletedAt).toEqual(expect.any(String));
    expect((await listReviews()).map((item) => item.name)).not.toContain(target.name);
    // And again, without asking the provider.
    expect((await answer(target.name, 'Still too late')).status).toBe(410);
  });

  it('takes replies of 1 to 4096 bytes', async () => {
    const target = reviews.find((item) => item.starRating === 4)!;
    for (const text of ['', '   ', 'é'.repeat(2049)]) {
      const refused = await answer(target.name, text);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: 400, message: 'answer must be 1 to 4096 bytes of text' });
    }
    expect((await answer(target.name, 'é'.repeat(2048))).status).toBe(200);
    await moderated(target.name);
  });

  it('answers 400 for missing or wrong-typed fields and 404 for an unknown review', async () => {
    expect((await answer(undefined, 'Hello')).body).toEqual({ error: 400, message: 'review_id is required' });
    expect((await answer(reviews[0]!.name, undefined)).body).toEqual({ error: 400, message: 'answer is required' });
    expect((await answer(reviews[0]!.name, 42)).body).toEqual({ error: 400, message: 'answer must be a string' });
    const unknown = await answer('accounts/1001/locations/10011/reviews/nope', 'Hello');
    expect(unknown.status).toBe(404);
  });

  it('has a GraphQL twin, answerReview, with the same rules', async () => {
    const target = reviews.find((item) => item.name.endsWith('alice1-anonymous'))!;
    const mutation = `mutation ($a: ID, $r: String!, $text: String!) { answerReview(accountId: $a, reviewId: $r, answer: $text) { message review { reviewReplyState replyComment } } }`;
    const sent = await graphql(t.url, mutation, { token: org.token, variables: { a: accountId, r: target.name, text: 'Thanks, stranger' } });
    expect(sent.body.data.answerReview).toEqual({
      message: 'The reply was accepted: it is sent to the provider, which then moderates it',
      review: { reviewReplyState: 'PENDING', replyComment: 'Thanks, stranger' },
    });
    const empty = await graphql(t.url, mutation, { token: org.token, variables: { a: accountId, r: target.name, text: '' } });
    expect(empty.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    await moderated(target.name);
  });
});
