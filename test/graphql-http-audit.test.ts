import { readFileSync } from 'node:fs';
import path from 'node:path';
import { serverAudits, type AuditResult } from 'graphql-http';
import { startTestStack, type TestStack } from './support/stack';

/**
 * GraphQL over HTTP conformance, measured by the graphql-http audits against the running server. Every MUST
 * audit is a test of its own. SHOULD and MAY audits may fail, but only when docs/graphql-over-http.md explains
 * why: a new failure (or a fixed one still listed) fails this file, so the document cannot go stale.
 */

const DOC = path.resolve(__dirname, '../docs/graphql-over-http.md');

let t: TestStack;

// The URL is a function because the audits are listed now (one test each) but the server starts in beforeAll.
const audits = serverAudits({ url: () => `${t.url}/graphql`, fetchFn: fetch });
const mustAudits = audits.filter((audit) => audit.name.startsWith('MUST '));
const optionalAudits = audits.filter((audit) => !audit.name.startsWith('MUST '));

beforeAll(async () => {
  t = await startTestStack();
});

afterAll(async () => {
  await t?.close();
});

/** The audit's reason and the start of the response body, so a failure says what the server answered. */
async function describeFailure(result: AuditResult): Promise<string> {
  if (result.status === 'ok') return 'ok';
  let body = '';
  try {
    body = (await result.response.clone().text()).slice(0, 500);
  } catch {
    // The audit already consumed the body: its reason is enough.
  }
  return `${result.status}: ${result.reason} (HTTP ${result.response.status}) ${body}`;
}

/** The ids in the first column of the document's table of non-passing audits. */
function documentedIds(): Set<string> {
  const ids = new Set<string>();
  for (const line of readFileSync(DOC, 'utf8').split('\n')) {
    const match = /^\|\s*`?([0-9A-Z]{4})`?\s*\|/.exec(line);
    if (match) ids.add(match[1]!);
  }
  return ids;
}

test('the audit list has MUST, SHOULD and MAY audits', () => {
  // Guards the name-prefix filtering above against a change of naming in graphql-http.
  expect(mustAudits.length).toBeGreaterThan(10);
  expect(optionalAudits.some((audit) => audit.name.startsWith('SHOULD '))).toBe(true);
  expect(optionalAudits.some((audit) => audit.name.startsWith('MAY '))).toBe(true);
  expect(mustAudits.length + optionalAudits.length).toBe(audits.length);
});

describe('MUST', () => {
  for (const audit of mustAudits) {
    test(audit.name, async () => {
      const result = await audit.fn();
      // Comparing strings puts the server's answer into the failure message.
      expect(await describeFailure(result)).toBe('ok');
    });
  }
});

test('every SHOULD and MAY audit that does not pass is documented in docs/graphql-over-http.md, and only those', async () => {
  const failing = new Map<string, string>();
  for (const audit of optionalAudits) {
    const result = await audit.fn();
    if (result.status !== 'ok') failing.set(audit.id, `${audit.id} ${audit.name} -> ${await describeFailure(result)}`);
  }
  const documented = documentedIds();
  const undocumented = [...failing].filter(([id]) => !documented.has(id)).map(([, line]) => line);
  const nowPassingOrUnknown = [...documented].filter((id) => !failing.has(id));
  expect(undocumented).toEqual([]);
  expect(nowPassingOrUnknown).toEqual([]);
});
