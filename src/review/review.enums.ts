import { registerEnumType } from 'type-graphql';

/** Where a reply stands in the provider's moderation (the document's reviewReplyState). */
export enum ReviewReplyState {
  PENDING = 'PENDING',
  ACTIVE = 'ACTIVE',
  REJECTED = 'REJECTED',
  /** Not the document's: the reply could not be sent, or its moderation not followed (see replyError). */
  FAILED = 'FAILED',
}

registerEnumType(ReviewReplyState, {
  name: 'ReviewReplyState',
  valuesConfig: {
    PENDING: { description: 'Sent; the provider is moderating it.' },
    ACTIVE: { description: 'Approved: shown with the review.' },
    REJECTED: { description: 'Refused by the moderation.' },
    FAILED: { description: 'The reply could not be sent, or its moderation could not be followed: replyError says why. A new reply may be sent.' },
  },
});
