import { openDatabase } from '../src/db/orm';
import { createTestDatabase } from './support/stack';
import { composition } from '../src/modules';

/** The committed migrations and the entities describe the same schema: nothing is left for a new migration. */
it('leaves nothing for a new migration: the migrated database matches the entities', async () => {
  const database = await createTestDatabase();
  const opened = await openDatabase(database.url, { entities: composition.entities });
  try {
    const pending = await opened.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false, safe: false });
    expect(pending.trim()).toBe('');
  } finally {
    await opened.close();
    await database.drop();
  }
});
