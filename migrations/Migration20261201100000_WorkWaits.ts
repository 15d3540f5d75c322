import { Migration } from '@mikro-orm/migrations';

/**
 * A job that waits for its provider (a 429: docs/jobs.md, "Waiting is not failing") gives back the attempt it had
 * started: its unit of work goes back to QUEUED with `attempts` one less. The triggers of the attempt history
 * (Migration20261130000200_WorkHistory) then take the run's count back too and drop that attempt's row, still
 * RUNNING: it was not an attempt. Everything else they do is unchanged.
 */
export class Migration20261201100000_WorkWaits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function "async_work_run"() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          new."run_attempts" := new."attempts";
        else
          if new."status" = 'QUEUED' and old."status" in ('SUCCEEDED', 'FAILED', 'DEAD_LETTERED') then
            new."run" := old."run" + 1;
            new."run_attempts" := 0;
          end if;
          if new."attempts" <> old."attempts" then
            new."run_attempts" := greatest(0, new."run_attempts" + (new."attempts" - old."attempts"));
          end if;
        end if;
        return new;
      end $$;`);
    this.addSql(`create or replace function "async_work_attempt_record"() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          -- Work done within a request: recorded once, ended.
          if new."attempts" > 0 then
            insert into "async_work_attempt" ("work_id", "number", "run", "run_attempt", "outcome", "error", "started_at", "ended_at")
            values (new."id", new."attempts", new."run", new."run_attempts", case when new."status" = 'SUCCEEDED' then 'SUCCEEDED' else 'FAILED' end,
                    new."error", coalesce(new."started_at", now()), coalesce(new."ended_at", now()));
          end if;
          return null;
        end if;
        if new."attempts" > old."attempts" then
          -- One still running was never ended: its worker stopped or died, and the job was taken again.
          update "async_work_attempt" set "outcome" = 'INTERRUPTED', "ended_at" = now() where "work_id" = new."id" and "outcome" = 'RUNNING';
          insert into "async_work_attempt" ("work_id", "number", "run", "run_attempt", "outcome", "started_at")
          values (new."id", new."attempts", new."run", new."run_attempts", 'RUNNING', coalesce(new."started_at", now()));
        elsif new."attempts" < old."attempts" then
          -- Given back: the job waits for its provider, and what it had started was not an attempt.
          delete from "async_work_attempt" where "work_id" = new."id" and "number" = old."attempts" and "outcome" = 'RUNNING';
        elsif new."status" is distinct from old."status" and new."status" in ('SUCCEEDED', 'RETRYING', 'FAILED') then
          update "async_work_attempt"
             set "outcome" = case new."status" when 'SUCCEEDED' then 'SUCCEEDED' when 'RETRYING' then 'RETRIED' else 'FAILED' end,
                 "error" = case when new."status" = 'SUCCEEDED' then null else new."error" end,
                 "ended_at" = now()
           where "work_id" = new."id" and "number" = new."attempts" and "outcome" = 'RUNNING';
        elsif new."status" = 'DEAD_LETTERED' and old."status" <> 'DEAD_LETTERED' then
          -- The last attempt's failure (RETRIED, or FAILED as the last of its run), now known to end the run.
          update "async_work_attempt" set "outcome" = 'DEAD_LETTERED', "ended_at" = coalesce("ended_at", now()), "error" = coalesce("error", new."error")
           where "work_id" = new."id" and "number" = new."attempts" and "outcome" in ('RUNNING', 'RETRIED', 'FAILED');
        end if;
        return null;
      end $$;`);
  }

  override async down(): Promise<void> {
    // The functions as Migration20261130000200_WorkHistory left them: a given-back attempt is no longer handled.
    this.addSql(`create or replace function "async_work_run"() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          new."run_attempts" := new."attempts";
        else
          if new."status" = 'QUEUED' and old."status" in ('SUCCEEDED', 'FAILED', 'DEAD_LETTERED') then
            new."run" := old."run" + 1;
            new."run_attempts" := 0;
          end if;
          if new."attempts" > old."attempts" then
            new."run_attempts" := new."run_attempts" + (new."attempts" - old."attempts");
          end if;
        end if;
        return new;
      end $$;`);
    this.addSql(`create or replace function "async_work_attempt_record"() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          -- Work done within a request: recorded once, ended.
          if new."attempts" > 0 then
            insert into "async_work_attempt" ("work_id", "number", "run", "run_attempt", "outcome", "error", "started_at", "ended_at")
            values (new."id", new."attempts", new."run", new."run_attempts", case when new."status" = 'SUCCEEDED' then 'SUCCEEDED' else 'FAILED' end,
                    new."error", coalesce(new."started_at", now()), coalesce(new."ended_at", now()));
          end if;
          return null;
        end if;
        if new."attempts" > old."attempts" then
          -- One still running was never ended: its worker stopped or died, and the job was taken again.
          update "async_work_attempt" set "outcome" = 'INTERRUPTED', "ended_at" = now() where "work_id" = new."id" and "outcome" = 'RUNNING';
          insert into "async_work_attempt" ("work_id", "number", "run", "run_attempt", "outcome", "started_at")
          values (new."id", new."attempts", new."run", new."run_attempts", 'RUNNING', coalesce(new."started_at", now()));
        elsif new."status" is distinct from old."status" and new."status" in ('SUCCEEDED', 'RETRYING', 'FAILED') then
          update "async_work_attempt"
             set "outcome" = case new."status" when 'SUCCEEDED' then 'SUCCEEDED' when 'RETRYING' then 'RETRIED' else 'FAILED' end,
                 "error" = case when new."status" = 'SUCCEEDED' then null else new."error" end,
                 "ended_at" = now()
           where "work_id" = new."id" and "number" = new."attempts" and "outcome" = 'RUNNING';
        elsif new."status" = 'DEAD_LETTERED' and old."status" <> 'DEAD_LETTERED' then
          -- The last attempt's failure (RETRIED, or FAILED as the last of its run), now known to end the run.
          update "async_work_attempt" set "outcome" = 'DEAD_LETTERED', "ended_at" = coalesce("ended_at", now()), "error" = coalesce("error", new."error")
           where "work_id" = new."id" and "number" = new."attempts" and "outcome" in ('RUNNING', 'RETRIED', 'FAILED');
        end if;
        return null;
      end $$;`);
  }
}
