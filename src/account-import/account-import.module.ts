import { Account } from '../account/account.entity';
import { defineWorkType } from '../async-work/work-type.resolver';
import { defineWorkKind, retryWith } from '../async-work/work-kinds';
import { defineModule } from '../resource-module';
import { importEnded, importProgressed } from './account-import.events';
import { accountImportQueue } from './account-import.queues';
import { accountImportWorkers, enqueueOwedImports, reopenImport } from './account-import.worker';

const accountWork = defineWorkType({ name: 'AccountWork', description: "An account's import of its locations and reviews.", field: 'account', record: Account });

/** The import of a connected account's locations and reviews from the alpha provider. */
export const accountImportModule = defineModule({
  name: 'account-import',
  queues: [accountImportQueue],
  workKinds: [defineWorkKind({ name: 'ACCOUNT_IMPORT', type: accountWork, retry: retryWith(accountImportQueue, reopenImport) })],
  eventTypes: [importProgressed, importEnded],
  workers: accountImportWorkers,
  // Accounts made where no job could be queued (the CLI's demo seed) are imported once workers run.
  catchUp: enqueueOwedImports,
});
