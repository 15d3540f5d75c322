import { GraphQLError, type ExecutionResult } from 'graphql';
import { internalError, unauthenticatedError } from './operation-checks';
import { HandWrittenGenerator } from '../shared/hand-written-generator';

/**
 * One stream's subscription as graphql-sse's handler runs it: its group member's results (subscription-groups.ts)
 * until the group ends or a revocation comes. A revocation's error, or the member's failure (the event bus, say),
 * is its last result, so graphql-sse formats it through onNext and then sends `complete`. graphql-sse returns it
 * when the stream ends however it ends (complete, client gone, stop): that leaves the group, once.
 */
export class StreamSubscription extends HandWrittenGenerator<ExecutionResult> {
  /** Set when the token was revoked, also before the member was started (the set-up then refuses it). */
  revoked = false;
  private member: AsyncGenerator<ExecutionResult> | undefined;
  private released: (() => void) | undefined;
  private last: ExecutionResult | undefined;
  /** Interrupts a next() waiting on the member: a revocation or a return came. */
  private wake: (() => void) | undefined;
  private ended = false;

  start(member: AsyncGenerator<ExecutionResult>, released: () => void): void {
    this.member = member;
    this.released = released;
  }

  revoke(): void {
    this.revoked = true;
    if (this.ended) return;
    this.last ??= { errors: [unauthenticatedError('The bearer token of this subscription was revoked')] };
    this.wake?.();
  }

  override async next(): Promise<IteratorResult<ExecutionResult>> {
    if (!this.ended && !this.last && this.member) {
      try {
        const step = await Promise.race([this.member.next(), new Promise<undefined>((resolve) => (this.wake = () => resolve(undefined)))]);
        if (step && !step.done) return step;
      } catch (error) {
        this.last ??= { errors: [error instanceof GraphQLError ? error : internalError(error)] };
      }
    }
    const last = this.last;
    this.last = undefined;
    await this.return();
    return last ? { value: last, done: false } : { value: undefined, done: true };
  }

  override async return(): Promise<IteratorResult<ExecutionResult>> {
    if (!this.ended) {
      this.ended = true;
      this.wake?.();
      const { member, released } = this;
      this.released = undefined;
      released?.();
      await member?.return(undefined);
    }
    return { value: undefined, done: true };
  }
}
