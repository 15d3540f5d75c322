/**
 * One page of a page-numbered list (the REST lists), as services return it: the items under their own name
 * (`posts`). GraphQL shows it through src/graphql/page.ts; cursor lists are slices (src/shared/slice.ts).
 */
export type Page<K extends string, T> = { found: number; page: number; perPage: number } & { [P in K]: T[] };
