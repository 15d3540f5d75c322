/**
 * `npm run migration:create -- [name]`: diffs the entities against a migrated database and writes the new
 * migration under migrations/, then lists it in migrations/index.ts.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import 'reflect-metadata';
import { loadConfig } from '../config';
import { locateDatabase } from '../db/locate-database';
import { migrate, openDatabase } from '../db/orm';
import { composition } from '../modules';

async function main(): Promise<void> {
  const name = process.argv[2];
  const config = loadConfig();
  const location = await locateDatabase(config);
  const database = await openDatabase(location.url, { entities: composition.entities });
  try {
    await migrate(database);
    const result = await database.orm.getMigrator().createMigration(path.resolve('migrations'), false, false, name);
    if (!result.fileName) {
      console.log('No changes: the database already matches the entities.');
      return;
    }
    const className = path.basename(result.fileName, '.ts');
    const indexFile = path.resolve('migrations/index.ts');
    const index = await fs.readFile(indexFile, 'utf8');
    // The new import goes after the last import line, so imports stay in migration order.
    const lastImport = index.lastIndexOf('\nimport ') + 1;
    const lineEnd = index.indexOf('\n', lastImport) + 1;
    const withImport = `${index.slice(0, lineEnd)}import { ${className} } from './${className}';\n${index.slice(lineEnd)}`;
    // The list ends with a line holding only `];`: the new entry goes just before it.
    const withEntry = withImport.replace(/\n\];\n$/, `\n  { name: '${className}', class: ${className} },\n];\n`);
    await fs.writeFile(indexFile, withEntry);
    console.log(`Created migrations/${result.fileName} and listed it in migrations/index.ts`);
  } finally {
    await database.close();
    await location.release();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
