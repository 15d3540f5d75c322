/**
 * Bad values of every kind, for the fuzz test: types, encodings, sizes, depths, control characters, repeated
 * names. JSON values are raw JSON text (so depths no serializer of ours would produce can be sent); URL values are
 * raw, already percent-encoded text.
 */

export interface BadValue {
  kind: string;
  /** Raw JSON text of the value. */
  json: string;
  /** Big values (hundreds of kB): sent to top-level fields only, to keep the run short. */
  heavy?: boolean;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const json = (kind: string, value: unknown, heavy = false): BadValue => ({ kind, json: JSON.stringify(value), heavy });

/** Nested `depth` levels deep, as text: `[[[…]]]` or `{"a":{"a":…}}`. */
export function deepJson(depth: number, as: 'array' | 'object'): string {
  return as === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

export const BAD_JSON_VALUES: BadValue[] = [
  json('null', null),
  json('true', true),
  json('zero', 0),
  json('negative', -1),
  json('fraction', 1.5),
  json('beyond 2^53', 2 ** 53 + 2),
  json('beyond int32', 2 ** 31),
  { kind: 'exponent overflow', json: '1e400' },
  { kind: 'negative zero', json: '-0' },
  json('empty string', ''),
  json('blank string', '   '),
  json('empty object', {}),
  json('empty list', []),
  json('list of mixed junk', [null, 1, 'a', {}, []]),
  json('NUL character', 'a\u0000b'),
  json('lone high surrogate', 'a\ud800b'),
  json('lone low surrogate', '\udc00'),
  json('control characters', '\u0001\u0008\u001f\u007f\u0085\u2028'),
  json('BOM and bidi override', '\ufeff\u202egnp.exe'),
  json('emoji and combining marks', `😀👍🏽${'e\u0301'.repeat(50)}`),
  json('placeholder-like text', '{a}{a}{a}{b}'),
  json('SQL-like text', "' OR 1=1; drop table post; --"),
  json('markup', '<script>alert(1)</script>'),
  json('not a UUID', 'not-an-id'),
  // Not a URL at all, spaces and all: a URL field says so, not that it has spaces.
  json('text that is no URL', 'not a url'),
  // Over every length limit of a field (a summary's 1500 characters), light enough for nested fields too.
  json('string of 5,000 characters', 'w'.repeat(5000)),
  json('prototype keys', JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}')),
  json('key with NUL', { 'a\u0000': 1 }),
  json('key with lone surrogate', { '\ud800': 1 }),
  json('string of 100 kB', 'x'.repeat(100_000), true),
  json('string of 600 kB', 'y'.repeat(600_000), true),
  { kind: 'array nested 10,000 deep', json: deepJson(10_000, 'array'), heavy: true },
  { kind: 'object nested 10,000 deep', json: deepJson(10_000, 'object'), heavy: true },
  { kind: 'object nested 40 deep', json: deepJson(40, 'object') },
  json('object of 20,000 keys', Object.fromEntries(range(20_000).map((i) => [`k${i}`, i])), true),
  json('list of 100,000 items', range(100_000), true),
  json('list of 1,000 strings', range(1000).map((i) => `s${i}`)),
];

/** Raw, percent-encoded values for path segments and query parameters. */
export const BAD_URL_TEXT: { kind: string; text: string }[] = [
  { kind: 'NUL', text: 'a%00b' },
  { kind: 'lone surrogate as UTF-8', text: '%ED%A0%80' },
  { kind: 'invalid UTF-8', text: '%FF%FE' },
  { kind: 'overlong UTF-8', text: '%C0%AF' },
  { kind: 'truncated escape', text: 'a%' },
  { kind: 'bad escape', text: '%zz' },
  { kind: 'control characters', text: '%01%1F%7F' },
  { kind: 'bidi override and BOM', text: '%E2%80%AE%EF%BB%BF' },
  { kind: 'emoji', text: '%F0%9F%98%80' },
  { kind: 'empty', text: '' },
  { kind: 'spaces', text: '%20%20' },
  { kind: 'negative', text: '-1' },
  { kind: 'zero', text: '0' },
  { kind: 'fraction', text: '1.5' },
  { kind: 'exponent', text: '1e400' },
  { kind: 'beyond 2^64', text: '99999999999999999999999' },
  { kind: 'NaN', text: 'NaN' },
  { kind: 'null', text: 'null' },
  { kind: 'JSON', text: '%7B%22a%22%3A1%7D' },
  { kind: 'path traversal', text: '..%2F..%2Fetc%2Fpasswd' },
  { kind: 'SQL-like', text: "'%20OR%201%3D1--" },
  { kind: 'placeholder-like', text: '%7Ba%7D' },
  { kind: '101 characters', text: 'x'.repeat(101) },
  { kind: '4,000 characters', text: 'x'.repeat(4000) },
];

/** Whole request bodies that are not a JSON object, or not JSON at all. */
export const BAD_BODIES: { kind: string; body: string | Buffer; contentType?: string }[] = [
  { kind: 'not JSON', body: 'hello' },
  { kind: 'truncated JSON', body: '{"a": ' },
  { kind: 'JSON array', body: '[1,2,3]' },
  { kind: 'JSON string', body: '"text"' },
  { kind: 'JSON null', body: 'null' },
  { kind: 'empty', body: '' },
  { kind: 'duplicate keys', body: '{"params": 1, "params": {"summary": "x"}}' },
  { kind: 'invalid UTF-8 bytes', body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
  { kind: 'array nested 200,000 deep', body: deepJson(200_000, 'array') },
  { kind: 'object nested 100,000 deep', body: deepJson(100_000, 'object') },
  { kind: 'over 1 MB', body: JSON.stringify({ a: 'z'.repeat(1_100_000) }) },
  { kind: 'text/plain', body: '{}', contentType: 'text/plain' },
  { kind: 'form encoded', body: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' },
  { kind: 'unknown charset', body: '{}', contentType: 'application/json; charset=ebcdic' },
];

/** The parameterMask that once took the process down (the same name 28 times, each doubling the text). */
export const EXPANDING_MASK = {
  parameterMask: Array.from({ length: 28 }, () => 'a').join(','),
  parameters: { a: '{a}{a}' },
};
