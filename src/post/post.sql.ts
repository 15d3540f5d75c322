import type { EntityManager } from '@mikro-orm/postgresql';
import { readAllWith, type WriteAlong } from '../db/change-statement';
import { codecOf } from '../db/entity-codec';
import { statementsApart } from '../db/statements';
import { Post } from './post.entity';

/** What a post's job reads: the post, and its location's provider name. */
export interface PostForJob {
  post: Post;
  alphaLocationName: string | null;
}

/**
 * What the post jobs starting together read (src/db/batched-read.ts): each post, as a plain instance
 * (src/db/entity-codec.ts), and its location's provider name, in one statement, which also carries `along` (the
 * jobs' RUNNING). A job changes its post by a guarded statement of its own (post.worker.ts), so the read needs no
 * unit of work.
 */
export async function readPostsForJobs(em: EntityManager, postIds: string[], along: WriteAlong[]): Promise<Map<string, PostForJob>> {
  const meta = em.getMetadata().get<Post>(Post.name);
  const rows = await readAllWith(
    statementsApart(em),
    {
      sql: `select p.*, l.alpha_location_name as "lg_alpha_location_name" from "${meta.tableName}" p join "location" l on l.id = p.location_id where p.id = any(?::uuid[])`,
      values: [postIds],
    },
    along,
  );
  const codec = codecOf(em.getMetadata(), Post);
  const found = new Map<string, PostForJob>();
  for (const row of rows) {
    const post = codec.decode(em.getComparator().mapResult<Record<string, unknown>>(Post.name, row));
    found.set(post.id, { post, alphaLocationName: (row.lg_alpha_location_name as string | null) ?? null });
  }
  return found;
}
