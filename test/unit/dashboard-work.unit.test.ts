import { kindLabel, placeItem, WorkBoard, type WorkCount, type WorkItem } from '../../dashboard/src/work';

/**
 * The dashboard's picture of the work (dashboard/src/work.ts): how the lists and counts follow asyncWorkUpdated
 * events, newest version kept, whatever order and repetition the events come in.
 */

let clock = Date.parse('2026-11-25T10:00:00Z');
function item(id: string, overrides: Partial<WorkItem> = {}): WorkItem {
  clock += 1000;
  const at = new Date(clock).toISOString();
  return {
    id,
    kind: 'POST_PUBLISH',
    status: 'QUEUED',
    attempts: 0,
    maxAttempts: 3,
    run: 1,
    runAttempts: 0,
    error: null,
    progress: null,
    accountId: 'account-1',
    subjectId: `post-${id}`,
    createdAt: at,
    startedAt: null,
    endedAt: null,
    updatedAt: at,
    retryable: false,
    version: 1,
    ...overrides,
  };
}

const next = (from: WorkItem, overrides: Partial<WorkItem>): WorkItem => ({ ...from, version: from.version + 1, ...overrides });
const ids = (list: readonly WorkItem[]) => list.map((entry) => entry.id);
const countsOf = (board: WorkBoard) =>
  Object.fromEntries(board.view().counts.map((count) => [`${count.kind} ${count.status}`, count.count]));

describe('placeItem', () => {
  const a = item('a');
  const b = item('b');
  const c = item('c');
  const newestFirst = [c, b, a];

  it('puts new work at the top and trims the list to its limit', () => {
    const d = item('d');
    expect(ids(placeItem(newestFirst, d, 3, true))).toEqual(['d', 'c', 'b']);
  });

  it('replaces a changed item where it was', () => {
    const changed = next(b, { status: 'RUNNING' });
    const placed = placeItem(newestFirst, changed, 3, true);
    expect(ids(placed)).toEqual(['c', 'b', 'a']);
    expect(placed[1]).toBe(changed);
  });

  it('leaves out an item older than every one of a full list, and keeps it in a list with room', () => {
    const old = { ...item('old'), createdAt: '2020-01-01T00:00:00.000Z' };
    expect(ids(placeItem(newestFirst, old, 3, true))).toEqual(['c', 'b', 'a']);
    expect(ids(placeItem(newestFirst, old, 4, true))).toEqual(['c', 'b', 'a', 'old']);
  });

  it('takes out an item that no longer belongs', () => {
    expect(ids(placeItem(newestFirst, next(b, { status: 'QUEUED' }), 3, false))).toEqual(['c', 'a']);
  });
});

describe('WorkBoard', () => {
  it('moves a count from the old status to the new one as an item changes, and counts new work', () => {
    const board = new WorkBoard();
    const known = item('known', { status: 'RUNNING', attempts: 1, version: 2 });
    board.reset([known], [], [{ kind: 'POST_PUBLISH', status: 'RUNNING', count: 1 }]);

    expect(board.apply(next(known, { status: 'SUCCEEDED' }))).toEqual({ countsExact: true });
    const fresh = item('fresh');
    expect(board.apply(fresh)).toEqual({ countsExact: true });
    expect(countsOf(board)).toEqual({ 'POST_PUBLISH SUCCEEDED': 1, 'POST_PUBLISH QUEUED': 1 });
    expect(ids(board.view().latest)).toEqual(['fresh', 'known']);
  });

  it('ignores an event older than, or the same as, what it holds', () => {
    const board = new WorkBoard();
    const running = item('x', { status: 'RUNNING', attempts: 1, version: 3 });
    board.reset([running], [], [{ kind: 'POST_PUBLISH', status: 'RUNNING', count: 1 }]);
    expect(board.apply({ ...running, status: 'QUEUED', version: 2 })).toEqual({ countsExact: true });
    expect(board.apply(running)).toEqual({ countsExact: true });
    expect(board.view().latest).toEqual([running]);
    expect(countsOf(board)).toEqual({ 'POST_PUBLISH RUNNING': 1 });
  });

  it('says the counts are not exact when an item it never saw changes (its old status is unknown)', () => {
    const board = new WorkBoard();
    board.reset([], [], [{ kind: 'POST_PUBLISH', status: 'RUNNING', count: 4 }]);
    expect(board.apply(item('unseen', { status: 'SUCCEEDED', attempts: 1, version: 3 }))).toEqual({ countsExact: false });
    // Still listed: the list is exact whatever the counts.
    expect(ids(board.view().latest)).toEqual(['unseen']);
  });

  it('says the counts are not exact when a move would take a count below zero', () => {
    const board = new WorkBoard();
    const known = item('k', { status: 'RUNNING', attempts: 1, version: 2 });
    board.reset([known], [], []);
    expect(board.apply(next(known, { status: 'SUCCEEDED' }))).toEqual({ countsExact: false });
  });

  it('lists failed and dead-lettered work among the failures, and takes it out when it is retried', () => {
    const board = new WorkBoard();
    const running = item('f', { status: 'RUNNING', attempts: 2, version: 4 });
    board.reset([running], [], [{ kind: 'POST_PUBLISH', status: 'RUNNING', count: 1 }]);
    const dead = next(running, { status: 'DEAD_LETTERED', error: 'The alpha provider answered 503', retryable: true });
    board.apply(dead);
    expect(board.view().failures).toEqual([dead]);
    board.apply(next(dead, { status: 'QUEUED', retryable: false }));
    expect(board.view().failures).toEqual([]);
    expect(countsOf(board)).toEqual({ 'POST_PUBLISH QUEUED': 1 });
  });

  it('after a fresh read, applies again the events received meanwhile: the newer ones change it, the rest do not', () => {
    const board = new WorkBoard();
    const a1 = item('a');
    const a2 = next(a1, { status: 'RUNNING', attempts: 1 });
    const a3 = next(a2, { status: 'SUCCEEDED' });
    // Events received while the snapshot (which holds a2) was read.
    board.apply(a1);
    board.apply(a3);
    const counts: WorkCount[] = [{ kind: 'POST_PUBLISH', status: 'RUNNING', count: 1 }];
    board.reset([a2], [], counts);
    expect(board.view().latest).toEqual([a2]);
    for (const received of [a1, a3]) board.apply(received);
    expect(board.view().latest).toEqual([a3]);
    expect(countsOf(board)).toEqual({ 'POST_PUBLISH SUCCEEDED': 1 });
  });

  it('remembers a bounded number of items: the least recently changed are forgotten first', () => {
    const board = new WorkBoard({ latest: 50, checks: 50, failures: 50, remembered: 2 });
    const first = item('1');
    const second = item('2');
    const third = item('3');
    board.reset([], [], []);
    for (const entry of [first, second, third]) board.apply(entry);
    // The first is forgotten: its next change cannot be counted.
    expect(board.apply(next(first, { status: 'RUNNING', attempts: 1 }))).toEqual({ countsExact: false });
    expect(board.apply(next(third, { status: 'RUNNING', attempts: 1 }))).toEqual({ countsExact: true });
  });
});

describe('kindLabel', () => {
  it('writes a kind as words', () => {
    expect(kindLabel('POST_PUBLISH')).toBe('Post publish');
    expect(kindLabel('CITATIONS_DISABLE')).toBe('Citations disable');
  });
});
