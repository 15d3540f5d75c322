import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requirePrincipal } from '../access/guards';
import type { TopicPayloads } from '../events/topics';
import type { Context } from '../graphql/context';
import { defineNode } from '../graphql/node';
import { ConnectionType, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { recordChangeFilter } from '../graphql/record-change-filter';
import { AsyncWorkArgs, AsyncWorkCountsArgs, AsyncWorkUpdatedArgs } from './async-work.inputs';
import { countWork, findWork, listWork, providerBudgets, retryWork, viewOfWork, type AsyncWorkView, type ProviderBudgetView, type WorkCount } from './async-work.service';
import { AsyncWork, AsyncWorkCount, ProviderBudget, ProviderHealth, typeOfWork } from './async-work.types';
import { workTypes } from './work-kinds';
import { AsyncWorkAttempt } from './async-work-attempt.entity';
import { workAttempts } from './async-work.loaders';

const AsyncWorkConnection = ConnectionType(AsyncWork, 'AsyncWork');

/** Every kind of work is refetched as `asyncWorkItem(id:)` reads it: global ids name AsyncWork, whatever the kind. */
export const asyncWorkNode = defineNode({
  name: 'AsyncWork',
  types: workTypes,
  key: ['id'],
  keyOf: (work: AsyncWorkView) => ({ id: work.id }),
  read: (ctx, key) => findWork(ctx, key.id),
  typeOf: typeOfWork,
});

@Resolver(() => AsyncWork)
export class AsyncWorkResolver {
  @Query(() => AsyncWorkConnection, { description: 'Asynchronous work within reach, newest first (docs/async-work.md).' })
  async asyncWork(@Args() args: AsyncWorkArgs, @Ctx() ctx: Context): Promise<Connection<AsyncWorkView>> {
    return toConnection(await listWork(ctx, args, sliceRequestOf(args)), args.after);
  }

  @Query(() => AsyncWork, { nullable: true, description: 'One unit of work; null when there is none within reach.' })
  asyncWorkItem(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AsyncWorkView | null> {
    return findWork(ctx, id);
  }

  @Query(() => [AsyncWorkCount], { description: 'How much work there is of each kind in each status (only the pairs with work).' })
  asyncWorkCounts(@Args() args: AsyncWorkCountsArgs, @Ctx() ctx: Context): Promise<WorkCount[]> {
    return countWork(ctx, args.accountId);
  }

  @Query(() => [ProviderHealth], { description: "Each provider's recent calls from the process answering: calls, failures, latency." })
  providerHealth(@Ctx() ctx: Context): ProviderHealth[] {
    requirePrincipal(ctx);
    return ctx.runtime.providerHealth.figures();
  }

  @Query(() => [ProviderBudget], { description: "Each provider's request budget, until when it is paused, and what of the caller's work waits for it." })
  providerBudgets(@Ctx() ctx: Context): Promise<ProviderBudgetView[]> {
    return providerBudgets(ctx);
  }

  @FieldResolver(() => [AsyncWorkAttempt], { description: 'Every attempt, oldest first, over all runs: when it ran, how it ended, why it failed.' })
  attemptHistory(@Root() work: AsyncWorkView, @Ctx() ctx: Context): Promise<AsyncWorkAttempt[]> {
    return workAttempts(ctx).load(work.id);
  }

  @Mutation(() => AsyncWork, {
    description: 'Retries work whose retries ran out (DEAD_LETTERED, when `retryable`): organization tokens; NOT_RETRYABLE otherwise.',
  })
  retryAsyncWork(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AsyncWorkView> {
    return retryWork(ctx, id);
  }

  @Subscription(() => AsyncWork, {
    topics: 'async-work.updated',
    description: 'Every change of asynchronous work within reach (of these kinds, of this account, when given).',
    filter: recordChangeFilter<TopicPayloads['async-work.updated'], AsyncWorkUpdatedArgs>('async-work.updated', {
      // An account token hears its own account's work whatever accountId names (reach has checked that).
      matches: (work, args, principal) =>
        (!args.accountId || principal.accountId !== null || work.accountId === args.accountId) && (!args.kinds?.length || args.kinds.includes(work.kind)),
    }),
  })
  asyncWorkUpdated(@Root() payload: TopicPayloads['async-work.updated'], @Args() _args: AsyncWorkUpdatedArgs, @Ctx() ctx: Context): AsyncWorkView {
    requirePrincipal(ctx);
    return viewOfWork(payload);
  }
}
