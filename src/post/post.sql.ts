import type { EntityManager } from '@mikro-orm/postgresql';
import { codecOf } from '../db/entity-codec';
import { Post } from './post.entity';

/**
 * What a publish job reads: the post, as a plain instance (src/db/entity-codec.ts), and its location's provider
 * name, in one statement. The job changes the post by a guarded statement of its own (post.worker.ts), so the read
 * needs no unit of work.
 */
export async function readPostToPublish(em: EntityManager, postId: string): Promise<{ post: Post; alphaLocationName: string | null } | undefined> {
  const meta = em.getMetadata().get<Post>(Post.name);
  const [row] = await em
    .getConnection()
    .execute<Record<string, unknown>[]>(
      `select p.*, l.alpha_location_name as "lg_alpha_location_name" from "${meta.tableName}" p join "location" l on l.id = p.location_id where p.id = ?`,
      [postId],
    );
  if (!row) return undefined;
  const post = codecOf(em.getMetadata(), Post).decode(em.getComparator().mapResult<Record<string, unknown>>(Post.name, row));
  return { post, alphaLocationName: (row.lg_alpha_location_name as string | null) ?? null };
}
