/**
 * The one rule for text that comes from outside: docs/graphql-limits.md, "Input text, depth and width". PostgreSQL
 * cannot store a NUL or an unpaired surrogate, so such input is a 400 naming the field at the edge, not a 500 later;
 * the bounds keep anything downstream (hashing, canonical JSON, GraphQL coercion) from unbounded work.
 */

/** Deeper than any input of this API needs (a post's content is 5 levels deep). */
export const MAX_INPUT_DEPTH = 32;

/**
 * Wider than any object of this API needs. GraphQL's variable coercion describes a bad object in each of its
 * errors, so a very wide one costs time in proportion to width times errors: bounded here, before it runs.
 */
export const MAX_OBJECT_KEYS = 1000;

/**
 * Longer than any list of this API may be (its longest lists hold 250 items). Fields have their own, smaller
 * limits, but GraphQL's coercion walks a whole list before any rule sees it: 100,000 items held the event loop for
 * 300 ms. Bounded here, before it runs.
 */
export const MAX_LIST_ITEMS = 1000;

/**
 * Longer than any text this API stores (a post's summary is 1500 characters). Fields have their own, smaller
 * limits; this one stops absurd values before anything (coercion, the ORM's criteria builder) walks them.
 */
export const MAX_TEXT_LENGTH = 100_000;

export type InputProblemKind = 'nul' | 'surrogate' | 'depth' | 'width' | 'items' | 'length';

export interface InputProblem {
  /** Where, in the caller's own names: `params.summary`, `reference_id`, `$input.params.summary`. */
  field: string;
  kind: InputProblemKind;
  /** The offending code unit, as U+XXXX. */
  codePoint?: string;
}

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function textProblem(text: string): Pick<InputProblem, 'kind' | 'codePoint'> | undefined {
  if (text.length > MAX_TEXT_LENGTH) return { kind: 'length' };
  if (text.includes('\u0000')) return { kind: 'nul', codePoint: 'U+0000' };
  const surrogate = UNPAIRED_SURROGATE.exec(text);
  if (surrogate) return { kind: 'surrogate', codePoint: `U+${surrogate[0].charCodeAt(0).toString(16).toUpperCase()}` };
  return undefined;
}

function child(field: string, key: string | number): string {
  if (typeof key === 'number') return `${field}[${key}]`;
  return field ? `${field}.${key}` : key;
}

/**
 * The first problem in a parsed input value (keys included), walking at most `maxDepth` levels of objects and
 * arrays. Linear in the size of the input; never recurses deeper than `maxDepth`.
 */
export function findInputProblem(value: unknown, field: string, maxDepth = MAX_INPUT_DEPTH, depth = 0): InputProblem | undefined {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { field, ...problem } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= maxDepth) return { field, kind: 'depth' };
  if (Array.isArray(value)) {
    if (value.length > MAX_LIST_ITEMS) return { field, kind: 'items' };
    for (let index = 0; index < value.length; index += 1) {
      const problem = findInputProblem(value[index], child(field, index), maxDepth, depth + 1);
      if (problem) return problem;
    }
    return undefined;
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_OBJECT_KEYS) return { field, kind: 'width' };
  for (const [key, item] of entries) {
    const keyProblem = textProblem(key);
    // eslint-disable-next-line no-control-regex -- finding control characters is what this does
    if (keyProblem) return { field: child(field, key.replace(/[\u0000\ud800-\udfff]/g, '\ufffd')), ...keyProblem };
    const problem = findInputProblem(item, child(field, key), maxDepth, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

/** The client-facing message for a problem. */
export function describeInputProblem(problem: InputProblem): string {
  const where = problem.field || 'the request body';
  switch (problem.kind) {
    case 'nul':
      return `${where} must not contain a NUL character (U+0000)`;
    case 'surrogate':
      return `${where} must be valid Unicode text (it contains an unpaired surrogate, ${problem.codePoint})`;
    case 'depth':
      return `${where} is nested deeper than ${MAX_INPUT_DEPTH} levels`;
    case 'width':
      return `${where} has more than ${MAX_OBJECT_KEYS} fields`;
    case 'items':
      return `${where} has more than ${MAX_LIST_ITEMS} items`;
    case 'length':
      return `${where} is longer than ${MAX_TEXT_LENGTH} characters`;
  }
}
