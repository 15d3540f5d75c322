import {
  RestCreateLocationDocument,
  RestLocationUpdatesDocument,
  RestLocationsDocument,
  RestUpdateLocationDocument,
} from '../../generated/graphql';
import { restFieldName, type RestNaming } from '../names';
import { accountIdQuery as accountId, bodyFields, defineRoute, query, type RestRecord } from '../route';

/**
 * The document's location names: snake_case, hours items in snake_case too, but the categories object and the
 * more-hours type id in the camelCase it shows, and placeId as written. One naming for bodies and records.
 */
const locationNaming = {
  names: { 'MoreHours.hoursTypeId': 'hoursTypeId', 'MoreHoursInput.hoursTypeId': 'hoursTypeId', 'CreateLocationInput.placeId': 'placeId' },
  verbatim: ['Location.categories', 'UpdateLocationInput.categories'],
} as const satisfies RestNaming;

export const locationRecord = { times: 'epochMs', ...locationNaming } as const satisfies Omit<RestRecord, 'at'>;

/** The document's location update (GET /location/updates). */
export const updateJobRecord = { times: 'epochMs', names: { 'LocationUpdateJob.accountId': 'account' } } as const satisfies Omit<RestRecord, 'at'>;

const tag = 'Locations';

/** GraphQL input field -> body name, for every field of an input (the body's names follow the naming above). */
function fieldsOf(names: readonly string[], naming: RestNaming, typeName: string): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, restFieldName(naming, typeName, name)]));
}

const CREATE_FIELDS = [
  'name', 'referenceId', 'categoryId', 'address', 'postal', 'city', 'countryCode', 'administrativeArea', 'additionalAddressLines',
  'description', 'phoneNumber', 'additionalPhoneNumbers', 'websiteUri', 'latitude', 'longitude', 'profileLogoUrl', 'coverUrl',
  'additionalCategoryIds', 'serviceAreaPlaceIds', 'serviceAreaPlaceNames', 'placeId', 'regularHours', 'specialHours',
] as const;

const UPDATE_FIELDS = [
  'name', 'address', 'postal', 'city', 'countryCode', 'administrativeArea', 'description', 'phoneNumber', 'additionalPhoneNumbers',
  'websiteUri', 'regularHours', 'specialHours', 'moreHours', 'categories', 'serviceItems', 'serviceArea',
] as const;

export const locationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/location',
    operationId: 'createLocation',
    summary: 'Creates a location of the account; a job creates it at the alpha provider (connected once it knows it).',
    tag,
    organizationTokenOnly: true,
    operation: RestCreateLocationDocument,
    variables: { accountId, input: bodyFields(fieldsOf(CREATE_FIELDS, locationNaming, 'CreateLocationInput'), locationNaming) },
    successStatus: 200,
    payload: { ...locationRecord, at: 'createLocation' },
    errors: ['CONFLICT', 'RATE_LIMIT_EXCEEDED'],
  }),
  defineRoute({
    method: 'GET',
    path: '/location',
    operationId: 'listLocations',
    summary: 'Lists locations of the account in creation order.',
    tag,
    operation: RestLocationsDocument,
    variables: {
      accountId,
      storeCode: query('store_code', 'only the location with this store code (reference_id)'),
      page: query('page', '1-based, default 1'),
      perPage: query('per_page', '1 to 250, default 10'),
      skip: query('skip', 'records of the page to leave out: the next_skip of an answer whose page ended early, default 0'),
    },
    successStatus: 200,
    envelope: 'spread',
    payload: {
      ...locationRecord,
      at: 'locationsPage',
      // Only on a page that ended early at its byte budget (docs/locations.md).
      absentWhenNull: ['LocationPage.nextSkip'],
      fieldSelection: { parameter: 'include_fields', list: 'data', always: ['id'], description: 'comma-separated names of the fields to include (id always)' },
      // Up to 250 locations of ~120 values, mostly short strings: the compiled serializer escapes each string in
      // JavaScript on Node 20 (V8 11; its native path needs V8 13.8) and took twice JSON.stringify's time on this
      // page (docs/benchmarks.md, issue 19).
      writer: 'JSON.stringify',
    },
    errors: ['RATE_LIMIT_EXCEEDED'],
  }),
  defineRoute({
    method: 'PATCH',
    path: '/location/update',
    operationId: 'updateLocation',
    summary: 'Updates a location with only the fields that change; poll GET /location/updates for the job.',
    tag,
    operation: RestUpdateLocationDocument,
    variables: {
      accountId,
      locationId: { from: 'query', name: 'location_id', description: 'the location to update', required: true },
      serviceItemsCombination: query('service_items_combination', 'true: new service items join the stored ones; false (default): they replace them'),
      input: bodyFields(fieldsOf(UPDATE_FIELDS, locationNaming, 'UpdateLocationInput'), locationNaming),
    },
    successStatus: 200,
    payload: { ...locationRecord, at: 'updateLocation' },
    // The document writes this route's refusals of input as {success: false, msg}: every 400, malformed input too.
    errorShapes: { 400: 'msg' },
    errors: ['LOCATION_UPDATE_IN_PROGRESS', 'RATE_LIMIT_EXCEEDED'],
  }),
  defineRoute({
    method: 'GET',
    path: '/location/updates',
    operationId: 'listLocationUpdates',
    summary: 'Updates of the account’s locations, newest first.',
    tag,
    operation: RestLocationUpdatesDocument,
    variables: {
      accountId,
      locationId: query('location_id', 'only this location'),
      id: query('id', 'one update, by its id'),
      status: query('status', 'QUEUED, RUNNING, SUCCEEDED or FAILED'),
      page: query('page', '1-based, default 1'),
      perPage: query('per_page', '1 to 100, default 20'),
    },
    successStatus: 200,
    payload: { ...updateJobRecord, at: 'locationUpdateJobs' },
  }),
];
