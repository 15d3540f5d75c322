import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * A provider's budget, shared by every process of the deployment (src/db/provider-slots.ts): its next free call slot
 * and until when a 429 naming its project quota paused it. Written only by `lg_reserve_provider_slots` and the
 * pause's statement; declared here so the schema has one definition of its fields.
 */
@Entity({ tableName: 'provider_budget' })
export class ProviderBudgetRow {
  @PrimaryKey({ type: 'text' })
  provider!: string;

  @Property({ type: 'timestamptz', defaultRaw: 'clock_timestamp()' })
  nextSlotAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  pausedUntil?: Date | null;
}

/**
 * The last turn an organization's bulk jobs were given in a queue (`lg_take_bulk_turns`, src/jobs/enqueue.ts), so
 * organizations' bulk work is taken in turn.
 */
@Entity({ tableName: 'bulk_turn' })
export class BulkTurn {
  @PrimaryKey({ type: 'text' })
  queue!: string;

  @PrimaryKey({ type: 'text' })
  organizationId!: string;

  @Property({ type: 'integer' })
  lastTurn!: number;
}
