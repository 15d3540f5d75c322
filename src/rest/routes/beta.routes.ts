import { RestBetaBrandDocument, RestDeleteBetaBrandDocument, RestGenerateBetaUrlDocument, RestUpdateBetaBrandDocument } from '../../generated/graphql';
import { body, bodyFields, defineRoute, path, type RestRecord } from '../route';

/** The document's beta brand: snake_case, created_at and updated_at as ISO 8601 strings. */
export const brandRecord = { times: 'iso' } as const satisfies Omit<RestRecord, 'at'>;
const segmentId = path('segment_id', 'brand-<uuid>');
const betaErrors = ['BETA_API_DISABLED', 'ORGANIZATION_TOKEN_REQUIRED'] as const;

export const betaRoutes = [
  defineRoute({
    method: 'POST',
    path: '/oauth/beta/generate-url',
    operationId: 'generateBetaConsentUrl',
    summary: 'The beta provider’s consent URL; the person returns to redirect_url with success=true, state and company_id.',
    tag: 'Beta account connection',
    organizationTokenOnly: true,
    operation: RestGenerateBetaUrlDocument,
    variables: {
      redirectUrl: body('redirect_url', 'where the person returns: an absolute https URL'),
      state: body('state', 'echoed back on the final redirect; at most 1024 characters'),
    },
    successStatus: 200,
    envelope: 'spread',
    payload: { times: 'iso', at: 'generateBetaConsentUrl' },
    errors: [...betaErrors, 'RATE_LIMIT_EXCEEDED'],
  }),
  defineRoute({
    method: 'GET',
    path: '/beta/brands/:segment_id',
    operationId: 'getBetaBrand',
    summary: 'One beta brand.',
    tag: 'Beta brands',
    organizationTokenOnly: true,
    operation: RestBetaBrandDocument,
    variables: { segmentId },
    successStatus: 200,
    payload: { ...brandRecord, at: 'betaBrand' },
    errors: [...betaErrors, 'NOT_FOUND'],
  }),
  defineRoute({
    method: 'PATCH',
    path: '/beta/brands/:segment_id',
    operationId: 'updateBetaBrand',
    summary: 'Changes a beta brand (at least one field); a job pushes the change to the provider.',
    tag: 'Beta brands',
    organizationTokenOnly: true,
    operation: RestUpdateBetaBrandDocument,
    variables: {
      segmentId,
      input: bodyFields({
        brandName: 'brand_name',
        countryCode: 'country_code',
        primaryCategory: 'primary_category',
        additionalCategories: 'additional_categories',
        websiteUrl: 'website_url',
        appStoreUrl: 'app_store_url',
        useLocationName: 'use_location_name',
        sendActionLinks: 'send_action_links',
        ownershipType: 'ownership_type',
        betaCompanyId: 'beta_company_id',
        segmentId: 'segment_id',
      }),
    },
    successStatus: 200,
    payload: { ...brandRecord, at: 'updateBetaBrand' },
    errors: [...betaErrors, 'NOT_FOUND'],
  }),
  defineRoute({
    method: 'DELETE',
    path: '/beta/brands/:segment_id',
    operationId: 'deleteBetaBrand',
    summary: 'Deletes a beta brand; 409 while locations are attached.',
    tag: 'Beta brands',
    organizationTokenOnly: true,
    operation: RestDeleteBetaBrandDocument,
    variables: { segmentId },
    successStatus: 200,
    payload: { times: 'iso', at: 'deleteBetaBrand' },
    errors: [...betaErrors, 'NOT_FOUND', 'CONFLICT'],
  }),
];
