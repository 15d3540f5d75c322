import { registerEnumType } from 'type-graphql';
import { ALPHA_ACTION_TYPES, ALPHA_TOPIC_TYPES, type AlphaActionType, type AlphaTopicType } from '../providers/alpha/alpha.types';

/** An enum object (`TopicType.EVENT`) over the provider's own list of values, so that list stays the only one. */
function enumOf<const T extends readonly string[]>(values: T): { readonly [K in T[number]]: K } {
  return Object.fromEntries(values.map((value) => [value, value])) as { readonly [K in T[number]]: K };
}

export enum PostState {
  SENDING = 'SENDING',
  SCHEDULED = 'SCHEDULED',
  LIVE = 'LIVE',
  PROCESSING = 'PROCESSING',
  REJECTED = 'REJECTED',
  ERROR = 'ERROR',
  DELETED = 'DELETED',
}

/** Where a post was created: the dashboard (GraphQL) or the external REST interface. REST shows lower case. */
export enum PostSource {
  APP = 'app',
  EXTERNAL_API = 'external_api',
}

/** The provider's topic types: what a post's content is. */
export const TopicType = enumOf(ALPHA_TOPIC_TYPES);
export type TopicType = AlphaTopicType;

/** The provider's call-to-action buttons. */
export const ActionType = enumOf(ALPHA_ACTION_TYPES);
export type ActionType = AlphaActionType;

registerEnumType(PostState, { name: 'PostState' });
registerEnumType(PostSource, {
  name: 'PostSource',
  valuesConfig: { APP: { description: 'dashboard posts (GraphQL)' }, EXTERNAL_API: { description: 'REST posts' } },
});
registerEnumType(TopicType, { name: 'TopicType' });
registerEnumType(ActionType, { name: 'ActionType' });
