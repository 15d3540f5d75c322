import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from './principal';

/**
 * Who a request's credentials name: what the transports' context factory asks (src/context.ts), provided by the
 * module that keeps the credentials (src/auth/), built once per process by the stack.
 */
export interface Authentication {
  /** The principal behind an `Authorization` value; null when missing, unknown or revoked. */
  authenticate(em: () => EntityManager, authorization: unknown): Promise<Principal | null>;
  /** A token that no longer authenticates: never served from a cache again. */
  forget(tokenId: string): void;
  close(): void;
}
