/**
 * The dashboard's one time format (docs/operations.md): the browser's local time, 24-hour, to the second, with its
 * date, whatever the panel: `2026-11-30 14:05:09`. The exact instant (ISO 8601, UTC) is the element's title.
 */

const two = (n: number) => String(n).padStart(2, '0');

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
}

/** A time as every panel writes it. */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return null;
  return (
    <time dateTime={at} title={new Date(at).toISOString()}>
      {formatTime(at)}
    </time>
  );
}
