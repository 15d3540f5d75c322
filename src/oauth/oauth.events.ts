import { accountRecordType } from '../account/account.events';
import { defineEventType } from '../activity/activity.enums';

export const accountConnected = defineEventType({ name: 'account.connected', key: 'ACCOUNT_CONNECTED', record: accountRecordType });
export const accountDisconnected = defineEventType({ name: 'account.disconnected', key: 'ACCOUNT_DISCONNECTED', record: accountRecordType });
export const accountReconnected = defineEventType({ name: 'account.reconnected', key: 'ACCOUNT_RECONNECTED', record: accountRecordType });
