import { ArgsType, Field, ID } from 'type-graphql';
import { withConnectionArgs } from '../graphql/relay-connection';
import type { AsyncWorkKind } from '../jobs/work-ledger';
import { AsyncWorkKindEnum, AsyncWorkStatus } from './async-work.enums';

@ArgsType()
class AsyncWorkFilters {
  @Field(() => ID, { nullable: true, description: "With an organization token, one account's work (else the whole organization's); ignored with an account token." })
  accountId?: string | null;

  @Field(() => [AsyncWorkKindEnum.type], { nullable: true, description: 'Only these kinds.' })
  kinds?: AsyncWorkKind[] | null;

  @Field(() => [AsyncWorkStatus], { nullable: true, description: 'Only in these statuses.' })
  statuses?: AsyncWorkStatus[] | null;

  @Field(() => [AsyncWorkKindEnum.type], { nullable: true, description: 'Leaves these kinds out.' })
  excludeKinds?: AsyncWorkKind[] | null;

  @Field(() => ID, { nullable: true, description: 'Only the work about this record (its id: a post, location, update job, account, scan, brand or review).' })
  subjectId?: string | null;
}

@ArgsType()
export class AsyncWorkArgs extends withConnectionArgs(AsyncWorkFilters) {}

@ArgsType()
export class AsyncWorkCountsArgs {
  @Field(() => ID, { nullable: true, description: "With an organization token, one account's work; ignored with an account token." })
  accountId?: string | null;
}

@ArgsType()
export class AsyncWorkUpdatedArgs {
  @Field(() => ID, { nullable: true, description: "Only this account's work (organization tokens); an account token hears its own only." })
  accountId?: string | null;

  @Field(() => [AsyncWorkKindEnum.type], { nullable: true, description: 'Only these kinds.' })
  kinds?: AsyncWorkKind[] | null;
}
