import { formOf, submit, visit, type Hop } from './browser';
import { graphql, http } from './http';
import { eventually } from './posts';

/** The consent flow as a person's browser goes through it, hop by hop (test/support/browser.ts). */

export const BUSINESS_SCOPE = 'https://www.googleapis.com/auth/business.manage';

export interface ConsentRun {
  /** generate-url's answer. */
  consentUrl: string;
  /** The identity provider's redirect to our callback. */
  toCallback: Hop;
  /** Our callback's answer: a redirect to the caller's redirect_url (or a refusal). */
  fromCallback: Hop;
  /** The query parameters of the caller's redirect_url as the person lands there. */
  landed: URLSearchParams;
}

export async function generateUrl(baseUrl: string, token: string, body: Record<string, unknown>) {
  return http(baseUrl, 'POST', '/oauth/alpha/generate-url', { token, body });
}

/**
 * generate-url, the consent page, the person's choice, the provider's redirect and our callback's: returns every
 * hop. `person` is a sandbox identity's sub; `grant` the scopes left ticked (default all); `decline` declines.
 */
export async function runConsent(
  baseUrl: string,
  token: string,
  options: { redirectUrl?: string; state?: string; person?: string; grant?: (scopes: string[]) => string[]; decline?: boolean } = {},
): Promise<ConsentRun> {
  const generated = await generateUrl(baseUrl, token, { redirect_url: options.redirectUrl ?? 'https://app.example/return', state: options.state });
  if (generated.status !== 200) throw new Error(`generate-url answered ${generated.status}: ${JSON.stringify(generated.body)}`);
  const consentUrl = generated.body.url as string;
  const page = await visit(consentUrl);
  if (page.status !== 200) throw new Error(`the consent page answered ${page.status}: ${page.body.slice(0, 300)}`);
  const form = formOf(page.body, consentUrl);
  const toCallback = await submit(form, {
    button: ['decision', options.decline ? 'decline' : 'approve'],
    select: options.person ?? 'alpha-user-alice',
    checked: { grant: (options.grant ?? ((all) => all))(form.checked.grant ?? []) },
  });
  if (toCallback.status !== 302 || !toCallback.location) throw new Error(`the consent did not redirect: ${toCallback.status} ${toCallback.body.slice(0, 300)}`);
  const fromCallback = await visit(toCallback.location);
  const landed = fromCallback.location ? new URL(fromCallback.location).searchParams : new URLSearchParams();
  return { consentUrl, toCallback, fromCallback, landed };
}

/** connect after a consent, with the callback's parameters, as the document has the caller do. */
export async function connect(baseUrl: string, token: string, landed: URLSearchParams, accountId: string, state?: string) {
  const query = new URLSearchParams({
    uid: landed.get('uid') ?? 'null',
    alphaId: landed.get('alphaId') ?? '',
    id: accountId,
    billing_id: landed.get('billing_id') ?? '',
    external_api: 'true',
    ...(state ?? landed.get('state') ? { state: (state ?? landed.get('state'))! } : {}),
  });
  return http(baseUrl, 'POST', `/connect/account?${query}`, { token });
}

/** Until the account's import has ended; returns its sync status and progress as GraphQL shows them. */
export async function importEnded(baseUrl: string, token: string, accountId: string): Promise<{ syncStatus: string; syncProgress: { locations: number; reviews: number } | null; syncError: string | null }> {
  return eventually(async () => {
    const answer = await graphql(baseUrl, `query ($id: ID) { account(id: $id) { syncStatus syncProgress { locations reviews } syncError } }`, { token, variables: { id: accountId } });
    const account = answer.body.data?.account;
    return account && (account.syncStatus === 'SUCCEEDED' || account.syncStatus === 'FAILED') ? account : undefined;
  }, 30000, `the import of account ${accountId}`);
}

/** A consent as Alice, then her account 1001 connected and imported: its id here. */
export async function connectAlice(baseUrl: string, token: string): Promise<string> {
  const consent = await runConsent(baseUrl, token, { state: `alice-${Date.now()}` });
  const connected = await connect(baseUrl, token, consent.landed, '1001');
  const url = new URL(connected.body.url);
  if (url.searchParams.get('status') !== 'success') throw new Error(`connect failed: ${connected.body.url}`);
  const accountId = url.searchParams.get('alpha_profile_id')!;
  const ended = await importEnded(baseUrl, token, accountId);
  if (ended.syncStatus !== 'SUCCEEDED') throw new Error(`the import failed: ${ended.syncError}`);
  return accountId;
}
