import type { Clock } from '../../src/shared/clock';

/**
 * A clock a test can hold and move: the server under test reads it (services, workers, the sandbox), so a test
 * sets the time it needs instead of waiting for it or racing it.
 */
export class TestClock implements Clock {
  private held: number | undefined;
  /** How far a running clock is ahead of real time. */
  private ahead = 0;

  now(): Date {
    return new Date(this.held ?? Date.now() + this.ahead);
  }

  /** Moves a running clock forward: it goes on at real time's pace from there. */
  skip(ms: number): void {
    if (this.held !== undefined) throw new Error('skip() moves a running clock: advance() moves a held one');
    this.ahead += ms;
  }

  /** Stops time where it is (or at `at`): requests, however slow, all see this instant until it is moved. */
  hold(at: Date = this.now()): void {
    this.held = at.getTime();
  }

  /** Moves held time forward. */
  advance(ms: number): void {
    if (this.held === undefined) throw new Error('advance() moves a held clock: hold() it first');
    this.held += ms;
  }

  /** Back to real time. */
  release(): void {
    this.held = undefined;
  }
}
