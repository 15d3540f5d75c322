import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { http } from './support/http';
import { pollPost, sandboxOf } from './support/posts';
import { startServerProcess, type ServerProcess } from './support/process';
import { startTestStack, type TestStack } from './support/stack';

/**
 * A provider's pause crosses processes (docs/jobs.md, "Waiting is not failing"; issue 29): two worker processes on
 * one database, the API (with the sandboxes) in a third. The process that meets a 429 naming the project's quota
 * tells the other through the event bus; once it is stopped, a job the other takes during the pause goes back to
 * its queue without calling the provider.
 */

let t: TestStack;
let fixture: OrganizationFixture;
const workers: ServerProcess[] = [];
const dataDirs: string[] = [];

beforeAll(async () => {
  t = await startTestStack({ ROLE: 'api', POST_RATE_LIMIT_PER_MINUTE: '1000' });
  fixture = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
  for (let n = 0; n < 2; n += 1) {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-pause-'));
    dataDirs.push(dataDir);
    const worker = startServerProcess({
      DATABASE_URL: t.databaseUrl,
      DATA_DIR: dataDir,
      ROLE: 'worker',
      ALPHA_API_URL: `${t.url}/sandbox/alpha`,
      BETA_API_URL: `${t.url}/sandbox/beta`,
      JOB_RETRY_DELAY_SECONDS: '1',
      LOG_LEVEL: 'info',
    });
    workers.push(worker);
    await worker.waitFor(/worker is up/, 60_000);
  }
});

afterAll(async () => {
  for (const worker of workers) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
    await worker.exited();
  }
  await t?.close();
  for (const dataDir of dataDirs) rmSync(dataDir, { recursive: true, force: true });
});

async function post(summary: string): Promise<string> {
  const account = fixture.accounts[0]!;
  const created = await http(t.url, 'POST', `/post?account_id=${account.account.id}`, {
    token: fixture.token,
    body: { location_id: account.locations[0]!.id, params: { topicType: 'STANDARD', summary, languageCode: 'en' } },
  });
  expect(created.status).toBe(202);
  return created.body.payload.id as string;
}

it('a pause one worker process meets holds the other: no call to the provider until then, no attempt spent', async () => {
  const alpha = sandboxOf(t.url);
  const accountId = fixture.accounts[0]!.account.id;
  await alpha.configure({ quotaPerMinute: 1 });
  const admitted = await post('Admitted by the quota');
  await pollPost(t.url, fixture.token, accountId, admitted, (found) => found.state === 'LIVE', 30_000);

  await post('Refused: pauses the provider');
  // The process that met the 429 says so; it is stopped, so only the other, told by the event bus, is left.
  const metIt = await new Promise<number>((resolve, reject) => {
    let pending = workers.length;
    workers.forEach((worker, index) => {
      void worker.waitFor(/job waits for its provider, no attempt spent/, 30_000).then(
        () => resolve(index),
        // The other never meets it: only when neither does is that a failure.
        (error: unknown) => (--pending === 0 ? reject(error as Error) : undefined),
      );
    });
  });
  workers[metIt]!.child.kill('SIGTERM');
  await workers[metIt]!.exited();
  const other = workers[1 - metIt]!;

  const held = await post('Held by the pause');
  await other.waitFor(/its provider is paused, no call made/, 30_000);
  expect((await alpha.state()).quota).toMatchObject({ admitted: 1, refused: 1, callsDuringRetryAfter: 0 });
  const [job] = await t.em().getConnection().execute<{ state: string; retry_count: number }[]>(
    `select state::text, retry_count from pgboss.job where name = 'post-publish' and data->>'postId' = ?`,
    [held],
  );
  expect(job).toEqual({ state: 'created', retry_count: 0 });
});
