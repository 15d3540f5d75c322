import { Account } from '../src/account/account.entity';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { minimalLocationBody } from './support/locations';
import { eventually, pollPost, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Waiting is not failing (docs/jobs.md; issue 29): a provider answering 429 puts the job back in its queue, due when
 * the provider said, without spending an attempt or recording a failure; only past JOB_MAX_WAIT_SECONDS of waiting
 * does a 429 count as a failure. Through REST and GraphQL, against the alpha sandbox's scripted 429s (Retry-After:
 * 1 s) and its per-project quota.
 */

let t: TestStack;
let org: OrganizationFixture;

beforeAll(async () => {
  // One retry: a 429 counted as a failure would end a post in ERROR after two of them.
  t = await startTestStack({ JOB_RETRY_LIMIT: '1', JOB_RETRY_DELAY_SECONDS: '1', JOB_MAX_WAIT_SECONDS: '8', POST_RATE_LIMIT_PER_MINUTE: '1000' });
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 1, connected: true });
  // The second account is known to the provider: its new locations are created there by a job.
  const em = t.em();
  const known = await em.findOneOrFail(Account, org.accounts[1]!.account.id);
  known.alphaAccountId = 'alpha-waits';
  await em.flush();
});
afterAll(() => t?.close());

const alpha = () => sandboxOf(t.url);
const account = () => org.accounts[0]!;

async function createPost(summary: string): Promise<string> {
  const created = await http(t.url, 'POST', `/post?account_id=${account().account.id}`, {
    token: org.token,
    body: { location_id: account().locations[0]!.id, params: { topicType: 'STANDARD', summary, languageCode: 'en' } },
  });
  expect(created.status).toBe(202);
  return created.body.payload.id as string;
}

/** The post's publish job as pg-boss keeps it, and its unit of work with its attempt history. */
async function publishOf(postId: string) {
  const [job] = await t.em().getConnection().execute<{ state: string; retry_count: number }[]>(
    `select state::text, retry_count from pgboss.job where name = 'post-publish' and data->>'postId' = ?`,
    [postId],
  );
  const answer = await graphql(
    t.url,
    `query ($a: ID, $kinds: [AsyncWorkKind!]) { asyncWork(accountId: $a, kinds: $kinds, first: 50) { edges { node {
      subjectId status attempts maxAttempts error attemptHistory { number outcome } } } } }`,
    { token: org.token, variables: { a: account().account.id, kinds: ['POST_PUBLISH'] } },
  );
  expect(answer.body.errors).toBeUndefined();
  const work = (answer.body.data!.asyncWork.edges as { node: { subjectId: string } & Record<string, unknown> }[]).map(({ node }) => node).find((node) => node.subjectId === postId);
  return { job, work };
}

/** lg_job_attempts_total of the post-publish queue, by outcome. */
async function publishAttempts(): Promise<Record<string, number>> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const [, outcome, value] of text.matchAll(/^lg_job_attempts_total\{queue="post-publish",outcome="(\w+)"\} (\d+)$/gm)) counts[outcome!] = Number(value);
  return counts;
}

/** A location of the second account, created at the provider by its publish job. */
async function connectedLocation(n: number): Promise<string> {
  const accountId = org.accounts[1]!.account.id;
  const answer = await http(t.url, 'POST', `/location?account_id=${accountId}`, {
    token: org.token,
    body: minimalLocationBody({ name: `Waiting Bakery ${n}`, reference_id: `wait-${n}`, category_id: 'gcid:bakery' }),
  });
  expect(answer.status).toBe(200);
  const id = answer.body.payload.location_id as string;
  await eventually(async () => {
    const listed = await http(t.url, 'GET', `/location?account_id=${accountId}&per_page=250`, { token: org.token });
    return listed.body.data.find((location: { id: string; connected: boolean }) => location.id === id)?.connected ? true : undefined;
  }, 30_000, `location ${id} to be connected`);
  return id;
}

