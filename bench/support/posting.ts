import { performance } from 'node:perf_hooks';
import { sleep } from './abort';
import type { BenchStack } from './stack';

/**
 * POST /post as bench/posts sends it (organization token, `?account_id=…`, `{location_id, params: {topicType:
 * STANDARD, summary}}`), spread over the stack's connected locations; and an open-loop schedule of them.
 */

export interface CreateRecord {
  index: number;
  /** performance.now() when the request was sent / its answer read. */
  sentAt: number;
  answeredAt: number;
  status: number;
  id: string | undefined;
  error: string | undefined;
}

export async function createPost(stack: BenchStack, index: number, summary: string, signal: AbortSignal): Promise<CreateRecord> {
  const target = stack.targets[index % stack.targets.length]!;
  const record: CreateRecord = { index, sentAt: performance.now(), answeredAt: 0, status: 0, id: undefined, error: undefined };
  try {
    const response = await fetch(`${stack.baseUrl}/post?account_id=${encodeURIComponent(target.accountId)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.token}` },
      body: JSON.stringify({ location_id: target.locationId, params: { topicType: 'STANDARD', summary } }),
      signal,
    });
    const text = await response.text();
    record.answeredAt = performance.now();
    record.status = response.status;
    // The documented envelope: { success, payload: <the post record> }.
    const id = response.status === 202 ? (JSON.parse(text) as { payload?: { id?: unknown } }).payload?.id : undefined;
    if (typeof id === 'string') record.id = id;
    else record.error = `HTTP ${response.status} ${text.slice(0, 200)}`;
  } catch (error) {
    record.answeredAt = performance.now();
    record.error = signal.aborted ? 'aborted' : error instanceof Error ? `${error.message} ${error.cause instanceof Error ? String(error.cause) : ''}` : String(error);
  }
  return record;
}

/**
 * `count` creates, request i sent `i / rate` seconds after the first (an open loop: a slow answer does not delay
 * the next request), at most `maxInFlight` at once. Summaries are `${prefix}#${i}`. `stop`, when given, ends the
 * schedule early: a request whose time comes once it holds is not sent (those in flight are answered).
 */
export async function createPostsPaced(
  stack: BenchStack,
  options: { count: number; rate: number; prefix: string; signal: AbortSignal; maxInFlight?: number; stop?: () => boolean },
): Promise<CreateRecord[]> {
  const records: CreateRecord[] = [];
  let next = 0;
  const start = performance.now();
  const stopped = () => options.signal.aborted || (options.stop?.() ?? false);
  const lane = async () => {
    while (next < options.count && !stopped()) {
      const index = next++;
      await sleep(start + (index * 1000) / options.rate - performance.now(), options.signal);
      if (stopped()) break;
      records.push(await createPost(stack, index, `${options.prefix}#${index}`, options.signal));
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.maxInFlight ?? 64, options.count) }, lane));
  return records.sort((a, b) => a.index - b.index);
}
