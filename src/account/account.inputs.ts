import { ArgsType, Field, ID, InputType } from 'type-graphql';
import { ArgumentRules, text } from '../graphql/argument-rules';

/** How an account is found: by its id, by the caller's reference id, or both (then both must match). */
export interface AccountLookup {
  id?: string | null;
  referenceId?: string | null;
}

const accountLookupRules = { referenceId: text({ max: 255 }) };

@ArgsType()
@ArgumentRules(accountLookupRules)
export class AccountLookupArgs implements AccountLookup {
  @Field(() => ID, { nullable: true })
  id?: string | null;

  @Field(() => String, { nullable: true })
  referenceId?: string | null;
}

@InputType()
@ArgumentRules(accountLookupRules)
export class AccountLookupInput implements AccountLookup {
  @Field(() => ID, { nullable: true })
  id?: string | null;

  @Field(() => String, { nullable: true })
  referenceId?: string | null;
}

@InputType()
export class UpdateAccountInput {
  @Field(() => String, { nullable: true, description: 'Trimmed; 1 to 200 characters.' })
  name?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'New reference id (trimmed, at most 255 characters); null or empty clears it. Only allowed when the account is looked up by id.',
  })
  referenceId?: string | null;
}
