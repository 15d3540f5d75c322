/**
 * A piece of a list, as services return it: the rows, whether more follow, and how many match in all. Cursors and
 * connections are GraphQL's way of showing it (src/graphql/relay-connection.ts); services deal in ids.
 */
export interface Slice<T> {
  nodes: T[];
  hasMore: boolean;
  totalCount: number;
}

/** Which piece: at most `first` rows, after the row `afterId` in the list's order. */
export interface SliceRequest {
  first: number;
  afterId?: string;
}

/** A slice from a query that fetched `first + 1` rows: the extra row only says that more follow. */
export function sliceOf<T>(rows: T[], first: number, totalCount: number): Slice<T> {
  return { nodes: rows.slice(0, first), hasMore: rows.length > first, totalCount };
}
