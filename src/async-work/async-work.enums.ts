import { registerEnumType } from 'type-graphql';
import { ComposedEnum } from '../shared/composed-enum';
import { AsyncWorkStatus } from '../jobs/work-ledger';

// The status enum is the job engine's (it writes the records); here it becomes GraphQL's.
export { AsyncWorkStatus };

/** The kinds, as the modules declare them (src/async-work/work-kinds.ts). */
export const AsyncWorkKindEnum = new ComposedEnum(
  'AsyncWorkKind',
  'What a unit of asynchronous work does (docs/async-work.md lists the record each is about).',
);

registerEnumType(AsyncWorkStatus, {
  name: 'AsyncWorkStatus',
  valuesConfig: {
    QUEUED: { description: 'Waiting for a worker.' },
    RUNNING: { description: 'A worker is on it.' },
    RETRYING: { description: 'An attempt failed (`error` says why); it will be tried again.' },
    SUCCEEDED: { description: 'Done.' },
    FAILED: { description: 'Failed for good: trying again would give the same answer (`error` says why).' },
    DEAD_LETTERED: { description: 'Its retries ran out (`error` says why); an organization token may retry it.' },
  },
});
