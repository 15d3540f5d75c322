import type { GraphQLArgument } from 'graphql';
import { ArgsType, ClassType, Extensions, Field, Int, ObjectType } from 'type-graphql';
import { isId } from '../shared/ids';
import type { Slice, SliceRequest } from '../shared/slice';
import { DomainError } from '../errors/domain-error';
import { ArgumentRules, integer } from './argument-rules';

/** The largest page of a cursor list; asking for more is a BAD_USER_INPUT error, not a silent cut. */
export const MAX_PAGE_SIZE = 100;

/**
 * Marks an argument as the size of a page, with its largest value: the one declaration the cost rule
 * (src/graphql/limits.ts) reads, so each list is counted at its own maximum (250 for location pages).
 */
export function PageSize(max: number): PropertyDecorator {
  return Extensions({ pageSizeMax: max });
}

/** The largest value of a page-size argument, or undefined for an argument that does not size a page. */
export function pageSizeMaxOf(argument: GraphQLArgument): number | undefined {
  const max = argument.extensions?.pageSizeMax;
  return typeof max === 'number' ? max : undefined;
}

@ObjectType()
export class PageInfo {
  @Field()
  hasNextPage!: boolean;

  @Field()
  hasPreviousPage!: boolean;

  @Field(() => String, { nullable: true })
  startCursor!: string | null;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

/** Adds the cursor arguments (`first`, `after`) to an args class of filters. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function withConnectionArgs<TBase extends new (...args: any[]) => object>(Base: TBase) {
  @ArgsType()
  @ArgumentRules({ first: integer({ min: 1, max: MAX_PAGE_SIZE }) })
  class WithConnectionArgs extends Base {
    @Field(() => Int, { defaultValue: 20, description: `Page size, 1 to ${MAX_PAGE_SIZE}.` })
    @PageSize(MAX_PAGE_SIZE)
    first: number = 20;

    @Field(() => String, { nullable: true, description: 'The endCursor of the previous page.' })
    after?: string | null;
  }
  return WithConnectionArgs;
}

@ArgsType()
export class ConnectionArgs extends withConnectionArgs(class {}) {}

export interface Edge<T> {
  cursor: string;
  node: T;
}

export interface Connection<T> {
  edges: Edge<T>[];
  nodes: T[];
  pageInfo: PageInfo;
  totalCount: number;
}

/**
 * A Relay-style connection type for a node type, named `<name>Connection` (edges of `<name>Edge`): `edges { cursor
 * node }`, `nodes`, `pageInfo` and `totalCount`, the one shape of every list (docs/graphql-lists.md).
 */
export function ConnectionType<T extends object>(nodeType: ClassType<T>, name: string) {
  @ObjectType(`${name}Edge`)
  class EdgeType {
    @Field()
    cursor!: string;

    @Field(() => nodeType)
    node!: T;
  }

  @ObjectType(`${name}Connection`)
  class ConnectionClass {
    @Field(() => [EdgeType])
    edges!: EdgeType[];

    @Field(() => [nodeType], { description: 'The nodes of the edges, without their cursors.' })
    nodes!: T[];

    @Field(() => PageInfo)
    pageInfo!: PageInfo;

    @Field(() => Int, { description: 'Number of nodes matching the filters, over all pages.' })
    totalCount!: number;
  }
  return ConnectionClass;
}

/** Cursors are opaque: base64url of the node id (ids are time-ordered UUIDs, the order of every list). */
export function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!isId(id)) throw DomainError.badInput('after: not a cursor returned by this API');
  return id;
}

/** The connection GraphQL shows for a slice a service returned (`after` is the cursor the slice was asked after). */
export function toConnection<T extends { id: string }>(slice: Slice<T>, after: string | null | undefined): Connection<T> {
  const edges = slice.nodes.map((node) => ({ cursor: encodeCursor(node.id), node }));
  return {
    edges,
    nodes: slice.nodes,
    totalCount: slice.totalCount,
    pageInfo: {
      hasNextPage: slice.hasMore,
      hasPreviousPage: Boolean(after),
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}

/**
 * A slice of a list a service reads whole (an organization's accounts, brands or tokens), by the rule of every
 * cursor list: in the order of the ids (`asc`: oldest first, `desc`: newest first), after the id of the cursor, so a
 * cursor whose record has gone meanwhile still reads on from where it was.
 */
export function sliceOfList<T extends { id: string }>(items: readonly T[], request: SliceRequest, order: 'asc' | 'desc'): Slice<T> {
  const sorted = [...items].sort((a, b) => (order === 'asc' ? compareIds(a.id, b.id) : compareIds(b.id, a.id)));
  const afterId = request.afterId?.toLowerCase();
  const rest = afterId === undefined ? sorted : sorted.filter((item) => (order === 'asc' ? compareIds(item.id, afterId) > 0 : compareIds(item.id, afterId) < 0));
  return { nodes: rest.slice(0, request.first), hasMore: rest.length > request.first, totalCount: items.length };
}

/** The order of ids as PostgreSQL sorts uuids (their bytes, so their lower-case hex). */
function compareIds(a: string, b: string): number {
  const [left, right] = [a.toLowerCase(), b.toLowerCase()];
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The slice request of connection arguments, the cursor decoded to the id it stands for. */
export function sliceRequestOf(args: { first: number; after?: string | null }): SliceRequest {
  return { first: args.first, ...(args.after ? { afterId: decodeCursor(args.after) } : {}) };
}
