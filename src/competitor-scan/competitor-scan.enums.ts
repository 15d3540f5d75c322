import { registerEnumType } from 'type-graphql';

/** Where a competitor scan stands, as its job moves it. REST writes the values (lower case), as it always has. */
export enum CompetitorScanStatus {
  QUEUED = 'queued',
  RUNNING = 'running',
  COMPLETED = 'completed',
  FAILED = 'failed',
}

/** A scan in one of these holds a place under SCANS_RUNNING_LIMIT, and its job still has work to do. */
export const UNFINISHED_SCAN_STATUSES = [CompetitorScanStatus.QUEUED, CompetitorScanStatus.RUNNING] as const;

registerEnumType(CompetitorScanStatus, {
  name: 'CompetitorScanStatus',
  valuesConfig: {
    QUEUED: { description: 'Waiting for its job (again, while a failed attempt is retried: `error` says why).' },
    RUNNING: { description: 'Searching at each dot of its grid.' },
    COMPLETED: { description: 'Its figures are in.' },
    FAILED: { description: 'Its retries ran out; `error` says why.' },
  },
});
