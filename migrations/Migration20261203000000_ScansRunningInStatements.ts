import { Migration } from '@mikro-orm/migrations';

/**
 * `lg_count_scans_running(organization, statuses)`: the organization's scans in `statuses` (its unfinished ones),
 * counted under the advisory lock of its cap (held to the end of the caller's statement). A scan's start counts them
 * in the statement that inserts it (src/limits/request-limits.ts `OpenLimitInChange`, docs/write-path.md), whose own
 * snapshot predates the lock: a VOLATILE function's query takes a snapshot of its own, after the lock, so it sees
 * the scans that concurrent starts committed while it waited, and the cap holds exactly.
 */
export class Migration20261203000000_ScansRunningInStatements extends Migration {
  override up(): void {
    this.addSql(`create function lg_count_scans_running(p_organization uuid, p_statuses text[]) returns int language plpgsql volatile as $fn$
      declare
        v_running int;
      begin
        perform pg_advisory_xact_lock(hashtext('scans-running:' || p_organization::text));
        select count(*)::int into v_running from competitor_scan s where s.organization_id = p_organization and s.status = any(p_statuses);
        return v_running;
      end
      $fn$;`);
  }

  override down(): void {
    this.addSql('drop function if exists lg_count_scans_running(uuid, text[]);');
  }
}
