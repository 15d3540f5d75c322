import { describeLine, ERROR_LEVEL, serverLog } from './support/server-log';
import { Client } from 'pg';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { ALPHA_SANDBOX_SEED } from '../sandboxes/alpha/alpha-sandbox.seed';
import { connectAlice } from './support/consent';
import { graphql, http } from './support/http';
import { eventually, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The lock order of docs/decisions.md ("Records that requests and jobs both change", "Order"), held at the one
 * interleaving that broke it: a review's change (the reply's send job, or POST /review/answer) holds the review's
 * row lock and queues a job, whose unit of work's insert checks its foreign key to the account (FOR KEY SHARE on
 * the account's row); an account's re-sync holds the account's row lock and waits for that review's. The change is
 * a transaction (the send job) or one statement that updates the review and inserts the job (the answer,
 * docs/write-path.md): the waits below are told by the row each waits for, not by the statement's text. The change is
 * a transaction (the send job) or one statement that updates the review and inserts the job (the answer,
 * docs/write-path.md): the waits below are told by the session each waits for, not by the statement's text. The test's
 * own transactions stop each side at the right statement (row locks of the test's own sessions, never a change of
 * the code), so the two meet exactly there every time: neither may fail because of the other.
 */

let t: TestStack;
let org: OrganizationFixture;
let accountId: string;
let admin: Client;

const { destination: logDestination, lines: logLines } = serverLog();

const alpha = () => sandboxOf(t.url);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function sql<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
  return (await admin.query(text, values)).rows as T[];
}

