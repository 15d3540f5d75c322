import { registerEnumType } from 'type-graphql';

/** Where a reply stands in the provider's moderation (the document's reviewReplyState). */
export enum ReviewReplyState {
  PENDING = 'PENDING',
  ACTIVE = 'ACTIVE',
  REJECTED = 'REJECTED',
}

registerEnumType(ReviewReplyState, {
  name: 'ReviewReplyState',
  valuesConfig: {
    PENDING: { description: 'Sent; the provider is moderating it.' },
    ACTIVE: { description: 'Approved: shown with the review.' },
    REJECTED: { description: 'Refused by the moderation.' },
  },
});
