import { defineEventType, defineRecordType } from '../activity/activity.enums';
import { BetaBrand } from './beta-brand.entity';

export const brandRecordType = defineRecordType({ name: 'beta_brand', key: 'BETA_BRAND', entity: BetaBrand });

export const brandSyncStatusChanged = defineEventType({
  name: 'beta_brand.sync_status_changed',
  key: 'BETA_BRAND_SYNC_STATUS_CHANGED',
  record: brandRecordType,
});
