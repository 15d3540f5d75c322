/**
 * Where two answers that should be equal part: the first differing byte of their texts with some context, and the
 * first JSON path whose values differ. For a benchmark's "the answers are equal" check, so a mismatch can be read.
 */

/** The first differing character of two texts with `context` characters around it; undefined when equal. */
export function firstTextDifference(a: string, b: string, labels: [string, string], context = 100): string | undefined {
  if (a === b) return undefined;
  let at = 0;
  while (at < a.length && at < b.length && a.charCodeAt(at) === b.charCodeAt(at)) at += 1;
  const from = Math.max(0, at - context);
  const width = Math.max(labels[0].length, labels[1].length);
  const excerpt = (text: string) => `${from > 0 ? '…' : ''}${text.slice(from, at + context)}${at + context < text.length ? '…' : ''}`;
  return [
    `first difference at character ${at} (lengths ${a.length} and ${b.length}):`,
    `  ${labels[0].padEnd(width)}  ${excerpt(a)}`,
    `  ${labels[1].padEnd(width)}  ${excerpt(b)}`,
    `  ${' '.repeat(width)}  ${' '.repeat(at - from + (from > 0 ? 1 : 0))}^`,
  ].join('\n');
}

/** The first path (`payload.posts[3].params.summary`) at which two JSON values differ, ignoring key order. */
export function firstValueDifference(a: unknown, b: unknown, path = '$'): string | undefined {
  if (Object.is(a, b)) return undefined;
  const show = (value: unknown) => (value === undefined ? '(absent)' : JSON.stringify(value)?.slice(0, 160));
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let index = 0; index < Math.max(a.length, b.length); index += 1) {
      const difference = firstValueDifference(a[index], b[index], `${path}[${index}]`);
      if (difference) return difference;
    }
    return undefined;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const left = a as Record<string, unknown>;
    const right = b as Record<string, unknown>;
    for (const key of new Set([...Object.keys(left), ...Object.keys(right)])) {
      const difference = firstValueDifference(left[key], right[key], `${path}.${key}`);
      if (difference) return difference;
    }
    return undefined;
  }
  return `${path}: ${show(a)} vs ${show(b)}`;
}

/** Both views of a mismatch of two JSON texts: which value differs (if any), and where the texts part. */
export function describeJsonMismatch(a: string, b: string, labels: [string, string]): string {
  const lines: string[] = [];
  try {
    const value = firstValueDifference(JSON.parse(a), JSON.parse(b));
    lines.push(value ? `first differing value (${labels[0]} vs ${labels[1]}): ${value}` : 'the same values: only key order or spacing differs');
  } catch (error) {
    lines.push(`not both JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  lines.push(firstTextDifference(a, b, labels) ?? 'the texts are equal');
  return lines.join('\n');
}
