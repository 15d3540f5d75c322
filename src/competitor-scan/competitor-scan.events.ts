import { defineEventType, defineRecordType } from '../activity/activity.enums';
import { CompetitorScan } from './competitor-scan.entity';

export const scanRecordType = defineRecordType({ name: 'competitor_scan', key: 'COMPETITOR_SCAN', entity: CompetitorScan });

export const scanStatusChanged = defineEventType({ name: 'competitor_scan.status_changed', key: 'COMPETITOR_SCAN_STATUS_CHANGED', record: scanRecordType });
