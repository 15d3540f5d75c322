import type { EntityClass } from '@mikro-orm/core';
import { Ctx, FieldResolver, ObjectType, Resolver, Root, type ClassType } from 'type-graphql';
import { byIdLoader } from '../db/request-loaders';
import type { Context } from '../graphql/context';
import { Node } from '../graphql/node';
import type { AsyncWorkView } from './async-work.service';
import { AsyncWork } from './async-work.types';
import type { WorkType } from './work-kinds';

/**
 * `PostWork`: an AsyncWork whose `post` field is the record the work is about, read through a per-request loader
 * (one query for every unit of work of the request).
 */
export function defineWorkType<E extends { id: string }>(options: { name: string; description: string; field: string; record: ClassType<E> & EntityClass<E> }): WorkType {
  @ObjectType(options.name, { implements: [AsyncWork, Node], description: options.description })
  class Work extends AsyncWork {}

  const recordsById = byIdLoader(options.record);

  @Resolver(() => Work)
  class WorkRecordResolver {
    @FieldResolver(() => options.record, { name: options.field, nullable: true })
    record(@Root() work: AsyncWorkView, @Ctx() ctx: Context): Promise<E | null> {
      return recordsById(ctx).load(work.subjectId);
    }
  }

  return { type: Work, resolver: WorkRecordResolver };
}
