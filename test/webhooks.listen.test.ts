import { verifySignature } from '../src/webhook/webhook-signature';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { runCli, startCliProcess, type ServerProcess } from './support/process';
import { startTestStack, type TestStack } from './support/stack';
import { WebhookReceiver, type ReceivedWebhook } from './support/webhook-receiver';

/**
 * Webhooks on a laptop (docs/webhooks.md, "Developing locally"): `webhooks listen` run as a child process against a
 * running stack, streaming the organization's events over the service's own subscription and forwarding each to a local
 * receiver; `webhooks trigger` making test events. What arrives must be what a real delivery carries: the GET /events
 * item to the byte, the same headers, signed with the secret the command printed. Every wait is for what arrives
 * (a line of the child's output, a request at the receiver).
 */

let t: TestStack;
let org: OrganizationFixture;
/** Where `listen` forwards; `endpointReceiver` is a real webhook endpoint of the organization, for comparison. */
const receiver = new WebhookReceiver();
const endpointReceiver = new WebhookReceiver();
const children: ServerProcess[] = [];

beforeAll(async () => {
  await receiver.start();
  await endpointReceiver.start();
  t = await startTestStack({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on' });
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
}, 60000);

afterEach(async () => {
  receiver.answer = (_request, response) => response.end('ok');
  // Each test's listener ends with it (a failed test's too).
  for (const child of children.splice(0)) {
    child.child.kill('SIGKILL');
    await child.exited();
  }
});

afterAll(async () => {
  await t?.close();
  await receiver.close();
  await endpointReceiver.close();
});

const service = () => ['--url', t.url, '--token', org.token];

/** `webhooks listen` forwarding to the receiver, once it says it listens; answers it and the secret it printed. */
async function listen(extra: string[] = []): Promise<{ child: ServerProcess; secret: string }> {
  const child = startCliProcess(['webhooks', 'listen', '--forward-to', receiver.url, ...service(), ...extra], {});
  children.push(child);
  const [, secret] = await child.waitFor(/Ready! Your webhook signing secret is (whsec_[A-Za-z0-9_-]+)/, 60000);
  return { child, secret: secret! };
}

async function trigger(type: string): Promise<{ id: string; type: string }> {
  const result = await runCli(['webhooks', 'trigger', type, ...service()], {});
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as { id: string; type: string };
}

/** The event as GET /events lists it, written as REST writes it. */
async function listedBody(recordId: string, eventId: string): Promise<string> {
  const listed = await http(t.url, 'GET', `/events?record_id=${recordId}&per_page=100`, { token: org.token });
  expect(listed.status).toBe(200);
  const item = (listed.body.payload.events as { id: string }[]).find((event) => event.id === eventId);
  expect(item).toBeDefined();
  return JSON.stringify(item);
}

function expectSignedDelivery(request: ReceivedWebhook, secret: string, event: { id: string; type: string }): void {
  expect(verifySignature(String(request.headers['listings-signature']), request.body, secret, Math.floor(Date.now() / 1000))).toBe(true);
  expect(verifySignature(String(request.headers['listings-signature']), request.body, 'whsec_another', Math.floor(Date.now() / 1000))).toBe(false);
  expect(request.headers['listings-event-id']).toBe(event.id);
  expect(request.headers['listings-event-type']).toBe(event.type);
  expect(request.headers['listings-delivery-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(request.headers['content-type']).toBe('application/json');
}

/** A post of the fixture's location, created through REST; answers its id. */
async function createPost(summary: string): Promise<string> {
  const account = org.accounts[0]!;
  const created = await http(t.url, 'POST', '/post', { token: account.token, body: { location_id: account.locations[0]!.id, params: { summary } } });
  expect(created.status).toBe(202);
  return created.body.payload.id as string;
}

describe('npm run cli -- webhooks listen / trigger', () => {
  it('forwards a real change, signed with the printed secret, as the very request a webhook endpoint gets', async () => {
    const endpoint = await graphql(t.url, 'mutation ($u: String!) { createWebhookEndpoint(input: { url: $u, eventTypes: [POST_STATE_CHANGED] }) { endpoint { id } } }', {
      token: org.token,
      variables: { u: endpointReceiver.url },
    });
    expect(endpoint.body.errors).toBeUndefined();
    const { child, secret } = await listen();

    const postId = await createPost('Fresh bread, forwarded');
    const forwarded = await receiver.nth((request) => request.json.record_id === postId);
    const event = { id: forwarded.json.id, type: 'post.state_changed' };
    expect(forwarded.json.type).toBe(event.type);
    expectSignedDelivery(forwarded, secret, event);
    expect(forwarded.body).toBe(await listedBody(postId, event.id));
    // The line of the forward, with the receiver's answer.
    await child.waitFor(new RegExp(`post\\.state_changed  ${event.id}  POST ${receiver.url}  200 `));

    // A real delivery of the same event: the same body to the byte, the same headers (but for the signature's secret and the delivery's id).
    const delivered = await endpointReceiver.nth((request) => request.json.id === event.id);
    expect(forwarded.body).toBe(delivered.body);
    const named = (request: ReceivedWebhook) => Object.keys(request.headers).filter((name) => name !== 'host' && name !== 'connection').sort();
    expect(named(forwarded)).toEqual(named(delivered));
    for (const name of ['content-type', 'user-agent', 'listings-event-id', 'listings-event-type', 'content-length']) {
      expect(forwarded.headers[name]).toBe(delivered.headers[name]);
    }
    await graphql(t.url, 'mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }', { token: org.token, variables: { id: endpoint.body.data.createWebhookEndpoint.endpoint.id } });
  });

  it('trigger makes a test event of the type that listeners receive as GET /events shows it; a failing receiver is reported and the next event goes on', async () => {
    const { child, secret } = await listen(['--events', 'post.state_changed,location.connected']);
    const postId = await createPost('A post to test with');
    await receiver.nth((request) => request.json.record_id === postId);

    receiver.answer = (_request, response) => {
      response.statusCode = 500;
      response.end('broken');
    };
    const failed = await trigger('post.state_changed');
    await receiver.nth((request) => request.json.id === failed.id);
    await child.waitFor(new RegExp(`${failed.id}  POST ${receiver.url}  500 `));

    receiver.answer = (_request, response) => response.end('ok');
    const triggered = await trigger('post.state_changed');
    expect(triggered.type).toBe('post.state_changed');
    const forwarded = await receiver.nth((request) => request.json.id === triggered.id);
    expectSignedDelivery(forwarded, secret, triggered);
    const recordId = (triggered as { record_id?: string }).record_id!;
    expect(forwarded.body).toBe(await listedBody(recordId, triggered.id));
    await child.waitFor(new RegExp(`${triggered.id}  POST ${receiver.url}  200 `));
  });

  it('forwards only the types asked for', async () => {
    const { child } = await listen(['--events', 'post.state_changed']);
    const location = await trigger('location.connected');
    const post = await trigger('post.state_changed');
    await child.waitFor(new RegExp(`${post.id}  POST`));
    // Forwarded one at a time in the order they came: the location's event, committed first, would be here by now.
    expect(receiver.requests.some((request) => request.json.id === location.id)).toBe(false);
    expect(child.output()).not.toContain(location.id);
  });

  it('stops cleanly on SIGTERM and on SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const { child } = await listen();
      child.child.kill(signal);
      expect(await child.exited()).toBe(0);
    }
  });

  it('fails clearly: an unknown type (usage, listing the types), nothing to test, a refused token, no service', async () => {
    const unknown = await runCli(['webhooks', 'trigger', 'post.exploded', ...service()], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('post.exploded is not an event type; the types: post.state_changed, location_update_job.status_changed,');
    expect(unknown.stderr).toMatch(/Usage:/);

    const nothing = await runCli(['webhooks', 'trigger', 'competitor_scan.status_changed', ...service()], {});
    expect(nothing.code).toBe(1);
    expect(nothing.stderr.trim()).toMatch(/^No competitor_scan of the organization to make a test competitor_scan\.status_changed event about/);

    const accountToken = await runCli(['webhooks', 'listen', '--forward-to', receiver.url, '--url', t.url, '--token', org.accounts[0]!.token], {});
    expect(accountToken.code).toBe(1);
    expect(accountToken.stderr.trim()).toBe('This operation requires an organization token');

    const refused = await runCli(['webhooks', 'listen', '--forward-to', receiver.url, '--url', t.url, '--token', 'lgo_unknown'], {});
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the token/);

    const usage = await runCli(['webhooks', 'listen', ...service()], {});
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/needs --forward-to/);

    const closed = new WebhookReceiver();
    await closed.start();
    const nowhere = closed.url.replace(/\/hooks$/, '');
    await closed.close();
    const unreachable = await runCli(['webhooks', 'trigger', 'post.state_changed', '--url', nowhere, '--token', org.token], {});
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^Cannot reach the service at http:\/\/127\.0\.0\.1:\d+ .*is it running/);
  });
});
