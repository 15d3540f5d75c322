import { isCalendarDate, isIsoDate, rfc3339Instant } from '../../src/shared/calendar';

/** The one rule of which dates exist (src/shared/calendar.ts), on its own: the HTTP tests show where it applies. */
describe('dates that exist', () => {
  it.each([
    [2024, 2, 29, true],
    [2023, 2, 29, false],
    [1900, 2, 29, false],
    [2000, 2, 29, true],
    [2024, 4, 31, false],
    [2024, 12, 31, true],
    [2024, 13, 1, false],
    [2024, 0, 10, false],
    [2024, 1, 0, false],
    [2024, 1, 32, false],
    [2024, 1.5, 1, false],
  ])('%i-%i-%i: %s', (year, month, day, exists) => {
    expect(isCalendarDate(year, month, day)).toBe(exists);
  });

  it('reads YYYY-MM-DD only', () => {
    expect(isIsoDate('2024-02-29')).toBe(true);
    for (const text of ['2024-13-01', '2024-00-10', '2024-01-32', '2024-02-30', '2024-2-3', ' 2024-02-03', '20240203']) expect(isIsoDate(text)).toBe(false);
  });

  it('reads RFC 3339 timestamps whose date, time and offset exist', () => {
    expect(rfc3339Instant('2031-02-03T10:00:00Z')).toBe(Date.UTC(2031, 1, 3, 10));
    expect(rfc3339Instant('2031-02-03T10:00:00.250+02:00')).toBe(Date.UTC(2031, 1, 3, 8, 0, 0, 250));
    for (const text of ['2031-02-30T10:00:00Z', '2031-02-03T24:00:00Z', '2031-02-03T10:60:00Z', '2031-02-03T10:00:60Z', '2031-02-03T10:00:00+24:00', '2031-02-03 10:00:00Z', 'tomorrow']) {
      expect(rfc3339Instant(text)).toBeUndefined();
    }
  });
});
