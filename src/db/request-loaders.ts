import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';

/**
 * The DataLoaders of one request, each created on first use, so a request pays only for what it follows. A loader
 * is declared beside the records it reads (`defineLoader`); nothing lists them all.
 */
export class RequestLoaders {
  private readonly made = new Map<symbol, unknown>();

  constructor(private readonly em: () => EntityManager) {}

  get<L>(key: symbol, create: (em: EntityManager) => L): L {
    if (!this.made.has(key)) this.made.set(key, create(this.em()));
    return this.made.get(key) as L;
  }
}

/** Reads a request's loader of one kind: `accountsByOrganization(ctx).load(id)`. */
export type LoaderOf<L> = (scope: { loaders: RequestLoaders }) => L;

export function defineLoader<L>(create: (em: EntityManager) => L): LoaderOf<L> {
  const key = Symbol('loader');
  return (scope) => scope.loaders.get(key, create);
}

/** Records of one entity by id, null for one that is gone: one query for every id a request asks for. */
export function byIdLoader<T extends { id: string }>(entity: EntityClass<T>): LoaderOf<DataLoader<string, T | null>> {
  return defineLoader(
    (em) =>
      new DataLoader<string, T | null>(async (ids) => {
        const rows = (await em.find(entity, { id: { $in: [...ids] } } as never)) as T[];
        const byId = new Map(rows.map((row) => [row.id, row]));
        return ids.map((id) => byId.get(id) ?? null);
      }),
  );
}
