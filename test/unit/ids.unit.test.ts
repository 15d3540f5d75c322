import { isId, newId } from '../../src/shared/ids';

describe('newId', () => {
  it('gives UUID v7 ids, strictly increasing within a process and never repeated, across many pool refills', () => {
    const ids = Array.from({ length: 5000 }, () => newId());
    for (const id of ids) {
      expect(isId(id)).toBe(true);
      expect(id[14]).toBe('7');
      expect('89ab').toContain(id[19]);
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('puts its millisecond first, so ids of a later millisecond sort after', () => {
    const at = Date.now() + 3_600_000;
    const earlier = newId(at);
    const later = newId(at + 1);
    expect(parseInt(earlier.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
    expect(parseInt(later.replace(/-/g, '').slice(0, 12), 16)).toBe(at + 1);
    expect(later > earlier).toBe(true);
  });
});
