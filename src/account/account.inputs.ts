import { MaxLength } from 'class-validator';
import { ArgsType, Field, ID, InputType } from 'type-graphql';

/** How an account is found: by its id, by the caller's reference id, or both (then both must match). */
export interface AccountLookup {
  id?: string | null;
  referenceId?: string | null;
}

@ArgsType()
export class AccountLookupArgs implements AccountLookup {
  @Field(() => ID, { nullable: true })
  id?: string | null;

  @Field(() => String, { nullable: true })
  @MaxLength(255, { message: 'reference_id must be at most 255 characters' })
  referenceId?: string | null;
}

@InputType()
export class AccountLookupInput implements AccountLookup {
  @Field(() => ID, { nullable: true })
  id?: string | null;

  @Field(() => String, { nullable: true })
  @MaxLength(255, { message: 'reference_id must be at most 255 characters' })
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
