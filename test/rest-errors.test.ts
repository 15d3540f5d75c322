import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Errors that say what to do (issue 28, docs/decisions.md "Errors that say what to do"): a body of another type is
 * told the type to send, a body over the limit the limit, a refused field is named as the route names it, and a
 * refused URL is told what is wrong with it.
 */

let t: TestStack;
let org: OrganizationFixture;
let accountId: string;
let locationId: string;

beforeAll(async () => {
  t = await startTestStack();
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true, betaApi: true });
  accountId = org.accounts[0]!.account.id;
  locationId = org.accounts[0]!.locations[0]!.id;
}, 60000);
afterAll(() => t?.close());

async function raw(method: string, path: string, contentType: string, body: string) {
  const response = await fetch(`${t.url}${path}`, { method, headers: { authorization: `Bearer ${org.token}`, 'content-type': contentType }, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const post = (body: unknown, headers: Record<string, string> = {}) => http(t.url, 'POST', `/post?account_id=${accountId}`, { token: org.token, body, headers });

describe('a body of another type', () => {
  const acceptedType = 'Content-Type must be application/json';

  it('a JSON object sent as text/plain is answered 415 naming application/json, and nothing is created', async () => {
    const body = JSON.stringify({ location_id: locationId, params: { summary: 'sent as text' } });
    const answer = await raw('POST', `/post?account_id=${accountId}`, 'text/plain;charset=UTF-8', body);
    expect(answer).toEqual({ status: 415, body: { error: 415, message: expect.stringContaining(`${acceptedType} (this request sent text/plain)`) } });
    const listed = await http(t.url, 'GET', `/post?account_id=${accountId}&q=sent`, { token: org.token });
    expect(listed.body.payload.found).toBe(0);
  });

  it('a form body is answered 415 naming the expected type, in the generic shape even where the route writes 400s otherwise', async () => {
    const form = await raw('POST', '/oauth/alpha/generate-url', 'application/x-www-form-urlencoded', 'redirect_url=https%3A%2F%2Fapp.example%2Fr');
    expect(form).toEqual({ status: 415, body: { error: 415, message: expect.stringContaining(`${acceptedType} (this request sent application/x-www-form-urlencoded)`) } });
    const update = await raw('PATCH', `/location/update?account_id=${accountId}&location_id=${locationId}`, 'text/plain', '{"name":"x"}');
    expect(update).toEqual({ status: 415, body: { error: 415, message: expect.stringContaining(acceptedType) } });
  });

  it('a body over the limit is answered 413 stating the limit in bytes and in words', async () => {
    const answer = await raw('POST', `/post?account_id=${accountId}`, 'application/json', JSON.stringify({ location_id: locationId, params: { summary: 'x'.repeat(1_100_000) } }));
    expect(answer).toEqual({ status: 413, body: { error: 413, message: expect.stringContaining('larger than the limit of 1048576 bytes (1 MiB)') } });
  });
});

describe('a refused field is named as the route names it', () => {
  it('REST names the body, query and header fields; GraphQL the same refusal by its argument path', async () => {
    const cases: [string, Promise<{ status: number; body: any }>, string][] = [
      ['a long summary', post({ location_id: locationId, params: { summary: 's'.repeat(1501) } }), 'params.summary must be at most 1500 characters'],
      ['a nested URL', post({ location_id: locationId, params: { summary: 'x', media: [{ mediaFormat: 'PHOTO', sourceUrl: 'ftp://x.example/p.jpg' }] } }), 'params.media[0].sourceUrl scheme must be http or https, not ftp'],
      ['a long Idempotency-Key', post({ location_id: locationId, params: { summary: 'x' } }, { 'idempotency-key': 'k'.repeat(256) }), 'Idempotency-Key must be at most 255 characters'],
      ['no location_id', post({ params: { summary: 'x' } }), 'location_id is required'],
      ['per_page over its range', http(t.url, 'GET', `/post?account_id=${accountId}&per_page=101`, { token: org.token }), 'per_page must be between 1 and 100'],
      ['a long store_code', http(t.url, 'GET', `/location?account_id=${accountId}&store_code=${'s'.repeat(256)}`, { token: org.token }), 'store_code must be at most 255 characters'],
      ['no event types', http(t.url, 'POST', '/webhooks', { token: org.token, body: { url: 'https://hooks.example.com/in', event_types: [] } }), 'event_types must name at least one event type'],
    ];
    for (const [what, answer, message] of cases) {
      const { status, body } = await answer;
      expect([what, status, body]).toEqual([what, 400, { error: 400, message }]);
    }
    const viaGraphQL = await graphql(t.url, 'mutation ($a: ID, $i: CreatePostInput!) { createPost(accountId: $a, input: $i) { post { id } } }', {
      token: org.token,
      variables: { a: accountId, i: { locationId, params: { summary: 's'.repeat(1501) } } },
    });
    expect(viaGraphQL.body.errors?.[0]).toMatchObject({ message: 'input.params.summary must be at most 1500 characters', extensions: { code: 'BAD_USER_INPUT' } });
  });
});

describe('a refused URL is told what is wrong with it', () => {
  const generate = (provider: 'alpha' | 'beta', redirectUrl: string) =>
    http(t.url, 'POST', `/oauth/${provider}/generate-url`, { token: org.token, body: { redirect_url: redirectUrl } });

  it('redirect_url: a text that is no URL is told so, not that it has spaces; each other problem by name', async () => {
    const cases: [Promise<{ status: number; body: any }>, string][] = [
      [generate('alpha', 'not a url'), 'redirect_url must be an absolute https URL, such as https://example.com/path'],
      [generate('alpha', 'ftp://app.example/r'), 'redirect_url scheme must be https, not ftp'],
      [generate('beta', 'http://app.example/r'), 'redirect_url scheme must be https, not http'],
      [generate('alpha', 'https://app.example/a b'), 'redirect_url must not contain spaces, backslashes or control characters (percent-encode them: a space is %20)'],
      [generate('alpha', 'https://app.example/r#done'), 'redirect_url must not have a fragment (#…)'],
      [generate('alpha', 'https://user:secret@app.example/r'), 'redirect_url must not carry credentials (user:password@)'],
    ];
    for (const [answer, message] of cases) {
      const { status, body } = await answer;
      expect([status, body]).toEqual([400, { error: 400, message }]);
    }
  });

  it('every other URL field by the same rule: a location website, a post call-to-action, a webhook endpoint', async () => {
    const location = await http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${locationId}`, { token: org.token, body: { website_uri: 'not a url' } });
    expect(location.body).toEqual({ success: false, msg: 'website_uri must be an absolute http(s) URL, such as https://example.com/path' });
    const action = await post({ location_id: locationId, params: { summary: 'x', callToAction: { actionType: 'BOOK', url: 'www.example.com/book' } } });
    expect(action.body).toEqual({ error: 400, message: 'params.callToAction.url must be an absolute http(s) URL, such as https://example.com/path' });
    const webhook = await http(t.url, 'POST', '/webhooks', { token: org.token, body: { url: 'https://hooks.example.com:99999/in', event_types: ['*'] } });
    expect(webhook.body).toEqual({ error: 400, message: 'url is not a valid URL: check its host and port' });
  });
});
