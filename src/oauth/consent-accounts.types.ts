import { ArgsType, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PageInfo, withConnectionArgs } from '../graphql/relay-connection';
import { ALPHA_ACCOUNT_TYPES, type AlphaAccountType as ProviderAccountType } from '../providers/alpha/alpha.types';
import type { ConsentAccount, ConsentAccountsPage } from './consent-accounts.service';

/** The provider's kinds of account, over its own list of values. */
export const AlphaAccountType = Object.fromEntries(ALPHA_ACCOUNT_TYPES.map((value) => [value, value])) as { readonly [K in ProviderAccountType]: K };

registerEnumType(AlphaAccountType, { name: 'AlphaAccountType', description: 'What kind of account the alpha provider says it is.' });

@ObjectType({ description: 'An account the person who consented has at the alpha provider.' })
export class AlphaProviderAccount {
  @Field(() => ID, { description: 'The provider’s account id (`1001`): the `id` connectAlphaAccount and POST /connect/account take.' })
  id!: string;

  @Field({ description: 'The account’s name at the provider.' })
  name!: string;

  @Field(() => AlphaAccountType)
  type!: ProviderAccountType;

  @Field({ description: 'Whether this organization already has the account connected (connecting it again answers ACCOUNT_ALREADY_CONNECTED).' })
  connected!: boolean;

  @Field(() => ID, { nullable: true, description: 'Our id of the account when it is connected (the account_id of the other calls); null otherwise.' })
  accountId!: string | null;
}

@ObjectType()
export class AlphaProviderAccountEdge {
  @Field()
  cursor!: string;

  @Field(() => AlphaProviderAccount)
  node!: AlphaProviderAccount;
}

@ObjectType({ description: 'A page of the accounts the person has at the alpha provider, in the provider’s order.' })
export class AlphaProviderAccountConnection {
  @Field(() => [AlphaProviderAccountEdge])
  edges!: AlphaProviderAccountEdge[];

  @Field(() => [AlphaProviderAccount], { description: 'The nodes of the edges, without their cursors.' })
  nodes!: AlphaProviderAccount[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  /** Not a field: how totalCount is found, asked only when it is selected. */
  private count!: () => Promise<number>;

  @Field(() => Int, {
    description:
      'Every account of the person, over all pages. The provider does not say: selected, it reads the rest of the provider’s list (one call per 20 accounts past this page).',
  })
  totalCount(): Promise<number> {
    return this.count();
  }

  static of(page: ConsentAccountsPage): AlphaProviderAccountConnection {
    const edges = page.accounts.map((account) => ({ cursor: account.cursor, node: nodeOf(account) }));
    const connection = new AlphaProviderAccountConnection();
    connection.edges = edges;
    connection.nodes = edges.map((edge) => edge.node);
    connection.pageInfo = {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    };
    connection.count = () => page.totalCount();
    return connection;
  }
}

function nodeOf(account: ConsentAccount): AlphaProviderAccount {
  return { id: account.id, name: account.name, type: account.type, connected: account.accountId !== null, accountId: account.accountId };
}

@ArgsType()
class AlphaConsentAccountsFilter {
  @Field(() => ID, { description: 'The person at the provider (the callback’s alphaId).' })
  alphaId!: string;
}

@ArgsType()
export class AlphaConsentAccountsArgs extends withConnectionArgs(AlphaConsentAccountsFilter) {}
