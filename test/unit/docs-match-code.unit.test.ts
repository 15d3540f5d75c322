import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SETTING_NAMES } from '../../src/config';
import { TOPICS } from '../../src/events/topics';
import { SANDBOX_SETTING } from '../../dev/provider-sandboxes';

const ROOT = path.join(__dirname, '../..');

/** The variables the README's settings tables name: the first cell of each row, `A` or `A` / `B`. */
function documentedSettings(): Set<string> {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const names = new Set<string>();
  for (const line of readme.split('\n')) {
    const firstCell = /^\| (`[A-Z0-9_]+`(?: \/ `[A-Z0-9_]+`)*) \|/.exec(line)?.[1];
    for (const name of firstCell?.match(/[A-Z0-9_]+/g) ?? []) names.add(name);
  }
  return names;
}

describe("the README's settings table", () => {
  it('lists every variable the product and the development entry read', () => {
    const documented = documentedSettings();
    expect(SETTING_NAMES.length).toBeGreaterThan(30);
    expect([...SETTING_NAMES, SANDBOX_SETTING].filter((name) => !documented.has(name))).toEqual([]);
  });

  it('lists no variable that nothing reads', () => {
    const read = new Set<string>([...SETTING_NAMES, SANDBOX_SETTING]);
    expect([...documentedSettings()].filter((name) => !read.has(name))).toEqual([]);
  });
});

describe('docs/events.md', () => {
  it('has a row for every event topic of src/events/topics.ts, and none other', () => {
    const events = readFileSync(path.join(ROOT, 'docs/events.md'), 'utf8');
    const rows = [...events.matchAll(/^\| `([a-z.-]+)` \|/gm)].map((match) => match[1]);
    expect([...rows].sort()).toEqual([...TOPICS].sort());
  });
});
