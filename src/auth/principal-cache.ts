import { LRUCache } from 'lru-cache';
import type { Principal } from '../access/principal';
import type { EventBus } from '../events/event-bus';
import type { Clock } from '../shared/clock';

/**
 * The principals of recently seen tokens, by token hash, so a request pays for its token lookup once in a while
 * instead of every time (docs/decisions.md, "Token lookups are cached"). A revocation evicts its token at once in
 * every process, so a revoked token is never served from here; the time limit bounds only what else goes unseen.
 */
export class PrincipalCache {
  private readonly entries: LRUCache<string, Principal>;
  private readonly hashesByTokenId = new Map<string, string>();
  /**
   * Tokens revoked within the time limit: a lookup that read the token just before its revocation and finishes
   * after the event must not put it back. A plain Map swept on each revocation, not an LRU: none of them may be
   * dropped to make room.
   */
  private readonly revoked = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(
    events: EventBus,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.entries = new LRUCache<string, Principal>({
      max: maxEntries,
      // lru-cache serves an entry while its age <= ttl; here one expires at age ttlMs (the clock counts whole ms).
      // Its ttl must be positive: with ttlMs 0, set() keeps nothing anyway.
      ttl: Math.max(ttlMs - 1, 1),
      // Expiry follows the injected clock (tests hold and move it), read on every check: no cached reading.
      perf: { now: () => clock.now().getTime() },
      ttlResolution: 0,
      // However an entry leaves (expired, evicted for room, revoked), its token no longer finds it.
      dispose: (principal) => this.hashesByTokenId.delete(principal.tokenId),
    });
    this.unsubscribe = events.subscribe('token.revoked', ({ tokenId }) => this.evictToken(tokenId));
  }

  get(tokenHash: string): Principal | undefined {
    return this.entries.get(tokenHash);
  }

  set(tokenHash: string, principal: Principal): void {
    if (this.ttlMs <= 0) return;
    const now = this.clock.now().getTime();
    const revokedUntil = this.revoked.get(principal.tokenId);
    if (revokedUntil !== undefined) {
      if (revokedUntil > now) return;
      this.revoked.delete(principal.tokenId);
    }
    this.entries.set(tokenHash, principal);
    this.hashesByTokenId.set(principal.tokenId, tokenHash);
  }

  evictToken(tokenId: string): void {
    const now = this.clock.now().getTime();
    for (const [id, until] of this.revoked) if (until <= now) this.revoked.delete(id);
    this.revoked.set(tokenId, now + this.ttlMs);
    const hash = this.hashesByTokenId.get(tokenId);
    if (hash !== undefined) this.entries.delete(hash);
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
    this.revoked.clear();
  }
}
