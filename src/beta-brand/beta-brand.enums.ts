import { registerEnumType } from 'type-graphql';

/** Whether the beta provider has the brand as we have it. */
export enum BetaSyncStatus {
  /** A change is waiting to be sent. */
  PENDING = 'PENDING',
  SYNCED = 'SYNCED',
  /** The provider refused the change, or its retries ran out; `syncError` says why. */
  FAILED = 'FAILED',
}

export enum OwnershipType {
  BRAND_OWNER = 'BRAND_OWNER',
  FRANCHISEE = 'FRANCHISEE',
}

registerEnumType(BetaSyncStatus, { name: 'BetaSyncStatus' });
registerEnumType(OwnershipType, { name: 'OwnershipType' });
