import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Ctx, Field, FieldResolver, ID, Info, InterfaceType, Query, Resolver, Root, getMetadataStorage, type ClassType } from 'type-graphql';
import { requirePrincipal } from '../access/guards';
import { domainErrorOf } from '../errors/domain-error';
import type { Context } from './context';
import { partsOfNodeId, toNodeId } from './node-id';

/**
 * Global ids and `node(nodeId:)`: docs/graphql-lists.md, "Global ids and `node`". The key in an id is what the
 * record's own query takes, so `node` only decodes it and calls that query's service read: it reaches exactly what
 * that query reaches, and answers null where the query answers NOT_FOUND.
 */

/** What `node` answered with, by value: the GraphQL type each record was read as (Node's resolveType). */
const typeOfRead = new WeakMap<object, string>();

@InterfaceType('Node', {
  description: 'A record that can be refetched by its global id with `node(nodeId:)` (docs/graphql-lists.md).',
  resolveType: (value: object) => typeOfRead.get(value),
})
export abstract class Node {
  @Field(() => ID, {
    description: 'Global id: refetch the record with node(nodeId:). Opaque; `id` stays the record’s own id (REST, the other queries).',
  })
  nodeId!: string;
}

/** How one kind of record is refetched: the parts of its key and the single-record read of its own query. */
export interface NodeDefinition<T extends object, K extends string> {
  /** The name written in its global ids: its GraphQL type, or the interface its query answers with (`AsyncWork`). */
  name: string;
  /**
   * The GraphQL object types whose records it refetches (classes decorated with @ObjectType); a function when the
   * modules contribute them, read by `defineComposedNodes` before the schema is built.
   */
  types: ClassType[] | (() => ClassType[]);
  /** The parts of the key, in their order in the global id: the arguments of the record's own query. */
  key: readonly K[];
  keyOf(record: T): Record<K, string>;
  /** The record's own query's service read: null, or a NOT_FOUND DomainError, when nothing is within reach. */
  read(ctx: Context, key: Record<K, string>): Promise<T | null>;
  /** The GraphQL type of a record read, when `types` holds several (default: its one type). */
  typeOf?(record: T): string;
}

type AnyDefinition = NodeDefinition<object, string>;

/** A definition, with the GraphQL type names of its types. */
interface Defined {
  definition: AnyDefinition;
  typeNames: string[];
}

const byName = new Map<string, Defined>();
const byTypeName = new Map<string, Defined>();

/** The GraphQL type name of an @ObjectType class, which from now on implements Node. */
function implementNode(type: ClassType): string {
  // The record types are declared with their entities; Node is added to their type here, before the schema is
  // built (type-graphql reads `interfaceClasses` when it builds it), so one declaration says what a node is.
  const objectType = getMetadataStorage().objectTypes.find((candidate) => candidate.target === type);
  if (!objectType) throw new Error(`${type.name} is not a GraphQL object type: it cannot implement Node`);
  if (!objectType.interfaceClasses?.includes(Node)) objectType.interfaceClasses = [...(objectType.interfaceClasses ?? []), Node];
  return objectType.name;
}

const composed: AnyDefinition[] = [];

function register(definition: AnyDefinition, types: ClassType[]): void {
  if (byName.has(definition.name)) throw new Error(`Node ${definition.name} is defined twice`);
  if (types.length !== 1 && !definition.typeOf) throw new Error(`Node ${definition.name} has ${types.length} types: it needs typeOf`);
  const defined: Defined = { definition, typeNames: types.map(implementNode) };
  byName.set(definition.name, defined);
  for (const typeName of defined.typeNames) byTypeName.set(typeName, defined);
}

/** Declares a kind of record refetchable by `node`: its types implement Node and get `nodeId`. */
export function defineNode<T extends object, K extends string>(definition: NodeDefinition<T, K>): NodeDefinition<T, K> {
  const { types } = definition;
  if (typeof types === 'function') composed.push(definition);
  else register(definition, types);
  return definition;
}

/** Registers the nodes whose types the modules contribute: once they are composed, before the schema is built. */
export function defineComposedNodes(): void {
  for (const definition of composed.splice(0)) register(definition, (definition.types as () => ClassType[])());
}

/** The definition and key a global id stands for; null for anything this API did not write. */
function decodeNodeId(nodeId: string): { defined: Defined; key: Record<string, string> } | null {
  const spelled = partsOfNodeId(nodeId);
  const defined = spelled === null ? undefined : byName.get(spelled.name);
  if (!spelled || !defined || spelled.parts.length !== defined.definition.key.length) return null;
  return { defined, key: Object.fromEntries(defined.definition.key.map((part, index) => [part, spelled.parts[index]!])) };
}

function nodeIdOf(definition: AnyDefinition, record: object): string {
  const key = definition.keyOf(record);
  return toNodeId(definition.name, definition.key.map((part) => key[part]!));
}

@Resolver(() => Node)
export class NodeResolver {
  @Query(() => Node, {
    nullable: true,
    description:
      'The record with this global id (its `nodeId`), read by its own query: null when that query would not find it (unknown, or not within reach).',
  })
  async node(@Arg('nodeId', () => ID) nodeId: string, @Ctx() ctx: Context): Promise<object | null> {
    requirePrincipal(ctx);
    const decoded = decodeNodeId(nodeId);
    if (!decoded) return null;
    const { definition, typeNames } = decoded.defined;
    let record: object | null;
    try {
      record = await definition.read(ctx, decoded.key);
    } catch (error) {
      if (domainErrorOf(error)?.code === 'NOT_FOUND') return null;
      throw error;
    }
    if (!record) return null;
    typeOfRead.set(record, definition.typeOf?.(record) ?? typeNames[0]!);
    return record;
  }

  @FieldResolver(() => ID)
  nodeId(@Root() record: object, @Info() info: GraphQLResolveInfo): string {
    const defined = byTypeName.get(info.parentType.name);
    if (!defined) throw new Error(`${info.parentType.name} implements Node without a node definition`);
    return nodeIdOf(defined.definition, record);
  }
}
