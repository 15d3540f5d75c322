import { registerEnumType } from 'type-graphql';

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

export enum TopicType {
  STANDARD = 'STANDARD',
  EVENT = 'EVENT',
  OFFER = 'OFFER',
  ALERT = 'ALERT',
}

export enum ActionType {
  BOOK = 'BOOK',
  ORDER = 'ORDER',
  SHOP = 'SHOP',
  LEARN_MORE = 'LEARN_MORE',
  SIGN_UP = 'SIGN_UP',
  CALL = 'CALL',
}

registerEnumType(PostState, { name: 'PostState' });
registerEnumType(PostSource, {
  name: 'PostSource',
  valuesConfig: { APP: { description: 'dashboard posts (GraphQL)' }, EXTERNAL_API: { description: 'REST posts' } },
});
registerEnumType(TopicType, { name: 'TopicType' });
registerEnumType(ActionType, { name: 'ActionType' });
