import { RestCompetitorScanDocument } from '../../generated/graphql';
import { accountIdQuery, defineRoute, query, type RestRecord } from '../route';

const scanParts = ['CompetitorScan.competitors', 'CompetitorScan.client', 'CompetitorScan.dots', 'CompetitorScan.center', 'CompetitorScan.finishedAt'] as const;

/**
 * The document's competitor scan: its mixed names keep their camelCase; the parts below them are written as they
 * are, every key the document lists present (an unknown `website`, `description` or `postDate` is null).
 */
export const scanRecord = {
  times: 'epochMs',
  names: { 'CompetitorScan.placeId': 'placeId', 'CompetitorScan.createdAt': 'createdAt', 'CompetitorScan.finishedAt': 'finishedAt' },
  verbatim: scanParts,
  writesNulls: scanParts,
} as const satisfies Omit<RestRecord, 'at'>;

export const competitorScanRoutes = [
  defineRoute({
    method: 'GET',
    path: '/competitor-scan',
    operationId: 'getCompetitorScan',
    summary: 'The latest competitor scan of the account’s location (or the one with scanId, or of placeId).',
    tag: 'Competitor scan',
    operation: RestCompetitorScanDocument,
    variables: {
      accountId: accountIdQuery,
      scanId: query('scanId', 'this scan'),
      locationId: query('location_id', 'the latest scan of this location'),
      placeId: query('placeId', 'the latest scan of the location with this place id'),
    },
    successStatus: 200,
    payload: { ...scanRecord, at: 'competitorScan' },
    errors: ['NOT_FOUND'],
  }),
];
