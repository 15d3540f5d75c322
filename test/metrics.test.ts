import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { freePort } from './support/ports';
import { eventually, pollPost, providerIdOf, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { postProbe, subscribe } from './support/ws';

/**
 * GET /metrics as Prometheus scrapes it, after REST, GraphQL, WebSocket and job traffic: every family is there,
 * with the counts the traffic made, and only bounded labels (route templates, never ids).
 */

const METRICS_TOKEN = 'scrape-token-of-this-test-0123456789';
let t: TestStack;
let org: OrganizationFixture;

beforeAll(async () => {
  // One retry a second later: a publish that fails twice runs out of attempts within the test.
  t = await startTestStack({ METRICS_TOKEN, LOCATION_READ_RATE_LIMIT_PER_MINUTE: '3', JOB_RETRY_LIMIT: '1', JOB_RETRY_DELAY_SECONDS: '1' });
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
});
afterAll(() => t?.close());

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus's text format, as a scraper reads it (the sample lines; HELP and TYPE are checked apart). */
function parseSamples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

async function scrape(baseUrl = t.url, token: string | null = METRICS_TOKEN) {
  const answer = await fetch(`${baseUrl}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await answer.text();
  return { status: answer.status, type: answer.headers.get('content-type'), text, samples: answer.status === 200 ? parseSamples(text) : [] };
}

/** The value of the one sample of `name` whose labels include `labels` (0 when there is none). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}

describe('GET /metrics', () => {
  it('counts HTTP, GraphQL, WebSocket, job, provider, event and rate-limit traffic, each family with the right counts', async () => {
    const accountId = org.accounts[0]!.account.id;
    const locationId = org.accounts[0]!.locations[0]!.id;
    const before = (await scrape()).samples;

    // REST: three reads and one refusal without a token.
    for (let i = 0; i < 3; i += 1) expect((await http(t.url, 'GET', '/organization', { token: org.token })).status).toBe(200);
    expect((await http(t.url, 'GET', '/organization')).status).toBe(401);
    // A path with an id is counted under its template.
    expect((await http(t.url, 'GET', `/post/00000000-0000-4000-8000-000000000000?account_id=${accountId}`, { token: org.token })).status).toBe(404);
    // GraphQL over HTTP: two named queries, one refused by validation.
    for (let i = 0; i < 2; i += 1) expect((await graphql(t.url, 'query Dashboard { organization { id } }', { token: org.token })).status).toBe(200);
    expect((await graphql(t.url, 'query Broken { organization { nope } }', { token: org.token })).status).toBe(400);
    // The location read limit is 3 a minute: the fourth is refused.
    const reads = [];
    for (let i = 0; i < 4; i += 1) reads.push((await http(t.url, 'GET', `/location?account_id=${accountId}`, { token: org.token })).status);
    expect(reads).toEqual([200, 200, 200, 429]);

    // WebSocket: a dashboard follows the location's posts; a post is created over REST and published by a job.
    const recorder = await subscribe(
      t.url,
      org.token,
      'subscription Follow($l: ID) { postUpdated(locationId: $l) { id version state } }',
      { l: locationId },
      postProbe(t.stack.runtime.events, { organizationId: org.organization.id, accountId, locationId }),
    );
    const during = (await scrape()).samples;
    expect(valueOf(during, 'lg_websocket_sockets') - valueOf(before, 'lg_websocket_sockets')).toBe(1);
    expect(valueOf(during, 'lg_graphql_subscriptions', { field: 'postUpdated' })).toBe(1);
    const created = await http(t.url, 'POST', `/post?account_id=${accountId}`, {
      token: org.token,
      body: { location_id: locationId, params: { topicType: 'STANDARD', summary: 'Counted by the metrics', languageCode: 'en' } },
    });
    expect(created.status).toBe(202);
    const live = await pollPost(t.url, org.token, accountId, created.body.payload.id, (post) => post.state === 'LIVE');
    expect(live.state).toBe('LIVE');
    await recorder.waitFor(1);
    await recorder.close();

    const after = await eventually(async () => {
      const samples = (await scrape()).samples;
      // The socket's close is counted when the server sees it.
      return valueOf(samples, 'lg_websocket_sockets') === valueOf(before, 'lg_websocket_sockets') ? samples : undefined;
    }, 10000, 'the socket to be counted as closed');
    const grew = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);

    expect(grew('lg_http_requests_total', { method: 'GET', route: '/organization', status_code: '200' })).toBe(3);
    expect(grew('lg_http_requests_total', { method: 'GET', route: '/organization', status_code: '401' })).toBe(1);
    expect(grew('lg_http_requests_total', { method: 'GET', route: '/post/:id', status_code: '404' })).toBe(1);
    expect(grew('lg_http_requests_total', { method: 'GET', route: '/location', status_code: '429' })).toBe(1);
    expect(grew('lg_http_request_duration_seconds_count', { method: 'GET', route: '/organization' })).toBe(4);
    expect(grew('lg_graphql_operations_total', { operation: 'Dashboard', type: 'query', transport: 'http', error_code: 'none' })).toBe(2);
    expect(grew('lg_graphql_operations_total', { operation: 'Broken', transport: 'http', error_code: 'GRAPHQL_VALIDATION_FAILED' })).toBe(1);
    expect(grew('lg_graphql_operations_total', { operation: 'Follow', type: 'subscription', transport: 'websocket', error_code: 'none' })).toBe(1);
    // REST runs its route's GraphQL operation: counted with the REST transport.
    expect(grew('lg_graphql_operations_total', { transport: 'rest', operation: 'RestCreatePost', error_code: 'none' })).toBe(1);
    expect(grew('lg_graphql_operation_duration_seconds_count', { operation: 'Dashboard', type: 'query', transport: 'http' })).toBe(2);
    expect(valueOf(after, 'lg_graphql_subscriptions', { field: 'postUpdated' })).toBe(0);
    expect(grew('lg_rate_limit_refusals_total', { limit: 'location-reads' })).toBe(1);

    // The post's jobs: publish (and its check), each created and completed once, waited for and run.
    expect(grew('lg_jobs_created_total', { queue: 'post-publish' })).toBe(1);
    expect(grew('lg_job_attempts_total', { queue: 'post-publish', outcome: 'completed' })).toBe(1);
    expect(grew('lg_job_wait_seconds_count', { queue: 'post-publish' })).toBe(1);
    expect(grew('lg_job_run_seconds_count', { queue: 'post-publish' })).toBe(1);
    expect(valueOf(after, 'lg_jobs_active', { queue: 'post-publish' })).toBe(0);
    // Its provider call, under the path's template.
    expect(grew('lg_provider_requests_total', { provider: 'alpha', operation: 'POST v4/accounts/{id}/locations/{id}/localPosts', status: '200' })).toBe(1);
    expect(grew('lg_provider_request_duration_seconds_count', { provider: 'alpha', operation: 'POST v4/accounts/{id}/locations/{id}/localPosts' })).toBe(1);
    // Events crossed the bus and reached the subscription group.
    expect(grew('lg_event_bus_lag_seconds_count', { backend: 'postgres' })).toBeGreaterThan(0);
    expect(grew('lg_subscription_fanout_delay_seconds_count', { topic: 'post.updated' })).toBeGreaterThan(0);
    // The database pool, as of the scrape.
    expect(valueOf(after, 'lg_db_pool_connections', { state: 'idle' }) + valueOf(after, 'lg_db_pool_connections', { state: 'in_use' })).toBeGreaterThan(0);
    expect(after.some((sample) => sample.name === 'lg_process_resident_memory_bytes')).toBe(true);

    // No label carries an id: no UUID anywhere in the scrape.
    const text = (await scrape()).text;
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  });

  it('counts a job attempt that will be retried, the one that fails for good, its dead letter settled, and the provider calls that failed', async () => {
    const accountId = org.accounts[0]!.account.id;
    const location = org.accounts[0]!.locations[0]!;
    const before = (await scrape()).samples;
    // Both attempts of the publish meet a 503 (JOB_RETRY_LIMIT 1).
    await sandboxOf(t.url).fail({ count: 2, status: 503, method: 'POST', pathContains: `/locations/${providerIdOf(location.alphaLocationName!)}/localPosts` });
    const created = await http(t.url, 'POST', `/post?account_id=${accountId}`, {
      token: org.token,
      body: { location_id: location.id, params: { topicType: 'STANDARD', summary: 'Failed twice at the provider', languageCode: 'en' } },
    });
    expect(created.status).toBe(202);
    const ended = await pollPost(t.url, org.token, accountId, created.body.payload.id, (post) => post.state === 'ERROR');
    expect(ended.state).toBe('ERROR');
    const after = await eventually(async () => {
      const samples = (await scrape()).samples;
      const settled = valueOf(samples, 'lg_job_attempts_total', { queue: 'post-publish', outcome: 'dead_lettered' }) - valueOf(before, 'lg_job_attempts_total', { queue: 'post-publish', outcome: 'dead_lettered' });
      return settled > 0 ? samples : undefined;
    }, 30000, 'the dead letter to be settled');
    const grew = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(grew('lg_jobs_created_total', { queue: 'post-publish' })).toBe(1);
    expect(grew('lg_job_attempts_total', { queue: 'post-publish', outcome: 'retried' })).toBe(1);
    expect(grew('lg_job_attempts_total', { queue: 'post-publish', outcome: 'failed' })).toBe(1);
    expect(grew('lg_job_attempts_total', { queue: 'post-publish', outcome: 'dead_lettered' })).toBe(1);
    expect(grew('lg_job_attempts_total', { queue: 'post-publish', outcome: 'completed' })).toBe(0);
    expect(grew('lg_job_run_seconds_count', { queue: 'post-publish' })).toBe(2);
    expect(grew('lg_provider_requests_total', { provider: 'alpha', operation: 'POST v4/accounts/{id}/locations/{id}/localPosts', status: '503' })).toBe(2);
  });

  it('answers in Prometheus’s text format, with HELP and TYPE for each family', async () => {
    const answer = await scrape();
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const [family, type] of [
      ['lg_http_requests_total', 'counter'],
      ['lg_http_request_duration_seconds', 'histogram'],
      ['lg_graphql_operations_total', 'counter'],
      ['lg_job_attempts_total', 'counter'],
      ['lg_jobs_active', 'gauge'],
      ['lg_jobs_waiting', 'gauge'],
      ['lg_job_wait_seconds', 'histogram'],
      ['lg_provider_requests_total', 'counter'],
      ['lg_websocket_sockets', 'gauge'],
      ['lg_subscription_fanout_delay_seconds', 'histogram'],
      ['lg_event_bus_reconnects_total', 'counter'],
      ['lg_db_pool_connections', 'gauge'],
      ['lg_rate_limit_refusals_total', 'counter'],
    ] as const) {
      expect(answer.text).toContain(`# TYPE ${family} ${type}\n`);
      expect(answer.text).toMatch(new RegExp(`# HELP ${family} \\S`));
    }
  });

  it('wants the metrics token when one is set: 401 without it or with another', async () => {
    expect((await scrape(t.url, null)).status).toBe(401);
    const wrong = await scrape(t.url, 'another-token-of-the-same-length!!!!');
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.text)).toEqual({ error: 401, message: expect.stringContaining('METRICS_TOKEN') });
  });
});

describe('the METRICS setting', () => {
  it('off: no /metrics at all; a port: /metrics there, not on the API port', async () => {
    const off = await startTestStack({ METRICS: 'off' });
    try {
      expect((await scrape(off.url, null)).status).toBe(404);
    } finally {
      await off.close();
    }
    const port = await freePort();
    const apart = await startTestStack({ METRICS: String(port) });
    try {
      expect((await scrape(apart.url, null)).status).toBe(404);
      const there = await scrape(`http://127.0.0.1:${port}`, null);
      expect(there.status).toBe(200);
      expect(there.text).toContain('# TYPE lg_http_requests_total counter');
    } finally {
      await apart.close();
    }
  });
});
