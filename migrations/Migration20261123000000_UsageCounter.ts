import { Migration } from '@mikro-orm/migrations';

/**
 * The monthly post quota becomes a counter row per organization and month, filled from the posts so far; the
 * rolling-window rate limit becomes one function call (one short statement, its lock released when it ends).
 */
export class Migration20261123000000_UsageCounter extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "usage_counter" ("bucket" text not null, "period" date not null, "used" int not null, constraint "usage_counter_pkey" primary key ("bucket", "period"));`);
    this.addSql(`insert into "usage_counter" ("bucket", "period", "used")
      select 'posts:' || "organization_id", date_trunc('month', "created_at" at time zone 'UTC')::date, count(*)
        from "post" group by 1, 2;`);
    // Serialized per bucket by an advisory lock that the statement's own transaction releases; each command in
    // the function reads a fresh snapshot, so the count sees every request admitted before the lock was taken.
    this.addSql(`create function consume_rate_limit(p_bucket text, p_limit int, p_window_seconds int)
      returns table (admitted boolean, counted int, oldest timestamptz, checked_at timestamptz, event_id bigint)
      language plpgsql volatile as $fn$
      begin
        perform pg_advisory_xact_lock(hashtext(p_bucket));
        delete from rate_limit_event e where e.bucket = p_bucket and e.at <= now() - make_interval(secs => p_window_seconds);
        select count(*)::int, min(e.at) into counted, oldest from rate_limit_event e where e.bucket = p_bucket;
        checked_at := now();
        admitted := counted < p_limit;
        event_id := null;
        if admitted then
          insert into rate_limit_event (bucket, at) values (p_bucket, now()) returning id into event_id;
        end if;
        return next;
      end
      $fn$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function if exists consume_rate_limit(text, int, int);`);
    this.addSql(`drop table if exists "usage_counter" cascade;`);
  }
}
