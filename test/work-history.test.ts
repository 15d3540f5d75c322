import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually, pollPost, providerIdOf, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * The history the dashboard shows (docs/async-work.md "Attempts", docs/webhooks.md "The delivery log"): each attempt
 * of a unit of work with its time, outcome and error, counted per run across a retry; each attempt of a webhook
 * delivery with the request's headers and the answer's excerpt; both read in statements that do not grow with the
 * list.
 */

const RETRY_LIMIT = 1;
let t: TestStack;
let org: OrganizationFixture;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await startTestStack({ JOB_RETRY_LIMIT: String(RETRY_LIMIT), JOB_RETRY_DELAY_SECONDS: '1', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on', POST_RATE_LIMIT_PER_MINUTE: '1000' });
  org = await createOrganizationFixture(t.em(), { name: 'History Org', accounts: 1, locationsEach: 2, connected: true });
  receiver = new WebhookReceiver();
  await receiver.start();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

const accountId = () => org.accounts[0]!.account.id;

async function gql(query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const answer = await graphql(t.url, query, { token: org.token, variables });
  expect(answer.body.errors).toBeUndefined();
  return answer.body.data;
}

async function createPost(locationIndex: number, summary: string): Promise<string> {
  const created = await http(t.url, 'POST', `/post?account_id=${accountId()}`, {
    token: org.token,
    body: { location_id: org.accounts[0]!.locations[locationIndex]!.id, params: { topicType: 'STANDARD', summary, languageCode: 'en' } },
  });
  expect(created.status).toBe(202);
  return created.body.payload.id as string;
}

const WORK = `id status attempts maxAttempts run runAttempts retryable
  attemptHistory { number run runAttempt outcome error startedAt endedAt }`;

async function publishWork(postId: string): Promise<any> {
  const data = await gql(`query ($s: ID!) { asyncWork(subjectId: $s, kinds: [POST_PUBLISH]) { totalCount nodes { ${WORK} } } }`, { s: postId });
  expect(data.asyncWork.totalCount).toBe(1);
  return data.asyncWork.nodes[0];
}

/**
 * SQL statements the server sends while answering one request. The counter is the process's: a worker or the webhook
 * dispatcher finishing what the test made may add to one reading, never take from it, so the least of three is the
 * request's own.
 */
async function statementsFor(request: () => Promise<unknown>): Promise<number> {
  const counts: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const before = t.statementCount();
    await request();
    counts.push(t.statementCount() - before);
  }
  return Math.min(...counts);
}

describe('attempts of a unit of work', () => {
  it('keeps each attempt with its outcome and error, and counts them per run after a retry (never 3/2)', async () => {
    const location = org.accounts[0]!.locations[1]!;
    await sandboxOf(t.url).fail({ count: 1 + RETRY_LIMIT, status: 503, method: 'POST', pathContains: `/locations/${providerIdOf(location.alphaLocationName!)}/localPosts` });
    const postId = await createPost(1, 'Meets an outage, then is retried');
    const dead = await eventually(async () => {
      const work = await publishWork(postId);
      return work.status === 'DEAD_LETTERED' ? work : undefined;
    }, 20_000, 'the publish to be dead-lettered');
    expect(dead).toMatchObject({ attempts: 2, maxAttempts: 2, run: 1, runAttempts: 2, retryable: true });
    expect(dead.attemptHistory).toEqual([
      expect.objectContaining({ number: 1, run: 1, runAttempt: 1, outcome: 'RETRIED', error: expect.stringMatching(/\S/) }),
      expect.objectContaining({ number: 2, run: 1, runAttempt: 2, outcome: 'DEAD_LETTERED', error: expect.stringMatching(/\S/) }),
    ]);
    for (const attempt of dead.attemptHistory) expect(Date.parse(attempt.endedAt)).toBeGreaterThanOrEqual(Date.parse(attempt.startedAt));

    const retried = await gql('mutation ($id: ID!) { retryAsyncWork(id: $id) { status run runAttempts attempts } }', { id: dead.id });
    expect(retried.retryAsyncWork).toMatchObject({ status: 'QUEUED', run: 2, runAttempts: 0, attempts: 2 });
    await pollPost(t.url, org.token, accountId(), postId, (post) => post.state === 'LIVE');
    const done = await eventually(async () => {
      const work = await publishWork(postId);
      return work.status === 'SUCCEEDED' ? work : undefined;
    }, 20_000, 'the retried publish to succeed');
    expect(done).toMatchObject({ attempts: 3, maxAttempts: 2, run: 2, runAttempts: 1 });
    expect(done.attemptHistory.map((attempt: any) => [attempt.number, attempt.run, attempt.runAttempt, attempt.outcome, attempt.error])).toEqual([
      [1, 1, 1, 'RETRIED', expect.any(String)],
      [2, 1, 2, 'DEAD_LETTERED', expect.any(String)],
      [3, 2, 1, 'SUCCEEDED', null],
    ]);
  }, 60_000);

  it('finds a record’s work by its id (subjectId), and leaves kinds out (excludeKinds)', async () => {
    const postId = await createPost(0, 'Found by its id');
    await pollPost(t.url, org.token, accountId(), postId, (post) => post.state === 'LIVE');
    const found = await gql('query ($s: ID!) { asyncWork(subjectId: $s) { totalCount nodes { kind subjectId } } }', { s: postId });
    expect(found.asyncWork.nodes).toEqual([{ kind: 'POST_PUBLISH', subjectId: postId }]);
    const none = await gql('query ($s: ID!) { asyncWork(subjectId: $s, excludeKinds: [POST_PUBLISH]) { totalCount } }', { s: postId });
    expect(none.asyncWork.totalCount).toBe(0);
    // Not an id at all: nothing, as for an id of nothing.
    expect((await gql('{ asyncWork(subjectId: "not-an-id") { totalCount } }')).asyncWork.totalCount).toBe(0);
  });

  it('reads the attempts of a list in the same statements for 2 and for 12 units of work', async () => {
    // Work settled by now (the earlier tests' and these): nothing runs while the statements are counted.
    const ids: string[] = [];
    for (let i = 0; i < 10; i += 1) ids.push(await createPost(0, `Counted ${i}`));
    for (const id of ids) await pollPost(t.url, org.token, accountId(), id, (post) => post.state === 'LIVE');
    await eventually(async () => {
      const open = await gql('{ asyncWork(statuses: [QUEUED, RUNNING, RETRYING]) { totalCount } }');
      return open.asyncWork.totalCount === 0 ? true : undefined;
    }, 20_000, 'every job to end');
    const list = (first: number) => () => gql(`query ($first: Int!) { asyncWork(first: $first) { nodes { ${WORK} } } }`, { first });
    const few = await statementsFor(list(2));
    const many = await statementsFor(list(12));
    expect(many).toBe(few);
    const listed = await list(12)();
    expect(listed.asyncWork.nodes).toHaveLength(12);
    expect(listed.asyncWork.nodes.every((node: any) => node.attemptHistory.length === node.attempts)).toBe(true);
  }, 60_000);
});

describe('attempts of a webhook delivery', () => {
  it('keeps each attempt’s request headers and the answer’s status and excerpt, read in flat statements', async () => {
    receiver.answer = (_request, response) => response.writeHead(500, { 'content-type': 'text/plain' }).end('receiver busy, try later');
    const created = await gql('mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }', {
      input: { url: receiver.url, eventTypes: ['POST_STATE_CHANGED'] },
    });
    const endpointId = created.createWebhookEndpoint.endpoint.id as string;
    const postId = await createPost(0, 'Told to a receiver');
    const received = await receiver.nth((request) => request.json.record_id === postId);

    const DELIVERIES = `query ($e: ID!, $first: Int!) { webhookDeliveries(endpointId: $e, first: $first) { nodes { id eventId attempts requestBody
      attemptHistory { number attemptedAt statusCode latencyMs responseExcerpt error requestHeaders { name value } } } } }`;
    const delivery = await eventually(async () => {
      const data = await gql(DELIVERIES, { e: endpointId, first: 20 });
      return data.webhookDeliveries.nodes.find((node: any) => node.eventId === received.json.id && node.attempts === 1 && node.attemptHistory.length === 1);
    }, 20_000, 'the first attempt to be recorded');
    expect(delivery.requestBody).toBe(received.body);
    const [attempt] = delivery.attemptHistory;
    expect(attempt).toMatchObject({ number: 1, statusCode: 500, responseExcerpt: 'receiver busy, try later', error: 'the receiver answered 500' });
    // The headers as the receiver got them (HTTP lower-cases their names).
    const sent = Object.fromEntries(attempt.requestHeaders.map((header: { name: string; value: string }) => [header.name.toLowerCase(), header.value]));
    for (const name of ['listings-signature', 'listings-event-id', 'listings-event-type', 'listings-delivery-id', 'content-type', 'user-agent', 'content-length']) {
      expect({ name, value: sent[name] }).toEqual({ name, value: received.headers[name] });
    }

    // Deleted, with its log: its failed delivery is not tried again while statements are counted below.
    await gql('mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }', { id: endpointId });

    // Another endpoint's deliveries (one per post event), read with their attempts and bodies in as many statements
    // as one delivery, once every one has ended.
    receiver.answer = (_request, response) => response.end('thanks');
    const counted = (await gql('mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }', {
      input: { url: receiver.url, eventTypes: ['POST_STATE_CHANGED'] },
    })).createWebhookEndpoint.endpoint.id as string;
    const more: string[] = [];
    for (let i = 0; i < 3; i += 1) more.push(await createPost(0, `Told again ${i}`));
    for (const id of more) await pollPost(t.url, org.token, accountId(), id, (post) => post.state === 'LIVE');
    // One delivery per event of the posts (all recorded once they are LIVE), each sent once, answered 200.
    let events = 0;
    for (const id of more) events += (await gql('query ($id: ID!) { events(recordId: $id, type: POST_STATE_CHANGED) { totalCount } }', { id })).events.totalCount as number;
    await eventually(async () => {
      const data = await gql(DELIVERIES, { e: counted, first: 20 });
      const nodes = data.webhookDeliveries.nodes as any[];
      return nodes.length === events && nodes.every((node) => node.attempts === 1 && node.attemptHistory[0]?.statusCode === 200) ? true : undefined;
    }, 20_000, 'every delivery to be sent');
    const few = await statementsFor(() => gql(DELIVERIES, { e: counted, first: 1 }));
    const many = await statementsFor(() => gql(DELIVERIES, { e: counted, first: 20 }));
    expect(many).toBe(few);
  }, 60_000);
});
