import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122031722_Initial } from './Migration20261122031722_Initial';
import { Migration20261122034638_Posts } from './Migration20261122034638_Posts';
import { Migration20261123000000_UsageCounter } from './Migration20261123000000_UsageCounter';
import { Migration20261124041256_Locations } from './Migration20261124041256_Locations';
import { Migration20261124045725_Connections } from './Migration20261124045725_Connections';
import { Migration20261124053448_BetaBrandsAndScans } from './Migration20261124053448_BetaBrandsAndScans';
import { Migration20261124120000_ReviewReplies } from './Migration20261124120000_ReviewReplies';
import { Migration20261125000000_WorkBounds } from './Migration20261125000000_WorkBounds';
import { Migration20261125000100_LocationRecordBytes } from './Migration20261125000100_LocationRecordBytes';
import { Migration20261126000000_CompetitorScanStatus } from './Migration20261126000000_CompetitorScanStatus';
import { Migration20261126010000_AsyncWork } from './Migration20261126010000_AsyncWork';
import { Migration20261127000000_ActivityEvents } from './Migration20261127000000_ActivityEvents';
import { Migration20261127025111_Webhooks } from './Migration20261127025111_Webhooks';
import { Migration20261128000000_ModuleKinds } from './Migration20261128000000_ModuleKinds';
import { Migration20261129000000_WebhookAllEventTypes } from './Migration20261129000000_WebhookAllEventTypes';
import { Migration20261130000000_RefusalsInStatements } from './Migration20261130000000_RefusalsInStatements';
import { Migration20261130000100_EventStreams } from './Migration20261130000100_EventStreams';
import { Migration20261130000200_WorkHistory } from './Migration20261130000200_WorkHistory';
import { Migration20261201100000_WorkWaits } from './Migration20261201100000_WorkWaits';
import { Migration20261202090000_ProviderBudgets } from './Migration20261202090000_ProviderBudgets';
import { Migration20261203000000_ScansRunningInStatements } from './Migration20261203000000_ScansRunningInStatements';

/** Every migration, in order. `npm run migration:create` appends new ones here. */
export const migrations: MigrationObject[] = [
  { name: 'Migration20261122031722_Initial', class: Migration20261122031722_Initial },
  { name: 'Migration20261122034638_Posts', class: Migration20261122034638_Posts },
  { name: 'Migration20261123000000_UsageCounter', class: Migration20261123000000_UsageCounter },
  { name: 'Migration20261124041256_Locations', class: Migration20261124041256_Locations },
  { name: 'Migration20261124045725_Connections', class: Migration20261124045725_Connections },
  { name: 'Migration20261124053448_BetaBrandsAndScans', class: Migration20261124053448_BetaBrandsAndScans },
  { name: 'Migration20261124120000_ReviewReplies', class: Migration20261124120000_ReviewReplies },
  { name: 'Migration20261125000000_WorkBounds', class: Migration20261125000000_WorkBounds },
  { name: 'Migration20261125000100_LocationRecordBytes', class: Migration20261125000100_LocationRecordBytes },
  { name: 'Migration20261126000000_CompetitorScanStatus', class: Migration20261126000000_CompetitorScanStatus },
  { name: 'Migration20261126010000_AsyncWork', class: Migration20261126010000_AsyncWork },
  { name: 'Migration20261127000000_ActivityEvents', class: Migration20261127000000_ActivityEvents },
  { name: 'Migration20261127025111_Webhooks', class: Migration20261127025111_Webhooks },
  { name: 'Migration20261128000000_ModuleKinds', class: Migration20261128000000_ModuleKinds },
  { name: 'Migration20261129000000_WebhookAllEventTypes', class: Migration20261129000000_WebhookAllEventTypes },
  { name: 'Migration20261130000000_RefusalsInStatements', class: Migration20261130000000_RefusalsInStatements },
  { name: 'Migration20261130000100_EventStreams', class: Migration20261130000100_EventStreams },
  { name: 'Migration20261130000200_WorkHistory', class: Migration20261130000200_WorkHistory },
  { name: 'Migration20261201100000_WorkWaits', class: Migration20261201100000_WorkWaits },
  { name: 'Migration20261202090000_ProviderBudgets', class: Migration20261202090000_ProviderBudgets },
  { name: 'Migration20261203000000_ScansRunningInStatements', class: Migration20261203000000_ScansRunningInStatements },
];
