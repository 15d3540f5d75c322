import { createHash } from 'node:crypto';
import type { MetadataStorage } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FollowingWrite } from '../db/change-statement';
import { DomainError } from '../errors/domain-error';
import { newId } from '../shared/ids';
import { IdempotencyKey } from './idempotency-key.entity';
import { Post } from './post.entity';

/** How long a post's Idempotency-Key answers its replays. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The SQLSTATE (ours, `lg_refuse`) of a create whose key another request holds: nothing of it was written. */
const KEY_TAKEN = 'LGKEY';

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the canonical request: the same key with another body is refused. */
export function requestHashOf(accountId: string, input: unknown): string {
  return createHash('sha256').update(canonicalJson({ accountId, input })).digest('hex');
}

/** The post of an Idempotency-Key still in force, null when there is none; a 422 when the key came with another request. */
export async function replayOf(em: EntityManager, accountId: string, key: string, requestHash: string, now: Date): Promise<Post | null> {
  const existing = await em.findOne(IdempotencyKey, { account: accountId, key }, { populate: ['post'] });
  if (!existing || existing.expiresAt <= now) return null;
  if (existing.requestHash !== requestHash) {
    throw new DomainError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request');
  }
  return existing.post;
}

/**
 * The key's row, written by the statement that creates the post (docs/write-path.md, "A keyed create"): it takes
 * over an expired row of the key, and a row in force (another request's, committed or about to be: PostgreSQL's
 * `on conflict` waits for it) fails the statement with KEY_TAKEN, writing nothing, its counts included. The caller
 * then answers that request's post (`replayOf`).
 */
export function idempotencyKeyWrite(metadata: MetadataStorage, key: string, requestHash: string, now: Date): FollowingWrite {
  const meta = metadata.get<IdempotencyKey>(IdempotencyKey.name);
  const column = (name: keyof IdempotencyKey & string) => `"${meta.properties[name].fieldNames[0]}"`;
  const [id, account, keyColumn, hash, post, createdAt, expiresAt] = (['id', 'account', 'key', 'requestHash', 'post', 'createdAt', 'expiresAt'] as const).map(column);
  const table = `"${meta.tableName}"`;
  const posts = metadata.get<Post>(Post.name).properties;
  const [postId, postAccount] = [posts.id, posts.account].map((prop) => `changed."${prop.fieldNames[0]}"`);
  const taken = [hash, post, createdAt, expiresAt].map((name) => `${name} = excluded.${name}`).join(', ');
  return {
    sql:
      `insert into ${table} (${id}, ${account}, ${keyColumn}, ${hash}, ${post}, ${createdAt}, ${expiresAt}) ` +
      `select ?::uuid, ${postAccount}, ?, ?, ${postId}, ?, ? from changed ` +
      `on conflict (${account}, ${keyColumn}) do update set ${taken} where ${table}.${expiresAt} <= ? returning ${id}`,
    values: [newId(), key, requestHash, now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS), now],
    requiredOr: KEY_TAKEN,
  };
}

/** The create failed because another request holds its key (`idempotencyKeyWrite`). */
export function isKeyTaken(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === KEY_TAKEN;
}
