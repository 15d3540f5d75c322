import type { RecordHint } from './api';

/**
 * The record whose detail is open is in the page's address (`#record=<id>`, with `&as=location&account=<id>` or
 * `&as=account` when a link knows what it leads to), so links, the browser's Back and a shared address work.
 */

export interface OpenRecord {
  id: string;
  hint: RecordHint | null;
}

export function recordHref(id: string, hint: RecordHint | null = null): string {
  const params = new URLSearchParams({ record: id });
  if (hint) params.set('as', hint.as);
  if (hint?.as === 'location' && hint.accountId) params.set('account', hint.accountId);
  return `#${params.toString()}`;
}

export function openRecordOf(hash: string): OpenRecord | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const id = params.get('record')?.trim();
  if (!id) return null;
  const as = params.get('as');
  const hint: RecordHint | null = as === 'location' ? { as, accountId: params.get('account') } : as === 'account' ? { as } : null;
  return { id, hint };
}
