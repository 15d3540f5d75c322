import { Migration } from '@mikro-orm/migrations';

/**
 * Bounds on the work a request can start (docs/beta-and-scans.md, docs/oauth.md): rate-limit events get a weight
 * (a scan counts the provider searches it will make), and the window function sums weights; indexes for counting
 * an organization's open scans and consent sessions and for deleting expired sessions.
 */
export class Migration20261125000000_WorkBounds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "rate_limit_event" add column "weight" int not null default 1;`);
    this.addSql(`drop function if exists consume_rate_limit(text, int, int);`);
    // As before (one statement, serialized per bucket), with weights: admitted while the window's weight plus this
    // request's stays within the limit. A refusal reports when enough weight will have left for this request.
    this.addSql(`create function consume_rate_limit(p_bucket text, p_limit int, p_window_seconds int, p_weight int default 1)
      returns table (admitted boolean, counted int, oldest timestamptz, checked_at timestamptz, event_id bigint)
      language plpgsql volatile as $fn$
      begin
        perform pg_advisory_xact_lock(hashtext(p_bucket));
        delete from rate_limit_event e where e.bucket = p_bucket and e.at <= now() - make_interval(secs => p_window_seconds);
        select coalesce(sum(e.weight), 0)::int, min(e.at) into counted, oldest from rate_limit_event e where e.bucket = p_bucket;
        checked_at := now();
        admitted := counted + p_weight <= p_limit;
        event_id := null;
        if admitted then
          insert into rate_limit_event (bucket, at, weight) values (p_bucket, now(), p_weight) returning id into event_id;
        else
          select w.at into oldest from (
            select e.at, sum(e.weight) over (order by e.at, e.id) as freed from rate_limit_event e where e.bucket = p_bucket
          ) w where w.freed >= counted + p_weight - p_limit order by w.at limit 1;
        end if;
        return next;
      end
      $fn$;`);
    this.addSql(`create index "competitor_scan_organization_id_status_index" on "competitor_scan" ("organization_id", "status");`);
    this.addSql(`create index "oauth_session_organization_id_provider_status_index" on "oauth_session" ("organization_id", "provider", "status");`);
    this.addSql(`create index "oauth_session_expires_at_index" on "oauth_session" ("expires_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "oauth_session_expires_at_index";`);
    this.addSql(`drop index if exists "oauth_session_organization_id_provider_status_index";`);
    this.addSql(`drop index if exists "competitor_scan_organization_id_status_index";`);
    this.addSql(`drop function if exists consume_rate_limit(text, int, int, int);`);
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
    this.addSql(`alter table "rate_limit_event" drop column "weight";`);
  }
}
