import { Migration } from '@mikro-orm/migrations';

/** A competitor scan's status is an enum now (CompetitorScanStatus): the database holds it to its values, as it does the other lifecycles. */
export class Migration20261126000000_CompetitorScanStatus extends Migration {
  override up(): void {
    this.addSql(`alter table "competitor_scan" drop constraint if exists "competitor_scan_status_check";`);
    this.addSql(`alter table "competitor_scan" add constraint "competitor_scan_status_check" check ("status" in ('queued', 'running', 'completed', 'failed'));`);
  }

  override down(): void {
    this.addSql(`alter table "competitor_scan" drop constraint if exists "competitor_scan_status_check";`);
  }
}