describe('a provider answering 429', () => {
  it('makes the job wait as told and go on: LIVE, one attempt, no retry spent, no failure recorded', async () => {
    const before = await publishAttempts();
    // Three 429s in a row, each with Retry-After 1: three times what one retry would allow.
    await alpha().fail({ count: 3, status: 429, method: 'POST', pathContains: 'localPosts' });
    const postId = await createPost('Waits for the quota');
    const live = await pollPost(t.url, org.token, account().account.id, postId, (post) => post.state === 'LIVE', 30_000);
    expect(live.last_error ?? null).toBeNull();

    const { job, work } = await eventually(async () => {
      const found = await publishOf(postId);
      return found.work?.status === 'SUCCEEDED' && found.job?.state === 'completed' ? found : undefined;
    }, 15_000, 'the publish to end');
    expect(job).toEqual({ state: 'completed', retry_count: 0 });
    expect(work).toMatchObject({ attempts: 1, maxAttempts: 2, error: null, attemptHistory: [{ number: 1, outcome: 'SUCCEEDED' }] });
    const after = await publishAttempts();
    expect((after.waited ?? 0) - (before.waited ?? 0)).toBe(3);
    expect((after.retried ?? 0) - (before.retried ?? 0)).toBe(0);
  });

  it('spreads a burst over the provider’s per-project quota: every post LIVE, none retried', async () => {
    await alpha().configure({ quotaPerSecond: 2 });
    try {
      const ids = await Promise.all(Array.from({ length: 8 }, (_, index) => createPost(`Burst ${index}`)));
      for (const id of ids) await pollPost(t.url, org.token, account().account.id, id, (post) => post.state === 'LIVE', 60_000);
      const quota = (await alpha().state()).quota;
      // The quota did refuse calls: the jobs waited instead of failing.
      expect(quota.refused).toBeGreaterThan(0);
      for (const id of ids) expect((await publishOf(id)).job).toEqual({ state: 'completed', retry_count: 0 });
    } finally {
      await alpha().configure({ quotaPerSecond: null });
    }
  });

  it('lets location updates wait for the quota too: every update SUCCEEDED, none FAILED, no error kept', async () => {
    const accountId = org.accounts[1]!.account.id;
    const ids = await Promise.all([1, 2, 3, 4].map((n) => connectedLocation(n)));
    await alpha().configure({ quotaPerSecond: 1 });
    try {
      const patched = await Promise.all(
        ids.map((id, n) => http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${id}`, { token: org.token, body: { description: `Waited ${n}` } })),
      );
      for (const answer of patched) expect(answer.status).toBe(200);
      for (const answer of patched) {
        const job = await eventually(async () => {
          const listed = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&id=${answer.body.payload.id as string}`, { token: org.token });
          const update = listed.body.payload.updates[0];
          return update.status === 'SUCCEEDED' || update.status === 'FAILED' ? update : undefined;
        }, 60_000, 'the update to end');
        expect(job).toMatchObject({ status: 'SUCCEEDED', error: null });
      }
      expect((await alpha().state()).quota.refused).toBeGreaterThan(0);
    } finally {
      await alpha().configure({ quotaPerSecond: null });
    }
  });

  it('counts as a failure once the job has waited JOB_MAX_WAIT_SECONDS in all: then retried, then ERROR', async () => {
    await alpha().fail({ count: 100, status: 429, method: 'POST', pathContains: 'localPosts' });
    try {
      const postId = await createPost('Never let through');
      const failed = await pollPost(t.url, org.token, account().account.id, postId, (post) => post.state === 'ERROR', 60_000);
      expect(failed.last_error).toMatchObject({ status: 429, reason: 'RESOURCE_EXHAUSTED' });
      const { work } = await eventually(async () => {
        const found = await publishOf(postId);
        return found.work?.status === 'FAILED' || found.work?.status === 'DEAD_LETTERED' ? found : undefined;
      }, 15_000, 'the publish to fail');
      // The waits gave their attempts back; the two that counted are the failures after the allowance.
      expect(work).toMatchObject({ attempts: 2, maxAttempts: 2 });
    } finally {
      await alpha().reset();
    }
  });
});

describe('a 429 naming the provider’s project quota', () => {
  // A stack of its own: the pause it starts lasts a minute (the quota's Retry-After), longer than the waits above allow.
  let paused: TestStack;
  let fixture: OrganizationFixture;
  beforeAll(async () => {
    paused = await startTestStack({ JOB_RETRY_LIMIT: '1', JOB_RETRY_DELAY_SECONDS: '1', POST_RATE_LIMIT_PER_MINUTE: '1000' });
    fixture = await createOrganizationFixture(paused.em(), { accounts: 1, locationsEach: 1, connected: true });
  });
  afterAll(() => paused?.close());

  it('pauses its provider: the jobs after it make no call until then, and spend no attempt', async () => {
    const sandbox = sandboxOf(paused.url);
    // The counters of this test's own calls only.
    await sandbox.reset();
    const accountId = fixture.accounts[0]!.account.id;
    const post = async (summary: string) => {
      const created = await http(paused.url, 'POST', `/post?account_id=${accountId}`, {
        token: fixture.token,
        body: { location_id: fixture.accounts[0]!.locations[0]!.id, params: { topicType: 'STANDARD', summary, languageCode: 'en' } },
      });
      expect(created.status).toBe(202);
      return created.body.payload.id as string;
    };
    const waited = async () => {
      const text = await (await fetch(`${paused.url}/metrics`)).text();
      return Number(/^lg_job_attempts_total\{queue="post-publish",outcome="waited"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    const jobOf = async (postId: string) =>
      (await paused.em().getConnection().execute<{ state: string; retry_count: number }[]>(
        `select state::text, retry_count from pgboss.job where name = 'post-publish' and data->>'postId' = ?`,
        [postId],
      ))[0];

    await sandbox.configure({ quotaPerMinute: 1 });
    const waitsBefore = await waited();
    const admitted = await post('Admitted by the quota');
    await pollPost(paused.url, fixture.token, accountId, admitted, (found) => found.state === 'LIVE', 30_000);
    const refused = await post('Refused: pauses the provider');
    await eventually(async () => ((await sandbox.state()).quota.refused === 1 ? true : undefined), 15_000, 'the 429');
    const held = await post('Held by the pause');
    // Taken and put back without a call: two waits, the refused one's and the held one's.
    await eventually(async () => ((await waited()) - waitsBefore >= 2 ? true : undefined), 15_000, 'the held job to wait');
    expect((await sandbox.state()).quota).toMatchObject({ admitted: 1, refused: 1, callsDuringRetryAfter: 0 });
    for (const id of [refused, held]) {
      expect(await jobOf(id)).toEqual({ state: 'created', retry_count: 0 });
      expect((await pollPost(paused.url, fixture.token, accountId, id, () => true)).state).toBe('SENDING');
    }
  });
});