/** A transaction of the test's own that holds the lock `statement` takes until it is let go. */
async function hold(statement: string, values: unknown[]): Promise<{ pid: number; release(): Promise<void> }> {
  const session = new Client({ connectionString: t.databaseUrl, application_name: 'lock-order-test' });
  await session.connect();
  const pid = (await session.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  await session.query('begin');
  await session.query(statement, values);
  return {
    pid,
    async release() {
      await session.query('rollback');
      await session.end();
    },
  };
}

/**
 * Until `count` of the server's statements wait for a lock, in a chain that starts at the test's session `pid`: a
 * lock it holds, or one a statement waiting for it holds (a second waiter queues behind the first).
 */
function blockedBy(pid: number, count: number, what: string): Promise<true> {
  return eventually(async () => {
    const [row] = await sql<{ n: number }>(
      `with recursive waiting(pid) as (
         select a.pid from pg_stat_activity a where $1 = any(pg_blocking_pids(a.pid))
         union
         select a.pid from pg_stat_activity a join waiting w on w.pid = any(pg_blocking_pids(a.pid))
       )
       select count(*)::int as n from waiting w join pg_stat_activity a on a.pid = w.pid
        where a.datname = current_database() and a.application_name <> 'lock-order-test'`,
      [pid],
    );
    return row!.n >= count ? true : undefined;
  }, 30000, what);
}

/** PostgreSQL's deadlock_timeout: how long a wait lasts before the waiter looks for a cycle. */
async function deadlockTimeoutMs(): Promise<number> {
  const [row] = await sql<{ ms: string }>(`select setting as ms from pg_settings where name = 'deadlock_timeout'`);
  return Number(row!.ms);
}

async function reviewOf(name: string): Promise<{ id: string; reviewReplyState: string | null; replyComment: string | null }> {
  const answer = await graphql(t.url, 'query ($a: ID, $id: ID!) { review(accountId: $a, id: $id) { id reviewReplyState replyComment } }', {
    token: org.token,
    variables: { a: accountId, id: name },
  });
  expect(answer.body.errors).toBeUndefined();
  return answer.body.data.review;
}

const answerReview = (name: string, text: string) =>
  http(t.url, 'POST', `/review/answer?account_id=${accountId}`, { token: org.token, body: { review_id: name, answer: text } });

function reconnect(state: string) {
  const query = new URLSearchParams({ alphaId: ALPHA_SANDBOX_SEED.alice.sub, id: accountId, external_api: 'true', state });
  return http(t.url, 'POST', `/reconnect/account?${query}`, { token: org.token });
}

/** Until no job of these queues is waiting, delayed or running. */
function jobsSettled(queues: string[]): Promise<true> {
  return eventually(async () => {
    const [row] = await sql<{ n: number }>(`select count(*)::int as n from pgboss.job where name = any($1) and state in ('created', 'retry', 'active')`, [queues]);
    return row!.n === 0 ? true : undefined;
  }, 60000, `the jobs of ${queues.join(', ')} to finish`);
}

/** Until the account's re-sync has ended; it must have SUCCEEDED. */
async function resyncSucceeded(): Promise<void> {
  const account = await eventually(async () => {
    const answer = await graphql(t.url, 'query ($id: ID) { account(id: $id) { syncStatus syncError } }', { token: org.token, variables: { id: accountId } });
    const current = answer.body.data?.account;
    return current && current.syncStatus !== 'QUEUED' && current.syncStatus !== 'RUNNING' ? current : undefined;
  }, 30000, 'the re-sync to end');
  expect(account).toEqual({ syncStatus: 'SUCCEEDED', syncError: null });
}

/**
 * The meeting itself, the review's row held by the test until `reviewChange` (the transaction under test, started
 * before) waits for it: the re-sync then takes the account's row lock and waits for the review's behind it; the
 * review's change gets its row and, queueing its job, stops at the organization's row (the test holds that one
 * too) for longer than deadlock_timeout, so that the re-sync has long looked for a cycle and found none; then it
 * goes on to the account's row. With the re-sync holding the account FOR UPDATE, that was a deadlock, found by
 * the review's change (it waited last).
 */
async function meetTheResync(reviewGate: { pid: number; release(): Promise<void> }, round: string): Promise<void> {
  await blockedBy(reviewGate.pid, 1, 'the review’s change to wait for the review’s row');
  const resync = await reconnect(round);
  expect(resync.status).toBe(200);
  expect(new URL(resync.body.url).searchParams.get('status')).toBe('success_reconnect');
  await blockedBy(reviewGate.pid, 2, 'the re-sync to wait for the review’s row, holding the account’s');
  const organizationGate = await hold('select 1 from organization where id = $1 for update', [org.organization.id]);
  await reviewGate.release();
  await blockedBy(organizationGate.pid, 1, 'the review’s change to queue its job');
  await sleep((await deadlockTimeoutMs()) + 500);
  await organizationGate.release();
}

beforeAll(async () => {
  t = await startTestStack({ JOB_RETRY_DELAY_SECONDS: '2' }, { log: { destination: logDestination } });
  admin = new Client({ connectionString: t.databaseUrl });
  await admin.connect();
  org = await createOrganizationFixture(t.em(), { accounts: 0 });
  accountId = await connectAlice(t.url, org.token);
});

afterAll(async () => {
  await admin?.end();
  await t?.close();
});

describe('a review changed under its row lock while its account re-syncs', () => {
  let names: string[];
  let logMark = 0;

  beforeAll(async () => {
    const locations = await http(t.url, 'GET', `/location?account_id=${accountId}&per_page=250`, { token: org.token });
    const listed = await Promise.all(
      (locations.body.data as { id: string }[]).map((location) =>
        graphql(t.url, 'query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l) { edges { node { name reviewReplyState } } } }', {
          token: org.token,
          variables: { a: accountId, l: location.id },
        })),
    );
    names = listed.flatMap((answer) => answer.body.data.reviews.edges.map((edge: { node: { name: string } }) => edge.node.name));
    expect(names.length).toBeGreaterThanOrEqual(2);
  });
  beforeEach(() => {
    logMark = logLines.length;
  });

  it('the reply’s send job queueing its check: the reply ends ACTIVE, the re-sync SUCCEEDED, no job fails', async () => {
    const name = names[0]!;
    const { id } = await reviewOf(name);
    // The send's first attempt fails at the provider: the test takes the review's row before its retry comes.
    await alpha().fail({ count: 1, status: 503, method: 'PUT', pathContains: '/reply' });
    const text = 'Thank you, said while the account re-synced';
    expect((await answerReview(name, text)).status).toBe(200);
    await eventually(async () => {
      const [work] = await sql<{ status: string }>(`select status from async_work where subject_id = $1 and kind = 'REVIEW_REPLY_SEND' order by created_at desc limit 1`, [id]);
      return work?.status === 'RETRYING' ? true : undefined;
    }, 30000, 'the send’s first attempt to fail');
    const reviewGate = await hold('select 1 from review where id = $1 for update', [id]);

    await meetTheResync(reviewGate, 'send-job');

    await resyncSucceeded();
    await jobsSettled(['review-reply-send', 'review-reply-check', 'account-import']);
    expect(await reviewOf(name)).toMatchObject({ reviewReplyState: 'ACTIVE', replyComment: text });
    const lines = logLines.slice(logMark);
    expect(lines.filter((line) => line.level >= ERROR_LEVEL).map(describeLine)).toEqual([]);
    expect(lines.filter((line) => /job failed/.test(line.msg ?? '')).map(describeLine)).toEqual([
      'job failed at the provider (will be retried) (Error: The service is currently unavailable.)',
    ]);
  });

  it('POST /review/answer queueing the reply’s send: 200, the reply ends ACTIVE, the re-sync SUCCEEDED', async () => {
    const name = names[1]!;
    const { id } = await reviewOf(name);
    const reviewGate = await hold('select 1 from review where id = $1 for update', [id]);
    const text = 'Thank you, answered while the account re-synced';
    const answering = answerReview(name, text);

    await meetTheResync(reviewGate, 'answer');

    const answered = await answering;
    expect({ status: answered.status, body: answered.body }).toMatchObject({ status: 200, body: { success: true } });
    await resyncSucceeded();
    await jobsSettled(['review-reply-send', 'review-reply-check', 'account-import']);
    expect(await reviewOf(name)).toMatchObject({ reviewReplyState: 'ACTIVE', replyComment: text });
    const lines = logLines.slice(logMark);
    expect(lines.filter((line) => line.level >= ERROR_LEVEL).map(describeLine)).toEqual([]);
    expect(lines.filter((line) => /job failed/.test(line.msg ?? '')).map(describeLine)).toEqual([]);
  });
});
