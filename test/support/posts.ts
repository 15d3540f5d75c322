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
