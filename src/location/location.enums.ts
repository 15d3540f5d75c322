import { registerEnumType } from 'type-graphql';

export enum LocationUpdateStatus {
  QUEUED = 'QUEUED',
  RUNNING = 'RUNNING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
}

/** An update in one of these blocks another for the same location (409). */
export const UNFINISHED_UPDATE_STATUSES = [LocationUpdateStatus.QUEUED, LocationUpdateStatus.RUNNING] as const;

/**
 * The fields an update may change. The values are the document's names, which REST writes (an update job's
 * `fields`); GraphQL shows the names.
 */
export enum LocationUpdateField {
  NAME = 'name',
  ADDRESS = 'address',
  POSTAL = 'postal',
  CITY = 'city',
  COUNTRY_CODE = 'country_code',
  ADMINISTRATIVE_AREA = 'administrative_area',
  DESCRIPTION = 'description',
  PHONE_NUMBER = 'phone_number',
  ADDITIONAL_PHONE_NUMBERS = 'additional_phone_numbers',
  WEBSITE_URI = 'website_uri',
  REGULAR_HOURS = 'regular_hours',
  SPECIAL_HOURS = 'special_hours',
  MORE_HOURS = 'more_hours',
  CATEGORIES = 'categories',
  SERVICE_ITEMS = 'service_items',
  SERVICE_AREA = 'service_area',
}

/** Citations of a location: disabled only from ACTIVE, in one step (DISABLING is kept for locations an earlier version left in it). */
export enum CitationsStatus {
  ACTIVE = 'ACTIVE',
  DISABLING = 'DISABLING',
  DISABLED = 'DISABLED',
}

registerEnumType(LocationUpdateStatus, {
  name: 'LocationUpdateStatus',
  valuesConfig: {
    QUEUED: { description: 'Waiting for its job.' },
    RUNNING: { description: 'Being sent to the alpha provider.' },
    SUCCEEDED: { description: 'Applied (at the provider, or at once for a location it does not know yet).' },
    FAILED: { description: 'Refused by the provider, or its retries ran out; `error` says why.' },
  },
});
registerEnumType(LocationUpdateField, { name: 'LocationUpdateField' });
