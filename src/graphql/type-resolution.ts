import { isInterfaceType, isUnionType, type GraphQLSchema, type GraphQLTypeResolver } from 'graphql';
import { getMetadataStorage } from 'type-graphql';

/**
 * Gives the schema's interfaces and unions back the type resolvers they were declared with, synchronous.
 * type-graphql wraps each `resolveType` in an async function; graphql-js awaits it, but graphql-jit (which runs the
 * operations of REST and of GraphQL over HTTP: src/graphql/compiled-operation.ts) reads the type at once, and a
 * promise there is "must resolve to an Object type at runtime". Ours answer a type's name (or class) synchronously;
 * one that answers a promise fails at once, naming its type.
 */
export function useSynchronousTypeResolution(schema: GraphQLSchema): void {
  const storage = getMetadataStorage();
  const nameOfClass = new Map<unknown, string>(storage.objectTypes.map((type) => [type.target, type.name]));
  const declared = [...storage.interfaceTypes, ...storage.unions];
  for (const { name, resolveType } of declared) {
    const type = schema.getType(name);
    if (!resolveType || !(isInterfaceType(type) || isUnionType(type))) continue;
    const synchronous: GraphQLTypeResolver<unknown, unknown> = (value, context, info, abstractType) => {
      const resolved: unknown = resolveType(value, context, info, abstractType);
      if (resolved === undefined || resolved === null) return undefined;
      if (typeof resolved === 'string') return resolved;
      if (typeof resolved === 'function') return nameOfClass.get(resolved);
      throw new Error(`The resolveType of ${name} must answer a type synchronously (graphql-jit does not await it)`);
    };
    type.resolveType = synchronous;
  }
}
