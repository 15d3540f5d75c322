/** Conversions from GraphQL values to the interface document's units. */

/** DateTime (ISO 8601) -> milliseconds since the epoch, as the document's integer times are. */
export function epochMs(iso: string): number;
export function epochMs(iso: string | null): number | null;
export function epochMs(iso: string | null): number | null {
  return iso === null ? null : Date.parse(iso);
}

/** Copies `value` under `key` only when it is set: the document's optional fields are absent, not null. */
export function optional<K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } {
  return (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
