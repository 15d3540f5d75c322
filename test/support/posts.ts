import { createAlphaSandboxControl, type AlphaSandboxControl } from '../../sandboxes/alpha/alpha-sandbox.control';
import { http, type JsonResponse } from './http';

export const TERMINAL = ['LIVE', 'SCHEDULED', 'REJECTED', 'ERROR', 'DELETED'];

/** The sandbox this server mounts, driven over HTTP like any script would. */
/** The provider's id of a location from its resource name (`accounts/{a}/locations/{id}`): what its API paths carry. */
export const providerIdOf = (alphaLocationName: string): string => alphaLocationName.split('/')[3]!;

export function sandboxOf(baseUrl: string): AlphaSandboxControl {
  return createAlphaSandboxControl(`${baseUrl}/sandbox/alpha`);
}

/** Polls GET /post/{id} as a REST client does, until `done` holds (default: a terminal state). */
export async function pollPost(
  baseUrl: string,
  token: string,
  accountId: string,
  id: string,
  done: (post: any) => boolean = (post) => TERMINAL.includes(post.state),
  timeoutMs = 30000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: JsonResponse | undefined;
  while (Date.now() < deadline) {
    last = await http(baseUrl, 'GET', `/post/${id}?account_id=${accountId}`, { token });
    if (last.status === 200 && done(last.body.payload)) return last.body.payload;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`post ${id} did not get there in ${timeoutMs} ms; last answer: ${JSON.stringify(last?.body)}`);
}

/** Waits until `check` returns a value (not undefined), polling; fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** What posting needs of an organization fixture (test/support/fixtures.ts): its token, its first account's location. */
type PostingFixture = { token: string; accounts: { account: { id: string }; locations: { id: string }[] }[] };

/** A post of the fixture's first account, on its first location, created over REST as a client does: its id. */
export async function createPostOf(baseUrl: string, fixture: PostingFixture, summary: string): Promise<string> {
  const account = fixture.accounts[0]!;
  const created = await http(baseUrl, 'POST', `/post?account_id=${account.account.id}`, {
    token: fixture.token,
    body: { location_id: account.locations[0]!.id, params: { topicType: 'STANDARD', summary, languageCode: 'en' } },
  });
  if (created.status !== 202) throw new Error(`the post was not created: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.payload.id as string;
}

/**
 * Pauses the alpha provider as a 429 naming its project quota does (docs/jobs.md, "Waiting is not failing"), with the
 * sandbox's per-minute quota set to 1 (the caller lifts it): a post of the fixture admitted (LIVE), the next refused
 * (its job waits; alpha paused for the rest of the minute), a third created during the pause (taken and put back
 * without a call). Resolves once the 429 was answered, with the ids of the two posts that wait.
 */
export async function pauseAlphaByQuota(baseUrl: string, fixture: PostingFixture): Promise<string[]> {
  const sandbox = sandboxOf(baseUrl);
  await sandbox.reset();
  await sandbox.configure({ quotaPerMinute: 1 });
  const admitted = await createPostOf(baseUrl, fixture, 'Admitted by the quota');
  await pollPost(baseUrl, fixture.token, fixture.accounts[0]!.account.id, admitted, (post) => post.state === 'LIVE', 30_000);
  const refused = await createPostOf(baseUrl, fixture, 'Refused: pauses alpha');
  await eventually(async () => ((await sandbox.state()).quota.refused === 1 ? true : undefined), 15_000, 'the 429');
  return [refused, await createPostOf(baseUrl, fixture, 'Held by the pause')];
}
