import { Migration } from '@mikro-orm/migrations';

/**
 * Work kinds and event and record types are the modules' open lists now (src/resource-module.ts): the database no
 * longer holds them to a fixed set, so a new resource adds its kinds without changing these tables.
 */
export class Migration20261128000000_ModuleKinds extends Migration {
  override up(): void {
    this.addSql(`alter table "async_work" drop constraint if exists "async_work_kind_check";`);
    this.addSql(`alter table "activity_event" drop constraint if exists "activity_event_type_check";`);
    this.addSql(`alter table "activity_event" drop constraint if exists "activity_event_record_type_check";`);
  }

  override down(): void {
    this.addSql(`alter table "async_work" add constraint "async_work_kind_check" check ("kind" in ('POST_PUBLISH', 'POST_CHECK', 'POST_DELETE', 'LOCATION_PUBLISH', 'LOCATION_UPDATE', 'ACCOUNT_IMPORT', 'COMPETITOR_SCAN', 'BETA_BRAND_SYNC', 'REVIEW_REPLY_SEND', 'REVIEW_REPLY_CHECK', 'CITATIONS_DISABLE'));`);
    this.addSql(`alter table "activity_event" add constraint "activity_event_type_check" check ("type" in ('post.state_changed', 'location_update_job.status_changed', 'location.connected', 'location.refused', 'location.citations_disabled', 'account.import_progressed', 'account.import_ended', 'account.connected', 'account.disconnected', 'account.reconnected', 'competitor_scan.status_changed', 'beta_brand.sync_status_changed', 'review.reply_state_changed'));`);
    this.addSql(`alter table "activity_event" add constraint "activity_event_record_type_check" check ("record_type" in ('post', 'location', 'location_update_job', 'account', 'review', 'competitor_scan', 'beta_brand'));`);
  }
}
