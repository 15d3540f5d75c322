import type { z } from 'zod';

/** Reading a provider's answer: the parts every provider client reads the same way. */

/** Whether a call that failed with this HTTP status may succeed if repeated. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/** The body as JSON, or undefined when it is not JSON (a proxy's HTML page, an empty body). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The body checked against `schema`; otherwise the error `refuse` makes of the first problems found. */
export function parseAnswerBody<S extends z.ZodType>(
  schema: S,
  text: string,
  refuse: (problems: string) => Error,
): z.output<S> {
  const parsed = schema.safeParse(parseJson(text));
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
    .join('; ');
  throw refuse(problems);
}

/** `: <the start of the body>` for an error message, or nothing for an empty body. */
export function excerptSuffix(text: string): string {
  const excerpt = text.trim().slice(0, 200);
  return excerpt ? `: ${excerpt}` : '';
}

/** Retry-After is either delta-seconds or an HTTP date. */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}
