import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { Account } from '../account/account.entity';
import { BetaBrand } from '../beta-brand/beta-brand.entity';
import { CompetitorScan } from '../competitor-scan/competitor-scan.entity';
import { AsyncWorkKind } from '../jobs/work-ledger';
import { LocationUpdateJob } from '../location/location-update-job.entity';
import { Location } from '../location/location.entity';
import { Post } from '../post/post.entity';
import { Review } from '../review/review.entity';

/** The entity each kind of work is about (docs/async-work.md). */
const SUBJECT_OF_KIND: Record<AsyncWorkKind, EntityClass<object>> = {
  POST_PUBLISH: Post,
  POST_CHECK: Post,
  POST_DELETE: Post,
  LOCATION_PUBLISH: Location,
  CITATIONS_DISABLE: Location,
  LOCATION_UPDATE: LocationUpdateJob,
  ACCOUNT_IMPORT: Account,
  COMPETITOR_SCAN: CompetitorScan,
  BETA_BRAND_SYNC: BetaBrand,
  REVIEW_REPLY_SEND: Review,
  REVIEW_REPLY_CHECK: Review,
};

export interface WorkSubjectKey {
  kind: AsyncWorkKind;
  id: string;
}

/**
 * The records work is about, for every unit of work a request shows: one query per kind of record, however many
 * units of work name them. Null for a record that is gone.
 */
export function workSubjectLoader(em: EntityManager): DataLoader<WorkSubjectKey, object | null, string> {
  return new DataLoader<WorkSubjectKey, object | null, string>(
    async (keys) => {
      const byEntity = new Map<EntityClass<object>, Set<string>>();
      for (const { kind, id } of keys) {
        const entity = SUBJECT_OF_KIND[kind];
        if (!byEntity.has(entity)) byEntity.set(entity, new Set());
        byEntity.get(entity)!.add(id);
      }
      const found = new Map<string, object>();
      await Promise.all(
        [...byEntity].map(async ([entity, ids]) => {
          const rows = (await em.find(entity, { id: { $in: [...ids] } })) as { id: string }[];
          for (const row of rows) found.set(`${entity.name}:${row.id}`, row);
        }),
      );
      return keys.map(({ kind, id }) => found.get(`${SUBJECT_OF_KIND[kind].name}:${id}`) ?? null);
    },
    { cacheKeyFn: ({ kind, id }) => `${SUBJECT_OF_KIND[kind].name}:${id}` },
  );
}
