import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { AsyncWorkRecord } from './async-work.entity';

/** How one attempt ended (docs/async-work.md, "Attempts"). */
export enum AsyncWorkAttemptOutcome {
  RUNNING = 'RUNNING',
  SUCCEEDED = 'SUCCEEDED',
  /** It failed and the work was tried again. */
  RETRIED = 'RETRIED',
  /** It failed for good: trying again would give the same answer. */
  FAILED = 'FAILED',
  /** It failed and was the last the work was allowed: the work was dead-lettered. */
  DEAD_LETTERED = 'DEAD_LETTERED',
  /** It never ended: its worker stopped or died, and the work was taken again. */
  INTERRUPTED = 'INTERRUPTED',
}

registerEnumType(AsyncWorkAttemptOutcome, {
  name: 'AsyncWorkAttemptOutcome',
  valuesConfig: {
    RUNNING: { description: 'Not ended yet.' },
    SUCCEEDED: { description: 'The work was done.' },
    RETRIED: { description: 'It failed (`error`); the work was tried again.' },
    FAILED: { description: 'It failed for good (`error`).' },
    DEAD_LETTERED: { description: 'It failed (`error`) and was the last allowed: the work ran out of retries.' },
    INTERRUPTED: { description: 'It never ended: its worker stopped or died, and the work was taken again.' },
  },
});

/**
 * One attempt of a unit of work: written by triggers on `async_work` (migrations/Migration20261130000200_WorkHistory.ts)
 * as the job engine's ledger changes, so the hot paths' statements stay as they are (docs/write-path.md).
 */
@ObjectType('AsyncWorkAttempt', { description: 'One attempt of a unit of work: when it ran, how it ended and why it failed.' })
@Entity({ tableName: 'async_work_attempt' })
@Index({ properties: ['work', 'number'] })
export class AsyncWorkAttempt {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @ManyToOne(() => AsyncWorkRecord, { deleteRule: 'cascade' })
  work!: AsyncWorkRecord;

  @Field(() => Int, { description: 'Its place among all the attempts of the work, from 1.' })
  @Property({ type: 'integer' })
  number!: number;

  @Field(() => Int, { description: 'The run it belongs to: 1, then one more after each retryAsyncWork.' })
  @Property({ type: 'integer' })
  run!: number;

  @Field(() => Int, { description: 'Its place within its run, from 1 to maxAttempts.' })
  @Property({ type: 'integer' })
  runAttempt!: number;

  @Field(() => AsyncWorkAttemptOutcome)
  @Enum({ items: () => AsyncWorkAttemptOutcome, type: 'text' })
  outcome!: AsyncWorkAttemptOutcome;

  @Field(() => String, { nullable: true, description: "The failure's documented text." })
  @Property({ type: 'text', nullable: true })
  error: string | null = null;

  @Field()
  @Property({ type: 'timestamptz' })
  startedAt!: Date;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  endedAt: Date | null = null;
}
