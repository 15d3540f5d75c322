import {
  Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Mutation, ObjectType, Query, Resolver, Root, registerEnumType,
} from 'type-graphql';
import { ArgumentRules, text } from '../graphql/argument-rules';
import type { Context } from '../graphql/context';
import { defineNode } from '../graphql/node';
import { ConnectionType, sliceOfList, sliceRequestOf, toConnection, withConnectionArgs, type Connection } from '../graphql/relay-connection';
import { ApiToken } from './api-token.entity';
import { createAccountToken, getAccountToken, listAccountTokens, revokeAccountToken } from './token-management.service';

export enum TokenKind {
  ORGANIZATION = 'ORGANIZATION',
  ACCOUNT = 'ACCOUNT',
}
registerEnumType(TokenKind, { name: 'TokenKind' });

@ObjectType()
export class CreatedApiToken {
  @Field({ description: 'The secret: send it as `Authorization: Bearer <token>`. It is never shown again.' })
  token!: string;

  @Field(() => ApiToken)
  apiToken!: ApiToken;
}

@ArgsType()
@ArgumentRules({ label: text({ max: 100 }) })
export class CreateAccountTokenArgs {
  @Field(() => ID)
  accountId!: string;

  @Field(() => String, { nullable: true })
  label?: string | null;
}

@ArgsType()
class ApiTokenFilters {
  @Field(() => ID, { nullable: true, description: "Only this account's tokens." })
  accountId?: string | null;

  @Field({ defaultValue: false, description: 'Revoked tokens too.' })
  includeRevoked: boolean = false;
}

@ArgsType()
export class ApiTokensConnectionArgs extends withConnectionArgs(ApiTokenFilters) {}

export const ApiTokenConnection = ConnectionType(ApiToken, 'ApiToken');

/** `node` reads an account token as `apiTokensConnection` lists it: organization tokens only, revoked ones too. */
export const apiTokenNode = defineNode({
  name: 'ApiToken',
  types: [ApiToken],
  key: ['id'],
  keyOf: (token: ApiToken) => ({ id: token.id }),
  read: (ctx, key) => getAccountToken(ctx, key.id),
});

@Resolver(() => ApiToken)
export class TokenResolver {
  @Query(() => [ApiToken], {
    description: 'Account tokens of the organization, newest first. Organization token only.',
    deprecationReason: 'Use apiTokensConnection.',
  })
  apiTokens(
    @Arg('accountId', () => ID, { nullable: true }) accountId: string | null | undefined,
    @Arg('includeRevoked', { defaultValue: false }) includeRevoked: boolean,
    @Ctx() ctx: Context,
  ): Promise<ApiToken[]> {
    return listAccountTokens(ctx, { accountId, includeRevoked });
  }

  @Query(() => ApiTokenConnection, { description: 'Account tokens of the organization, newest first. Organization token only.' })
  async apiTokensConnection(@Args() args: ApiTokensConnectionArgs, @Ctx() ctx: Context): Promise<Connection<ApiToken>> {
    const request = sliceRequestOf(args);
    const tokens = await listAccountTokens(ctx, { accountId: args.accountId, includeRevoked: args.includeRevoked });
    return toConnection(sliceOfList(tokens, request, 'desc'), args.after);
  }

  @Mutation(() => CreatedApiToken, { description: 'Creates a token bound to one account. Organization token only.' })
  createAccountToken(@Args() args: CreateAccountTokenArgs, @Ctx() ctx: Context): Promise<CreatedApiToken> {
    return createAccountToken(ctx, args);
  }

  @Mutation(() => ApiToken, { description: 'Revokes an account token at once. Organization token only.' })
  revokeApiToken(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<ApiToken> {
    return revokeAccountToken(ctx, id);
  }

  @FieldResolver(() => ID, { nullable: true, description: 'The account an account token is bound to.' })
  accountId(@Root() token: ApiToken): string | null {
    return token.account?.id ?? null;
  }

  @FieldResolver(() => TokenKind)
  kind(@Root() token: ApiToken): TokenKind {
    return token.account ? TokenKind.ACCOUNT : TokenKind.ORGANIZATION;
  }
}
