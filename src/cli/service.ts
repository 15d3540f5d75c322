import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { DEMO_FILE, type DemoSeed } from '../demo/demo.seed';
import { CommandFailed, UsageError } from './cli-errors';

/**
 * The running service the API commands (`webhooks …`) talk to, as a client does: its URL and an organization token.
 * They need no database of their own, so they work against any service they can reach.
 */
export interface Service {
  url: string;
  token: string;
}

/**
 * `--url`, else LISTINGS_URL, else where `npm start` listens (HOST, PORT); `--token`, else LISTINGS_TOKEN, else
 * outside production the demo organization's, from DATA_DIR/demo.json as `npm start` prints it.
 */
export function serviceOf(config: Config, values: { url?: string; token?: string }): Service {
  const url = (values.url ?? process.env.LISTINGS_URL ?? `http://${config.host}:${config.port}`).replace(/\/+$/, '');
  let token = values.token ?? process.env.LISTINGS_TOKEN;
  const demoFile = path.resolve(config.dataDir, DEMO_FILE);
  if (!token && config.nodeEnv !== 'production' && existsSync(demoFile)) token = (JSON.parse(readFileSync(demoFile, 'utf8')) as DemoSeed).token;
  if (!token) throw new UsageError(`an organization token is needed: --token <token> or LISTINGS_TOKEN (in development the demo's is read from ${demoFile}, absent)`);
  return { url, token };
}

interface GraphQLAnswer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** One GraphQL operation over HTTP, as the organization; its errors as one line. */
export async function graphqlRequest<T>(service: Service, query: string, variables: Record<string, unknown>): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${service.token}` },
      body: JSON.stringify({ query, variables }),
    });
  } catch (error) {
    throw new CommandFailed(`Cannot reach the service at ${service.url} (${(error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).message}): is it running (npm start)? --url names another`);
  }
  const answer = (await response.json().catch(() => ({}))) as GraphQLAnswer<T>;
  if (answer.errors?.length) throw new CommandFailed(answer.errors.map((error) => error.message).join('; '));
  if (!answer.data) throw new CommandFailed(`The service at ${service.url} answered ${response.status} without data`);
  return answer.data;
}
