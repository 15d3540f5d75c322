import { Migration } from '@mikro-orm/migrations';

/**
 * The history of attempts (docs/async-work.md, "Attempts"; docs/webhooks.md, "The delivery log"): a row per attempt
 * of a unit of work, and one per attempt of a webhook delivery; and the run a unit of work is in, so that "3/2"
 * after a retry reads "run 2, attempt 1/2". The work's attempts are written by triggers on `async_work`: the job
 * engine's ledger changes ride in the statements of the records' own changes (docs/write-path.md), and the triggers
 * follow them there without a statement more. The webhook worker writes its attempts itself.
 */
export class Migration20261130000200_WorkHistory extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "async_work" add column "run" int not null default 1, add column "run_attempts" int not null default 0;`);
    // Work retried before this migration: its runs were full (a retry takes dead-lettered work only).
    this.addSql(`update "async_work" set "run" = case when "attempts" > "max_attempts" and "max_attempts" > 0 then ("attempts" - 1) / "max_attempts" + 1 else 1 end;`);
    this.addSql(`update "async_work" set "run_attempts" = "attempts" - ("run" - 1) * "max_attempts";`);
    this.addSql(`create index "async_work_subject_id_index" on "async_work" ("subject_id");`);

    this.addSql(`create table "async_work_attempt" ("id" bigserial primary key, "work_id" uuid not null, "number" int not null, "run" int not null, "run_attempt" int not null, "outcome" text check ("outcome" in ('RUNNING', 'SUCCEEDED', 'RETRIED', 'FAILED', 'DEAD_LETTERED', 'INTERRUPTED')) not null, "error" text null, "started_at" timestamptz not null, "ended_at" timestamptz null);`);
    this.addSql(`create index "async_work_attempt_work_id_number_index" on "async_work_attempt" ("work_id", "number");`);
    this.addSql(`alter table "async_work_attempt" add constraint "async_work_attempt_work_id_foreign" foreign key ("work_id") references "async_work" ("id") on update cascade on delete cascade;`);

    this.addSql(`create table "webhook_delivery_attempt" ("id" bigserial primary key, "delivery_id" uuid not null, "number" int not null, "attempted_at" timestamptz not null, "request_headers" jsonb not null, "status_code" int null, "latency_ms" int null, "response_excerpt" text null, "error" text null);`);
    this.addSql(`create index "webhook_delivery_attempt_delivery_id_number_index" on "webhook_delivery_attempt" ("delivery_id", "number");`);
    this.addSql(`alter table "webhook_delivery_attempt" add constraint "webhook_delivery_attempt_delivery_id_foreign" foreign key ("delivery_id") references "webhook_delivery" ("id") on update cascade on delete cascade;`);

    // The run: a retry of ended work (QUEUED again) starts the next one; its attempts count from 0 again.
    this.addSql(`create function "async_work_run"() returns trigger language plpgsql as $$
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
    this.addSql(`create trigger "async_work_run" before insert or update on "async_work" for each row execute function "async_work_run"();`);

    // An attempt starts when `attempts` grows (RUNNING) and ends with the status the work takes after it.
    this.addSql(`create function "async_work_attempt_record"() returns trigger language plpgsql as $$
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
    this.addSql(`create trigger "async_work_attempt_record" after insert or update on "async_work" for each row execute function "async_work_attempt_record"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "async_work_attempt_record" on "async_work";`);
    this.addSql(`drop function if exists "async_work_attempt_record"();`);
    this.addSql(`drop trigger if exists "async_work_run" on "async_work";`);
    this.addSql(`drop function if exists "async_work_run"();`);
    this.addSql(`drop table if exists "webhook_delivery_attempt" cascade;`);
    this.addSql(`drop table if exists "async_work_attempt" cascade;`);
    this.addSql(`drop index if exists "async_work_subject_id_index";`);
    this.addSql(`alter table "async_work" drop column "run", drop column "run_attempts";`);
  }
}
