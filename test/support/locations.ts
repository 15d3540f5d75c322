import { eventually } from './posts';
import { http } from './http';

/**
 * Waits until every location of the account is connected to the alpha provider, as GET /location shows it: new
 * locations (the demo's too) are created at the provider by a job.
 */
export async function waitUntilConnected(baseUrl: string, token: string, accountId: string, timeoutMs = 60000): Promise<void> {
  await eventually(
    async () => {
      const answer = await http(baseUrl, 'GET', `/location?account_id=${accountId}&per_page=250&include_fields=connected`, { token });
      return answer.status === 200 && answer.body.data.every((location: { connected: boolean }) => location.connected) ? true : undefined;
    },
    timeoutMs,
    `the locations of account ${accountId} to be connected`,
  );
}

/** The smallest body POST /location takes (the document's required create fields), with `overrides`. */
export const minimalLocationBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'Corner Shop',
  category_id: 'gcid:convenience_store',
  country_code: 'US',
  address: '1 Main Street',
  city: 'Springfield',
  postal: '12345',
  ...overrides,
});
