/**
 * What the demo needs of the beta sandbox that a server mounts in development (dev/provider-sandboxes.ts): a consent
 * approved as its person would approve it on the sandbox's page, so the demo's brand has a company to be pushed to.
 */

/** A body left unread keeps its connection busy: read it to the end. */
async function drained(response: Response): Promise<Response> {
  await response.arrayBuffer();
  return response;
}

/**
 * Approves the consent at `authorizeUrl` (the sandbox's /oauth/authorize, as a client's generate-url answered it) for
 * company `companyId`: posts the page's form (the request's parameters, the company, the decision), then follows the
 * sandbox's redirect to the client's callback. Resolves with where the callback sends the person; throws when a step
 * does not redirect.
 */
export async function approveDemoConsent(authorizeUrl: string, companyId: string): Promise<URL> {
  const page = new URL(authorizeUrl);
  const form = new URLSearchParams(page.searchParams);
  form.set('company', companyId);
  form.set('decision', 'approve');
  const approved = await drained(
    await fetch(new URL(page.pathname, page.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      redirect: 'manual',
    }),
  );
  const toCallback = approved.headers.get('location');
  if (approved.status !== 302 || !toCallback) throw new Error(`the beta sandbox's consent page answered ${approved.status}, not a redirect`);
  const back = await drained(await fetch(toCallback, { redirect: 'manual' }));
  const landed = back.headers.get('location');
  if (!landed) throw new Error(`the consent's callback answered ${back.status}, not a redirect`);
  return new URL(landed);
}
