import { Entity, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { newId } from '../shared/ids';

@ObjectType({ description: 'A customer organization: it owns accounts, and through them locations.' })
@Entity({ tableName: 'organization' })
export class Organization {
  [OptionalProps]?: 'id' | 'owners' | 'state' | 'betaApi' | 'citationsApi' | 'createdAt';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field(() => [String], { description: 'User ids of the owners.' })
  @Property({ type: 'text[]' })
  owners: string[] = [];

  @Field({ description: 'Lifecycle state; ACTIVE for every organization today.' })
  @Property({ type: 'text' })
  state: string = 'ACTIVE';

  @Field({ description: 'Whether the beta provider operations are enabled.' })
  @Property({ type: 'boolean' })
  betaApi: boolean = false;

  @Field({ description: 'Whether citations can be disabled through the API.' })
  @Property({ type: 'boolean' })
  citationsApi: boolean = false;

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
