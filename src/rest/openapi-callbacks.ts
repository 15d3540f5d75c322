import { errorResponsesFor } from './openapi-errors';
import { headerRef, REQUEST_ID_PARAMETER_REF } from './openapi-headers';

/**
 * The consent flows' redirects, which are not routes of the table (src/rest/routes/oauth-callbacks.ts serves them):
 * - the identity providers' redirects back to us, `GET /oauth/alpha/callback` and `GET /oauth/beta/callback`: a
 *   person's browser follows them, without a token;
 * - where those send the person on: the caller's `redirect_url`, with the outcome in its query (the interface
 *   document's tables), described as an OpenAPI callback of the generate-url operation that named it.
 */

interface Provider {
  /** The route that starts the consent, whose body names the redirect_url. */
  startedBy: string;
  tag: string;
  operationId: string;
  /** The query parameters the provider's redirect carries to us. */
  reads: { name: string; description: string }[];
  /** The query parameters of a completed consent, on the caller's redirect_url. */
  success: { name: string; description: string; schema: Record<string, unknown> }[];
  /** The values of `error` on the caller's redirect_url, with what each means. */
  errors: Record<string, string>;
}

const PROVIDERS: Record<'alpha' | 'beta', Provider> = {
  alpha: {
    startedBy: '/oauth/alpha/generate-url',
    tag: 'Alpha account connection',
    operationId: 'alphaConsentCallback',
    reads: [
      { name: 'state', description: 'our single-use state of the consent (not the caller’s)' },
      { name: 'code', description: 'the authorization code, exchanged with the PKCE verifier' },
      { name: 'scope', description: 'the permissions granted (space-separated)' },
      { name: 'error', description: 'the identity provider’s error, when the person did not consent' },
    ],
    success: [
      { name: 'uid', description: 'user identifier: the text null for the external interface', schema: { type: 'string', enum: ['null'] } },
      { name: 'alphaId', description: 'the identity-provider user id: POST /connect/account takes it', schema: { type: 'string' } },
      { name: 'billing_id', description: 'the organization id', schema: { type: 'string' } },
      { name: 'token_refreshed', description: 'whether a refresh token was obtained', schema: { type: 'boolean' } },
      { name: 'external_api', description: 'always true', schema: { type: 'boolean', enum: [true] } },
      { name: 'state', description: 'the state given to generate-url, unchanged', schema: { type: 'string' } },
    ],
    errors: {
      access_denied: 'the person declined consent',
      invalid_state: 'the consent was already used, or expired',
      invalid_grant: 'the business-management permission was not granted',
      oauth_error: 'unexpected failure while processing the callback',
    },
  },
  beta: {
    startedBy: '/oauth/beta/generate-url',
    tag: 'Beta account connection',
    operationId: 'betaConsentCallback',
    reads: [
      { name: 'state', description: 'our single-use state of the consent (not the caller’s)' },
      { name: 'code', description: 'the authorization code' },
      { name: 'error', description: 'the beta provider’s error, when the person did not consent' },
    ],
    success: [
      { name: 'success', description: 'always true', schema: { type: 'boolean', enum: [true] } },
      { name: 'state', description: 'the state given to generate-url, unchanged (empty when none was)', schema: { type: 'string' } },
      { name: 'company_id', description: 'the linked company: createBetaBrand takes it as beta_company_id', schema: { type: 'string' } },
    ],
    errors: {
      access_denied: 'consent declined, or the beta provider returned an OAuth error',
      missing_code: 'the redirect came without an authorization code',
      invalid_state: 'the consent was already used, or expired',
      token_exchange_failed: 'the token exchange failed',
      provisioning_failed: 'the connection succeeded but no company was linked',
    },
  },
};

function errorTable(errors: Record<string, string>): string {
  return Object.entries(errors).map(([value, meaning]) => `- \`${value}\`: ${meaning}`).join('\n');
}

/** `GET /oauth/<provider>/callback`: the provider's redirect back to us, answered by a redirect to the caller's redirect_url. */
function callbackPath(name: 'alpha' | 'beta', provider: Provider): Record<string, unknown> {
  return {
    get: {
      operationId: provider.operationId,
      summary: `Where the ${name} provider sends the person back after consent; no token (the state ties it to the consent).`,
      description:
        `Not called by API clients: the person’s browser follows the provider’s redirect here. The consent is taken once; ` +
        `the answer sends the browser on to the redirect_url given to POST ${provider.startedBy}, with the outcome in its query ` +
        `(that operation’s callback). A state that names no consent has nowhere to go: 400, as a small HTML page to a browser ` +
        `(Accept preferring text/html), the JSON body to anyone else; so are the other refusals.`,
      tags: [provider.tag],
      security: [],
      parameters: [
        ...provider.reads.map((read) => ({ name: read.name, in: 'query', required: false, description: read.description, schema: { type: 'string' } })),
        REQUEST_ID_PARAMETER_REF,
      ],
      responses: {
        '302': {
          description: 'On to the caller’s redirect_url, with the outcome in its query parameters.',
          headers: {
            Location: { description: 'the redirect_url with the outcome’s parameters', required: true, schema: { type: 'string', format: 'uri' } },
            'X-Request-Id': headerRef('X-Request-Id'),
          },
        },
        ...errorResponsesFor(['BAD_REQUEST', 'URI_TOO_LONG', 'REQUEST_HEADERS_TOO_LARGE', 'INTERNAL_SERVER_ERROR', 'SERVICE_UNAVAILABLE'], {
          alsoHtml: 'a self-contained page telling the person what happened and what to do (no script, strict CSP)',
        }),
      },
    },
  };
}

/** The outcome of the consent on the caller's redirect_url: an OpenAPI callback of the generate-url operation. */
function consentOutcome(name: 'alpha' | 'beta', provider: Provider): Record<string, unknown> {
  return {
    consentOutcome: {
      '{$request.body#/redirect_url}': {
        get: {
          summary: `The person lands on redirect_url with the ${name} consent’s outcome`,
          description:
            `A browser redirect (302) from GET /oauth/${name}/callback, not a request of this service: the caller’s page reads the query. ` +
            `A completed consent carries ${provider.success.map((parameter) => parameter.name).join(', ')}; a failed one carries error and state. ` +
            `Values of error:\n${errorTable(provider.errors)}`,
          parameters: [
            ...provider.success.map((parameter) => ({ name: parameter.name, in: 'query', required: false, description: parameter.description, schema: parameter.schema })),
            ...(provider.success.some((parameter) => parameter.name === 'error')
              ? []
              : [{ name: 'error', in: 'query', required: false, description: 'the consent failed', schema: { type: 'string', enum: Object.keys(provider.errors) } }]),
          ],
          responses: { '200': { description: 'Whatever the caller’s page answers.' } },
        },
      },
    },
  };
}

/** The two callback paths, by OpenAPI path. */
export function oauthCallbackPaths(): Record<string, Record<string, unknown>> {
  return Object.fromEntries((['alpha', 'beta'] as const).map((name) => [`/oauth/${name}/callback`, callbackPath(name, PROVIDERS[name])]));
}

/** The `callbacks` of the operation of `path`, if it starts a consent. */
export function consentCallbacks(method: string, path: string): Record<string, unknown> | undefined {
  if (method !== 'POST') return undefined;
  const found = (['alpha', 'beta'] as const).find((name) => PROVIDERS[name].startedBy === path);
  return found ? consentOutcome(found, PROVIDERS[found]) : undefined;
}
