import { accountRecordType } from '../account/account.events';
import { defineEventType } from '../activity/activity.enums';

export const importProgressed = defineEventType({ name: 'account.import_progressed', key: 'ACCOUNT_IMPORT_PROGRESSED', record: accountRecordType });
export const importEnded = defineEventType({ name: 'account.import_ended', key: 'ACCOUNT_IMPORT_ENDED', record: accountRecordType });
