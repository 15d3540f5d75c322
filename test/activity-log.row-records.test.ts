import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { http } from './support/http';
import { eventually } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * An event whose record PostgreSQL encodes (src/db/entity-codec.ts `snapshotSql`): a location update's RUNNING,
 * written by the statement that reads and starts the job (docs/write-path.md). Its record must be what the service's
 * own encoding gives, as the job's other events are: the one description of the fields, two encoders.
 */

let t: TestStack;
let org: OrganizationFixture;

beforeAll(async () => {
  t = await startTestStack();
  org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
});
afterAll(() => t.close());

it('a location update: its RUNNING record is the job as it was then, encoded as the service encodes its other events', async () => {
  const accountId = org.accounts[0]!.account.id;
  const res = await http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${org.accounts[0]!.locations[0]!.id}`, {
    token: org.token,
    body: { description: 'Now with a garden' },
  });
  expect(res.status).toBe(200);
  const jobId = res.body.payload.id as string;
  const found = await eventually(async () => {
    const listed = await http(t.url, 'GET', `/events?record_id=${jobId}&per_page=100`, { token: org.token });
    return listed.body.payload.found >= 3 ? (listed.body.payload.events as any[]) : undefined;
  }, 30000, 'the update job\'s three events');
  const [queued, running, end] = [...found].reverse();
  const ended = (await http(t.url, 'GET', `/location/updates?account_id=${accountId}&id=${jobId}`, { token: org.token })).body.payload.updates[0];
  expect(end.record).toEqual(ended);
  expect(running).toMatchObject({ type: 'location_update_job.status_changed', organization_id: org.organization.id, account_id: accountId, record_id: jobId });
  expect(running.record).toEqual({ ...queued.record, status: 'RUNNING', started_at: ended.started_at });
});
