import { connect as connectSocket } from 'node:net';
import { captureLog } from './support/faults';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Request ids, as an operator uses them: every answer names its request in `X-Request-Id` (the caller's id when
 * acceptable, else a new UUID), and the log lines of the request and of the jobs it caused carry the same id.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const log = captureLog();
let t: TestStack;
let org: OrganizationFixture;

beforeAll(async () => {
  t = await startTestStack({}, { log: { destination: log.destination } });
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
});
afterAll(() => t?.close());

async function raw(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  return fetch(`${t.url}${path}`, { method, headers: init.headers, body: init.body });
}

describe('X-Request-Id on every answer', () => {
  it('is a new UUID per request when none is sent, unique across requests', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i += 1) {
      const answer = await http(t.url, 'GET', '/organization', { token: org.token });
      expect(answer.status).toBe(200);
      const id = answer.headers.get('x-request-id');
      expect(id).toMatch(UUID);
      ids.add(id!);
    }
    expect(ids.size).toBe(5);
  });

  it('keeps an acceptable incoming id, and replaces one that is too long or not printable', async () => {
    const kept = await raw('GET', '/healthz', { headers: { 'x-request-id': 'edge-7f3a:1' } });
    expect(kept.headers.get('x-request-id')).toBe('edge-7f3a:1');
    for (const refused of ['x'.repeat(129), 'two words', 'tab\there']) {
      const answer = await raw('GET', '/healthz', { headers: { 'x-request-id': refused } });
      expect(answer.headers.get('x-request-id')).toMatch(UUID);
    }
    expect((await raw('GET', '/healthz', { headers: { 'x-request-id': 'y'.repeat(128) } })).headers.get('x-request-id')).toBe('y'.repeat(128));
  });

  it('is on errors and on Fastify’s own refusals, REST and GraphQL alike', async () => {
    const token = { authorization: `Bearer ${org.token}` };
    const json = { ...token, 'content-type': 'application/json' };
    const accountId = org.accounts[0]!.account.id;
    const cases: [string, Promise<Response>, number][] = [
      ['no token', raw('GET', '/organization'), 401],
      ['unknown route', raw('GET', '/no/such/route', { headers: token }), 404],
      ['method not allowed', raw('PUT', '/organization', { headers: token }), 405],
      ['body that is not JSON', raw('POST', `/post?account_id=${accountId}`, { headers: json, body: '{"location_id": ' }), 400],
      ['unsupported media type', raw('POST', `/post?account_id=${accountId}`, { headers: { ...token, 'content-type': 'text/csv' }, body: 'a,b' }), 415],
      ['body too large', raw('POST', `/post?account_id=${accountId}`, { headers: json, body: JSON.stringify({ x: 'x'.repeat(2_000_000) }) }), 413],
      ['GraphQL without a query', raw('POST', '/graphql', { headers: json, body: '{}' }), 400],
      ['OAuth callback redirect', raw('GET', '/oauth/alpha/callback?state=nope&code=x'), 400],
    ];
    for (const [what, answering, status] of cases) {
      const answer = await answering;
      expect([what, answer.status]).toEqual([what, status]);
      expect([what, answer.headers.get('x-request-id')]).toEqual([what, expect.stringMatching(UUID)]);
    }
    const failed = await graphql(t.url, 'query { location(id: "nope") { id } }', { token: org.token });
    expect(failed.headers.get('x-request-id')).toMatch(UUID);
  });

  it('is on the answer Node’s parser gives to bytes that are not HTTP', async () => {
    const { port } = new URL(t.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connectSocket(Number(port), '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
  });
});

describe('the log lines of a request and of the jobs it caused', () => {
  it('carry the request’s id: the request line, and each job the request enqueued', async () => {
    const accountId = org.accounts[0]!.account.id;
    const requestId = `post-${Date.now()}`;
    const created = await http(t.url, 'POST', `/post?account_id=${accountId}`, {
      token: org.token,
      headers: { 'x-request-id': requestId },
      body: { location_id: org.accounts[0]!.locations[0]!.id, params: { topicType: 'STANDARD', summary: 'Traced by its request id', languageCode: 'en' } },
    });
    expect(created.status).toBe(202);
    expect(created.headers.get('x-request-id')).toBe(requestId);
    await log.until(() => log.lines.some((line) => line.queue === 'post-publish' && line.msg === 'job done' && line.reqId === requestId), 'the publish job to end');
    // The request's own line (method, url, status) names it.
    expect(log.lines.filter((line) => line.reqId === requestId && line.queue === undefined && line.statusCode === 202)).toHaveLength(1);
    // Every line of the publish job names the request; a job of another request never does.
    const publishLines = log.lines.filter((line) => line.queue === 'post-publish' && line.reqId === requestId);
    expect(publishLines.length).toBeGreaterThan(0);
    const otherRequest = await http(t.url, 'GET', '/organization', { token: org.token });
    expect(log.lines.filter((line) => line.reqId === otherRequest.headers.get('x-request-id') && line.queue !== undefined)).toEqual([]);
  });
});
