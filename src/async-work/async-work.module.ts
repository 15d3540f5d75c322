import { defineModule } from '../resource-module';
import { AsyncWorkAttempt } from './async-work-attempt.entity';
import { AsyncWorkRecord } from './async-work.entity';
import { AsyncWorkResolver } from './async-work.resolver';

/** The one view of asynchronous work: the ledger the job engine writes, listed, counted, followed and retried. */
export const asyncWorkModule = defineModule({
  name: 'async-work',
  entities: [AsyncWorkRecord, AsyncWorkAttempt],
  resolvers: [AsyncWorkResolver],
});
