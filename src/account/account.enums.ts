import { registerEnumType } from 'type-graphql';

/** Where the import of an account from the alpha provider (its locations and reviews) stands. */
export enum AccountSyncStatus {
  /** Never imported: the account was made here. */
  NONE = 'NONE',
  QUEUED = 'QUEUED',
  RUNNING = 'RUNNING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
}

export const SYNC_IN_PROGRESS = [AccountSyncStatus.QUEUED, AccountSyncStatus.RUNNING] as const;

registerEnumType(AccountSyncStatus, { name: 'AccountSyncStatus' });
