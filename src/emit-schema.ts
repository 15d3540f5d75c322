/**
 * `npm run schema` writes schema.graphql from the code; `npm run schema:check` fails when the committed file is
 * stale. Paths are relative to the working directory (the repository root), not to dist/.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { gatewaySchema } from './schema';

export const SCHEMA_FILE = 'schema.graphql';
const HEADER = '# Generated from the resolvers by `npm run schema`; do not edit. CI fails when it is stale.\n\n';

export async function renderSchema(): Promise<string> {
  return HEADER + printSchema(lexicographicSortSchema(await gatewaySchema())) + '\n';
}

async function main(): Promise<void> {
  const file = path.resolve(process.cwd(), SCHEMA_FILE);
  const rendered = await renderSchema();
  if (process.argv.includes('--check')) {
    const committed = await fs.readFile(file, 'utf8').catch(() => '');
    if (committed !== rendered) {
      console.error(`${SCHEMA_FILE} is stale: run \`npm run schema\` and commit the result.`);
      process.exit(1);
    }
    console.log(`${SCHEMA_FILE} matches the code.`);
    return;
  }
  await fs.writeFile(file, rendered);
  console.log(`Wrote ${SCHEMA_FILE}.`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
