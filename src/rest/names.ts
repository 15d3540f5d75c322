/**
 * How GraphQL names become the document's names, for records going out (src/rest/record.ts) and bodies coming in
 * (src/rest/variables.ts): one rule both ways, so a field reads and writes under the same REST name.
 */

/** `postId` -> `post_id`. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** Exceptions to snake_case, by `Type.field` coordinate. */
export interface RestNaming {
  /** `Type.field` -> the documented name, where it is not the field's name in snake_case. */
  names?: Readonly<Record<string, string>>;
  /** `Type.field`s that are the provider's own body: names kept below them, nothing converted. */
  verbatim?: readonly string[];
  /**
   * Enums a body writes by their values, the spelling records answer (`post.state_changed`), rather than by their
   * names (`POST_STATE_CHANGED`, still taken). A record always writes values; bodies write names unless listed here.
   */
  enumsByValue?: readonly string[];
}

/** Whether a body writes `enumName` by its values (see `enumsByValue`). */
export function readsEnumByValue(naming: RestNaming, enumName: string): boolean {
  return naming.enumsByValue?.includes(enumName) ?? false;
}

/** The REST name of `field` of `type`: renamed, else snake_case. (Below a verbatim field, names are kept as is.) */
export function restFieldName(naming: RestNaming, typeName: string, field: string): string {
  return naming.names?.[`${typeName}.${field}`] ?? snakeCase(field);
}

export function isVerbatim(naming: RestNaming, typeName: string, field: string): boolean {
  return naming.verbatim?.includes(`${typeName}.${field}`) ?? false;
}
