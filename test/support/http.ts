import { checkAgainstOpenApi } from './openapi-check';

/** Small HTTP helpers over fetch: the tests speak to the server as any client would. */

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function http<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: the test sees the text.
  }
  await checkAgainstOpenApi(baseUrl, method, path, response.status, parsed);
  return { status: response.status, headers: response.headers, body: parsed as T };
}

export async function graphql<T = any>(
  baseUrl: string,
  query: string,
  options: { token?: string; variables?: Record<string, unknown> } = {},
): Promise<JsonResponse<{ data?: T; errors?: { message: string; extensions?: { code?: string } }[] }>> {
  return http(baseUrl, 'POST', '/graphql', { token: options.token, body: { query, variables: options.variables } });
}
