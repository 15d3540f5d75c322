import { Arg, Args, Ctx, Field, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { Account } from '../account/account.entity';
import type { Context } from '../graphql/context';
import {
  connectAlphaAccount,
  disconnectAlphaAccount,
  reconnectAlphaAccount,
  type FlowOutcome,
} from './alpha-accounts.service';
import { generateAlphaConsentUrl } from './alpha-consent.service';
import { listConsentAccounts } from './consent-accounts.service';
import { AlphaConsentAccountsArgs, AlphaProviderAccountConnection } from './consent-accounts.types';

@ObjectType({ description: 'Where to send the person for their consent at the alpha provider.' })
export class AlphaConsentUrl {
  @Field()
  url!: string;
}

@ObjectType({ description: 'The outcome of connect, reconnect or disconnect, and the URL to send the person to (it carries the outcome too).' })
export class AlphaConnectionOutcome implements FlowOutcome {
  @Field()
  url!: string;

  @Field(() => String, { description: 'success, success_reconnect, success_disconnect or error.' })
  status!: FlowOutcome['status'];

  @Field(() => String, { nullable: true, description: 'With status error: ACCOUNT_ALREADY_CONNECTED, TOO_MANY_REQUESTS, NO_LOCATION_FOUND, NotFoundException, or a message.' })
  errorMessage!: string | null;

  @Field(() => Account, { nullable: true, description: 'The account connected or reconnected.' })
  account!: Account | null;
}

const externalApiArg = { nullable: true, defaultValue: true, description: 'Must be true (the document’s external_api).' } as const;

@Resolver()
export class AlphaConnectionResolver {
  @Mutation(() => AlphaConsentUrl, { description: 'Starts connecting an alpha account: the consent URL to send the person to. Organization tokens only.' })
  generateAlphaConsentUrl(
    @Arg('redirectUrl') redirectUrl: string,
    @Arg('state', () => String, { nullable: true }) state: string | null,
    @Ctx() ctx: Context,
  ): Promise<AlphaConsentUrl> {
    return generateAlphaConsentUrl(ctx, { redirectUrl, state });
  }

  @Query(() => AlphaProviderAccountConnection, {
    description:
      'After a completed consent (the callback’s alphaId), the accounts that person has at the provider: the ids connectAlphaAccount takes, and which the organization already has. NOT_FOUND when connect would not find the consent. Organization tokens only.',
  })
  async alphaConsentAccounts(@Args() args: AlphaConsentAccountsArgs, @Ctx() ctx: Context): Promise<AlphaProviderAccountConnection> {
    return AlphaProviderAccountConnection.of(await listConsentAccounts(ctx, args));
  }

  @Mutation(() => AlphaConnectionOutcome, { description: 'Completes a connection after the consent: imports the account, its locations and reviews. Organization tokens only.' })
  connectAlphaAccount(
    @Arg('alphaId', () => ID, { description: 'The person at the provider (the callback’s alphaId).' }) alphaId: string,
    @Arg('id', () => ID, { description: 'The provider account to connect.' }) id: string,
    @Arg('billingId', () => ID, { description: 'The organization (the callback’s billing_id).' }) billingId: string,
    @Arg('state', () => String, { nullable: true }) state: string | null,
    @Arg('uid', () => String, { nullable: true }) uid: string | null,
    @Arg('externalApi', () => Boolean, externalApiArg) externalApi: boolean,
    @Ctx() ctx: Context,
  ): Promise<AlphaConnectionOutcome> {
    return connectAlphaAccount(ctx, { alphaId, id, billingId, state, uid, externalApi });
  }

  @Mutation(() => AlphaConnectionOutcome, { description: 'Disconnects an account: it leaves the organization with its locations, posts and reviews. An account token: its own account only.' })
  disconnectAlphaAccount(
    @Arg('alphaId', () => ID, { description: 'The account to disconnect (ours, or the provider’s id).' }) alphaId: string,
    @Arg('id', () => ID, { nullable: true, description: 'The profile id; used when alphaId names no account.' }) id: string | null,
    @Arg('state', () => String, { nullable: true }) state: string | null,
    @Arg('uid', () => String, { nullable: true }) uid: string | null,
    @Arg('externalApi', () => Boolean, externalApiArg) externalApi: boolean,
    @Ctx() ctx: Context,
  ): Promise<AlphaConnectionOutcome> {
    return disconnectAlphaAccount(ctx, { alphaId, id, state, uid, externalApi });
  }

  @Mutation(() => AlphaConnectionOutcome, { description: 'Refreshes a connection’s tokens and re-syncs the account. An account token: its own account only.' })
  reconnectAlphaAccount(
    @Arg('alphaId', () => ID, { description: 'The person at the provider (the callback’s alphaId).' }) alphaId: string,
    @Arg('id', () => ID, { description: 'The account (ours, or the provider’s id).' }) id: string,
    @Arg('state', () => String, { nullable: true }) state: string | null,
    @Arg('uid', () => String, { nullable: true }) uid: string | null,
    @Arg('externalApi', () => Boolean, externalApiArg) externalApi: boolean,
    @Ctx() ctx: Context,
  ): Promise<AlphaConnectionOutcome> {
    return reconnectAlphaAccount(ctx, { alphaId, id, state, uid, externalApi });
  }
}
