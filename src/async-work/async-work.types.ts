import { Field, Float, ID, Int, InterfaceType, ObjectType } from 'type-graphql';
import { Node } from '../graphql/node';
import { AsyncWorkKindEnum, AsyncWorkStatus } from './async-work.enums';
import type { AsyncWorkKind } from '../jobs/work-ledger';
import { workTypeNameOf } from './work-kinds';
import type { AsyncWorkView, ProviderBudgetView } from './async-work.service';
import type { ProviderName } from '../providers/shared/provider-error';

/** The GraphQL type of a unit of work: its kind's (src/async-work/work-kinds.ts). */
export function typeOfWork(work: AsyncWorkView): string {
  const name = workTypeNameOf(work.kind);
  if (!name) throw new Error(`no module declares the work kind ${work.kind}`);
  return name;
}

@InterfaceType('AsyncWork', {
  description: 'A unit of asynchronous work and how it stands (docs/async-work.md); each kind names the record it is about.',
  implements: Node,
  resolveType: typeOfWork,
})
export class AsyncWork implements AsyncWorkView {
  @Field(() => ID)
  id!: string;

  @Field(() => AsyncWorkKindEnum.type)
  kind!: AsyncWorkKind;

  @Field(() => AsyncWorkStatus)
  status!: AsyncWorkStatus;

  @Field(() => Int, { description: 'Attempts started so far, in every run.' })
  attempts!: number;

  @Field(() => Int, { description: 'Attempts a run may take (1 + JOB_RETRY_LIMIT); a retry starts a new run.' })
  maxAttempts!: number;

  @Field(() => Int, { description: '1, then one more at each retryAsyncWork.' })
  run!: number;

  @Field(() => Int, { description: 'Attempts started in the current run (compare with maxAttempts; `attempts` counts every run).' })
  runAttempts!: number;

  @Field(() => String, { nullable: true, description: "The last failure's documented text." })
  error!: string | null;

  @Field(() => Float, { nullable: true, description: 'From 0 to 1, where the work knows it.' })
  progress!: number | null;

  @Field(() => ID)
  organizationId!: string;

  @Field(() => ID, { nullable: true, description: 'Null for work of the organization as a whole (beta brands).' })
  accountId!: string | null;

  @Field(() => ID, { description: 'The id of the record the work is about.' })
  subjectId!: string;

  @Field()
  createdAt!: Date;

  @Field(() => Date, { nullable: true, description: "The latest attempt's start." })
  startedAt!: Date | null;

  @Field(() => Date, { nullable: true })
  endedAt!: Date | null;

  @Field()
  updatedAt!: Date;

  @Field({ description: 'Whether an organization token may retry it now (retryAsyncWork).' })
  retryable!: boolean;

  @Field(() => Int, { description: 'Incremented at every change.' })
  version!: number;
}

@ObjectType({ description: 'How much work of one kind is in one status.' })
export class AsyncWorkCount {
  @Field(() => AsyncWorkKindEnum.type)
  kind!: AsyncWorkKind;

  @Field(() => AsyncWorkStatus)
  status!: AsyncWorkStatus;

  @Field(() => Int)
  count!: number;
}

@ObjectType({ description: "A provider's recent calls from this process: how many, how many failed, how fast." })
export class ProviderHealth {
  @Field({ description: 'alpha, alpha-oauth, beta or beta-oauth.' })
  provider!: string;

  @Field(() => Int, { description: 'The window the figures cover, ending now.' })
  windowSeconds!: number;

  @Field(() => Int)
  calls!: number;

  @Field(() => Int, { description: 'Calls answered 5xx or 429, timed out or lost on the network.' })
  errors!: number;

  @Field(() => Float, { nullable: true })
  latencyP50Ms!: number | null;

  @Field(() => Float, { nullable: true })
  latencyP95Ms!: number | null;

  @Field(() => String, { nullable: true, description: 'The operation and status of the latest failed call, e.g. "POST v4/accounts/{id}/locations/{id}/localPosts: 503".' })
  lastError!: string | null;

  @Field(() => Date, { nullable: true })
  lastErrorAt!: Date | null;
}

@ObjectType({ description: "A provider's request budget, its pause, and what of the caller's work waits for it (docs/operations.md, \"Provider budgets\")." })
export class ProviderBudget implements ProviderBudgetView {
  @Field(() => String, { description: 'alpha or beta.' })
  provider!: ProviderName;

  @Field(() => Float, { nullable: true, description: 'Requests a second the whole deployment may send it (ALPHA_BUDGET, BETA_BUDGET); null: no budget.' })
  requestsPerSecond!: number | null;

  @Field(() => Date, { nullable: true, description: "Until when it is paused (a 429 named its project quota); null: it is not." })
  pausedUntil!: Date | null;

  @Field(() => Int, { description: "The caller's units of work waiting for it: put back in their queue by a 429 or its pause (an organization token: its organization's; an account token: its account's)." })
  waitingWork!: number;

  @Field(() => Date, { nullable: true, description: 'When the first of them is due again (it may be past: due, waiting for a worker).' })
  nextWaitingDueAt!: Date | null;

  @Field(() => Int, { description: 'Calls of the process answering that wait for a slot of its budget now (every organization\'s: a count only).' })
  waitingCalls!: number;
}
