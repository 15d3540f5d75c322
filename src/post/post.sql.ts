import type { EntityManager } from '@mikro-orm/postgresql';
import { readWith, type WriteAlong } from '../db/change-statement';
import { codecOf } from '../db/entity-codec';
import { Post } from './post.entity';

/**
 * What a post's job reads: the post, as a plain instance (src/db/entity-codec.ts), and its location's provider
 * name, in one statement, which also carries `along` (the job's RUNNING). The job changes the post by a guarded
 * statement of its own (post.worker.ts), so the read needs no unit of work.
 */
export async function readPostForJob(
  em: EntityManager,
  postId: string,
  along: WriteAlong[],
): Promise<{ post: Post; alphaLocationName: string | null } | undefined> {
  const meta = em.getMetadata().get<Post>(Post.name);
  const row = await readWith(
    (sql, values) => em.getConnection().execute<Record<string, unknown>[]>(sql, values),
    {
      sql: `select p.*, l.alpha_location_name as "lg_alpha_location_name" from "${meta.tableName}" p join "location" l on l.id = p.location_id where p.id = ?`,
      values: [postId],
    },
    along,
  );
  if (!row) return undefined;
  const post = codecOf(em.getMetadata(), Post).decode(em.getComparator().mapResult<Record<string, unknown>>(Post.name, row));
  return { post, alphaLocationName: (row.lg_alpha_location_name as string | null) ?? null };
}
