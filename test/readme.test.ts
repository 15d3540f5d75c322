import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { graphql } from './support/http';
import { betaConsent, until } from './support/job-faults';
import { waitUntilConnected } from './support/locations';
import { freePort } from './support/ports';
import { errorLines, ROOT, runCli, startServerProcess, type ServerProcess } from './support/process';
import { createTestDatabase } from './support/stack';

/**
 * The README's commands, as written there, run: the split deployment (`ROLE=api npm start` beside `ROLE=worker …
 * npm start`), each `npm run cli -- …` line, and the curl line. `npm start` and `npm run cli` are run as what they
 * start once built (the global setup built both); the README's port 4000 is a free port, its placeholders the values
 * the commands before them printed. The worker's jobs then reach both providers through the URLs the README gives.
 */

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const UP = /GraphQL \(HTTP, WebSocket and the IDE in a browser\): (http:\/\/\S+)\/graphql/;
const README_ORIGIN = 'http://127.0.0.1:4000';

/** A command line's words as a shell splits them: quotes group (and go), a `# comment` and `[optional parts]` are left out. */
function words(line: string): string[] {
  const command = line.replace(/\s#\s.*$/, '').replace(/\[[^\]]*\]/g, '');
  return [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3]!);
}

/** The commands of a README passage: its `code spans` that hold `npm start`. */
function startCommands(passage: string): string[] {
  return [...passage.matchAll(/`([^`]*npm start)`/g)].map((match) => match[1]!);
}

/** `NAME=value … npm start`: the environment it sets. */
function environmentOf(command: string): Record<string, string> {
  const parts = words(command);
  expect(parts.slice(-2)).toEqual(['npm', 'start']);
  return Object.fromEntries(parts.slice(0, -2).map((assignment) => [assignment.slice(0, assignment.indexOf('=')), assignment.slice(assignment.indexOf('=') + 1)]));
}

const undo: (() => unknown)[] = [];
afterAll(async () => {
  for (const step of undo.splice(0).reverse()) await step();
});

function start(env: Record<string, string>): ServerProcess {
  const server = startServerProcess(env);
  undo.push(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
    await server.exited();
  });
  return server;
}

test('the split deployment, the CLI lines and the curl line work as the README writes them', async () => {
  const database = await createTestDatabase();
  undo.push(() => database.drop());
  // One working directory for both, as the README's two commands share one: one data directory.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lg-readme-'));
  undo.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const origin = `http://127.0.0.1:${await freePort()}`;
  const here = (text: string) => text.replaceAll(README_ORIGIN, origin);
  const common = { DATABASE_URL: database.url, DATA_DIR: dataDir, NODE_ENV: 'development', LOG_LEVEL: 'info' };

  const split = /Run the API and the workers apart:([\s\S]*?)\n\n/.exec(README)?.[1];
  const [apiCommand, workerCommand, ...others] = startCommands(split ?? '');
  expect(others).toEqual([]);
  const apiEnv = environmentOf(apiCommand!);
  const workerEnv = Object.fromEntries(Object.entries(environmentOf(workerCommand!)).map(([name, value]) => [name, here(value)]));
  expect(apiEnv.ROLE).toBe('api');
  expect(workerEnv.ROLE).toBe('worker');

  const api = start({ ...common, ...apiEnv, PORT: new URL(origin).port });
  const [, url] = (await api.waitFor(UP, 90_000)) as unknown as [string, string];
  expect(url).toBe(origin);
  const worker = start({ ...common, ...workerEnv });
  await worker.waitFor(/Listings Gateway worker is up \(ROLE=worker\)/, 90_000);

  // The CLI's lines, in their order: each prints JSON; a placeholder takes what an earlier line printed. The
  // `webhooks` lines talk to a running service as an organization, and stream: test/webhooks.listen.test.ts runs them.
  const cliLines = README.split('\n').filter((line) => line.startsWith('npm run cli -- ') && !line.startsWith('npm run cli -- webhooks '));
  expect(cliLines.length).toBeGreaterThanOrEqual(3);
  const printed: Record<string, any> = {};
  for (const line of cliLines) {
    const filled = line.replace('<organization id>', String(printed.org?.organization_id));
    const args = words(filled).slice(4);
    const result = await runCli(args, { DATABASE_URL: database.url, DATA_DIR: dataDir });
    expect({ line, code: result.code, stderr: result.stderr }).toEqual({ line, code: 0, stderr: '' });
    printed[args[0] === 'org' ? 'org' : args[0]!] = JSON.parse(result.stdout);
  }
  expect(printed.token.token).toMatch(/^lgo_/);

  // The curl line, with the organization's token.
  const curlLine = README.split('\n').find((line) => line.startsWith('curl '))!;
  const curlArgs = words(here(curlLine.replace('<token>', printed.org.token))).slice(1);
  const { stdout } = await promisify(execFile)('curl', ['-sS', ...curlArgs]);
  expect(JSON.parse(stdout)).toMatchObject({ payload: { id: printed.org.organization_id } });

  // The worker's jobs reach the alpha provider (the demo's locations are created there) ...
  const demo = printed.demo as { token: string; accounts: { id: string }[] };
  await waitUntilConnected(url, demo.token, demo.accounts[0]!.id, 90_000);
  // ... and the beta provider: a brand of a linked company syncs (it stayed PENDING when the README left out BETA_API_URL).
  await betaConsent(url, demo.token, 'company-2002');
  const created = await graphql(url, 'mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId } }', {
    token: demo.token,
    variables: { input: { betaCompanyId: 'company-2002', brandName: 'README Brand', countryCode: 'de', primaryCategory: 'cafe', ownershipType: 'BRAND_OWNER' } },
  });
  const segmentId = created.body.data!.createBetaBrand.segmentId as string;
  await until(async () => {
    const brand = await graphql(url, 'query ($s: String!) { betaBrand(segmentId: $s) { betaSyncStatus syncError } }', { token: demo.token, variables: { s: segmentId } });
    const status = brand.body.data?.betaBrand.betaSyncStatus as string | undefined;
    if (status === 'FAILED') throw new Error(`the brand's sync failed: ${JSON.stringify(brand.body.data)}`);
    return status === 'SYNCED' ? true : undefined;
  }, 'the brand to be synced by the worker', 60_000);

  for (const server of [worker, api]) {
    server.child.kill('SIGTERM');
    expect(await server.exited()).toBe(0);
    expect(errorLines(server.output())).toEqual([]);
  }
}, 240_000);
