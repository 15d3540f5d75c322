/**
 * The one rule of what dates exist, for every date a request carries (a location's special hours, a post's event
 * schedule and scheduled time): computed from the parts, since JavaScript's `Date` rolls 30 February over to
 * 2 March (or throws on month 13) instead of refusing it.
 */

/** Days of a month of the proleptic Gregorian calendar (month 1 to 12). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

export function isCalendarDate(year: number, month: number, day: number): boolean {
  return [year, month, day].every(Number.isInteger) && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** `YYYY-MM-DD` naming a date that exists. */
export function isIsoDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  return match !== null && isCalendarDate(Number(match[1]), Number(match[2]), Number(match[3]));
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/i;

/** The instant of an RFC 3339 timestamp whose date, time and offset exist (a leap second is not one); else undefined. */
export function rfc3339Instant(text: string): number | undefined {
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const [year, month, day, hours, minutes, seconds] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offsetOk = match[8]!.toUpperCase() === 'Z' || (Number(match[9]) <= 23 && Number(match[10]) <= 59);
  if (!isCalendarDate(year, month, day) || hours > 23 || minutes > 59 || seconds > 59 || !offsetOk) return undefined;
  return Date.parse(text);
}
