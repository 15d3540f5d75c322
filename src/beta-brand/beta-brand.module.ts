import { defineWorkType } from '../async-work/work-type.resolver';
import { defineWorkKind } from '../async-work/work-kinds';
import { defineModule } from '../resource-module';
import { BetaBrand } from './beta-brand.entity';
import { brandRecordType, brandSyncStatusChanged } from './beta-brand.events';
import { brandSyncQueue } from './beta-brand.queues';
import { BetaBrandResolver } from './beta-brand.resolver';
import { brandWorkers } from './beta-brand.worker';

const brandWork = defineWorkType({ name: 'BetaBrandWork', description: 'A beta brand sent to the provider.', field: 'brand', record: BetaBrand });

export const betaBrandModule = defineModule({
  name: 'beta-brand',
  entities: [BetaBrand],
  resolvers: [BetaBrandResolver],
  queues: [brandSyncQueue],
  // A failed sync is settled by editing the brand, which syncs it again.
  workKinds: [defineWorkKind({ name: 'BETA_BRAND_SYNC', type: brandWork })],
  recordTypes: [brandRecordType],
  eventTypes: [brandSyncStatusChanged],
  workers: brandWorkers,
});
