import type { Principal } from '../access/principal';
import type { EventBus } from '../events/event-bus';
import type { Clock } from '../shared/clock';

/**
 * The principals of recently seen tokens, by token hash, so a request pays for its token lookup once in a while
 * instead of every time. A revocation evicts its token at once in every process (the `token.revoked` event; the
 * revoking process also evicts before publishing), so a revoked token is never served from here; the time limit
 * only bounds how long other changes (an organization's flags) and an event missed during a lost event connection
 * can go unseen. Only tokens that authenticated are kept, and at most `maxEntries` of them.
 */
export class PrincipalCache {
  private readonly entries = new Map<string, { principal: Principal; expiresAt: number }>();
  private readonly hashesByTokenId = new Map<string, string>();
  /**
   * Tokens revoked within the time limit: a lookup that read the token just before its revocation and finishes
   * after the event must not put it back.
   */
  private readonly revoked = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(
    events: EventBus,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {
    this.unsubscribe = events.subscribe('token.revoked', ({ tokenId }) => this.evictToken(tokenId));
  }

  get(tokenHash: string): Principal | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock.now().getTime()) {
      this.delete(tokenHash, entry.principal.tokenId);
      return undefined;
    }
    return entry.principal;
  }

  set(tokenHash: string, principal: Principal): void {
    if (this.ttlMs <= 0) return;
    const now = this.clock.now().getTime();
    const revokedUntil = this.revoked.get(principal.tokenId);
    if (revokedUntil !== undefined) {
      if (revokedUntil > now) return;
      this.revoked.delete(principal.tokenId);
    }
    if (this.entries.size >= this.maxEntries) {
      // The oldest entry goes first (a Map iterates in insertion order).
      const [oldestHash, oldest] = this.entries.entries().next().value as [string, { principal: Principal }];
      this.delete(oldestHash, oldest.principal.tokenId);
    }
    this.entries.set(tokenHash, { principal, expiresAt: now + this.ttlMs });
    this.hashesByTokenId.set(principal.tokenId, tokenHash);
  }

  evictToken(tokenId: string): void {
    const now = this.clock.now().getTime();
    for (const [id, until] of this.revoked) if (until <= now) this.revoked.delete(id);
    this.revoked.set(tokenId, now + this.ttlMs);
    const hash = this.hashesByTokenId.get(tokenId);
    if (hash !== undefined) this.delete(hash, tokenId);
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
    this.hashesByTokenId.clear();
    this.revoked.clear();
  }

  private delete(tokenHash: string, tokenId: string): void {
    this.entries.delete(tokenHash);
    this.hashesByTokenId.delete(tokenId);
  }
}
