import { Migration } from '@mikro-orm/migrations';

/**
 * Provider budgets (docs/jobs.md, "Provider budgets"), shared by every process of a deployment:
 * - `provider_budget`: per provider, the time of its next free call slot (calls are spaced at the budget's rate,
 *   reserved a few at a time by `lg_reserve_provider_slots`), and until when a 429 naming the provider's project
 *   quota paused it (read by a process that starts during the pause).
 * - `bulk_turn`: per queue and organization, the last turn its bulk work was given (`lg_take_bulk_turns`), so bulk
 *   jobs of different organizations are taken in turn (pg-boss takes the higher priority first).
 */
export class Migration20261202090000_ProviderBudgets extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "provider_budget" (
      "provider" text primary key,
      "next_slot_at" timestamptz not null default clock_timestamp(),
      "paused_until" timestamptz null
    );`);
    // `p_count` slots `p_interval_ms` apart, from the provider's next free slot, not before now nor before its pause
    // ends: answers how many ms from now the first one is (the database's clock, so processes' clocks may differ).
    this.addSql(`create function "lg_reserve_provider_slots"(p_provider text, p_count int, p_interval_ms double precision)
      returns double precision language sql volatile as $$
        insert into "provider_budget" as b ("provider", "next_slot_at")
        values (p_provider, clock_timestamp() + make_interval(secs => p_count * p_interval_ms / 1000))
        on conflict ("provider") do update set "next_slot_at" =
          greatest(b."next_slot_at", clock_timestamp(), b."paused_until") + make_interval(secs => p_count * p_interval_ms / 1000)
        returning extract(epoch from ("next_slot_at" - make_interval(secs => p_count * p_interval_ms / 1000) - clock_timestamp())) * 1000
      $$;`);
    this.addSql(`create table "bulk_turn" (
      "queue" text not null,
      "organization_id" text not null,
      "last_turn" int not null,
      primary key ("queue", "organization_id")
    );`);
    // The first of `p_count` turns for an organization's bulk jobs: after its own earlier ones still queued, and
    // not before the turn being served now (the highest priority of the queue's bulk jobs not yet taken). A queue
    // with no bulk job left starts over at turn 1.
    this.addSql(`create function "lg_take_bulk_turns"(p_queue text, p_organization text, p_count int)
      returns int language plpgsql volatile as $$
        declare
          serving int;
          first_turn int;
        begin
          select -max("priority") into serving from "pgboss"."job"
            where "name" = p_queue and "state" < 'active' and "priority" < 0;
          if serving is null then
            delete from "bulk_turn" where "queue" = p_queue;
            serving := 1;
          end if;
          insert into "bulk_turn" as t ("queue", "organization_id", "last_turn")
            values (p_queue, p_organization, serving + p_count - 1)
            on conflict ("queue", "organization_id") do update set "last_turn" = greatest(t."last_turn" + 1, serving) + p_count - 1
            returning "last_turn" - p_count + 1 into first_turn;
          return first_turn;
        end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop function if exists "lg_take_bulk_turns"(text, text, int);');
    this.addSql('drop table if exists "bulk_turn";');
    this.addSql('drop function if exists "lg_reserve_provider_slots"(text, int, double precision);');
    this.addSql('drop table if exists "provider_budget";');
  }
}
