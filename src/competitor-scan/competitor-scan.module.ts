import { defineWorkType } from '../async-work/work-type.resolver';
import { defineWorkKind } from '../async-work/work-kinds';
import { defineModule } from '../resource-module';
import { CompetitorScan } from './competitor-scan.entity';
import { scanRecordType, scanStatusChanged } from './competitor-scan.events';
import { scanQueue } from './competitor-scan.queues';
import { CompetitorScanResolver } from './competitor-scan.resolver';
import { scanWorkers } from './competitor-scan.worker';

const scanWork = defineWorkType({ name: 'CompetitorScanWork', description: 'A competitor scan.', field: 'scan', record: CompetitorScan });

export const competitorScanModule = defineModule({
  name: 'competitor-scan',
  entities: [CompetitorScan],
  resolvers: [CompetitorScanResolver],
  queues: [scanQueue],
  // A failed scan is settled by starting a new one.
  workKinds: [defineWorkKind({ name: 'COMPETITOR_SCAN', type: scanWork })],
  recordTypes: [scanRecordType],
  eventTypes: [scanStatusChanged],
  workers: scanWorkers,
});
