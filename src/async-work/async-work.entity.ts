import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { AsyncWorkStatus, type AsyncWorkKind } from '../jobs/work-ledger';

/** An owner, by its id: the ledger names the organization and account entities without depending on them. */
interface Owner {
  id: string;
}

/**
 * One unit of asynchronous work and how it stands (docs/async-work.md): written by the job engine as its job is
 * enqueued, taken, retried, finished or dead-lettered (src/jobs/work-ledger.ts), read here to list and count it.
 */
@Entity({ tableName: 'async_work' })
@Index({ properties: ['organization', 'id'] })
@Index({ properties: ['account', 'id'] })
@Index({ properties: ['subjectId'] })
export class AsyncWorkRecord {
  [OptionalProps]?: 'attempts' | 'error' | 'progress' | 'payload' | 'queue' | 'createdAt' | 'startedAt' | 'endedAt' | 'updatedAt' | 'version' | 'run' | 'runAttempts';

  /** A UUID v7: ordered by creation, so the newest-first list is ordered by id. */
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @ManyToOne('Organization', { deleteRule: 'cascade' })
  organization!: Owner;

  @ManyToOne('Account', { deleteRule: 'cascade', nullable: true })
  account!: Owner | null;

  /** One of the modules' kinds (src/async-work/work-kinds.ts): an open list, so the column has no check. */
  @Property({ type: 'text' })
  kind!: AsyncWorkKind;

  @Enum({ items: () => AsyncWorkStatus, type: 'text' })
  status!: AsyncWorkStatus;

  /** The record the work is about (its table follows from the kind). */
  @Property({ type: 'uuid' })
  subjectId!: string;

  /** The job's queue and payload, kept to enqueue it again on a retry; null for work done in a request. */
  @Property({ type: 'text', nullable: true })
  queue: string | null = null;

  @Property({ type: 'json', nullable: true })
  payload: Record<string, unknown> | null = null;

  @Property({ type: 'integer' })
  attempts: number = 0;

  @Property({ type: 'integer' })
  maxAttempts!: number;

  /** 1, then one more at each retry of dead-lettered work; kept by a trigger (docs/async-work.md, "Attempts"). */
  @Property({ type: 'integer' })
  run: number = 1;

  /** The attempts of the current run (`attempts` counts every run's); kept by the same trigger. */
  @Property({ type: 'integer' })
  runAttempts: number = 0;

  /** The last failure's documented text. */
  @Property({ type: 'text', nullable: true })
  error: string | null = null;

  @Property({ type: 'real', nullable: true })
  progress: number | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  startedAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  endedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  updatedAt: Date = new Date();

  @Property({ type: 'integer' })
  version: number = 1;
}
