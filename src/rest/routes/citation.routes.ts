import { RestDisableCitationsDocument } from '../../generated/graphql';
import { accountIdQuery as accountId, body, defineRoute } from '../route';

/** POST /citations/disable (src/rest/operations/citation.graphql). */
export const citationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/citations/disable',
    operationId: 'disableCitations',
    summary: 'Disables the citations of a location (only from ACTIVE, one request at a time). Needs citations API access.',
    tag: 'Citations',
    operation: RestDisableCitationsDocument,
    variables: { accountId, locationId: body('location_id', 'the location whose citations to disable') },
    successStatus: 200,
    missingFieldsError: true,
    payload: { times: 'epochMs', at: 'disableCitations' },
    errors: ['MISSING_FIELDS', 'CITATIONS_API_DISABLED', 'NOT_ACTIVE', 'IN_PROGRESS', 'RATE_LIMIT_EXCEEDED'],
  }),
];
