import { Migration } from '@mikro-orm/migrations';

/**
 * The activity log (docs/activity-log.md): one row per state change, newest first by its UUID v7 id, listed per
 * organization and filtered by account, record, type and time; `sequence` orders the events of one record.
 */
export class Migration20261127000000_ActivityEvents extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "activity_event" ("id" uuid not null, "sequence" bigserial, "type" text check ("type" in ('post.state_changed', 'location_update_job.status_changed', 'location.connected', 'location.refused', 'location.citations_disabled', 'account.import_progressed', 'account.import_ended', 'account.connected', 'account.disconnected', 'account.reconnected', 'competitor_scan.status_changed', 'beta_brand.sync_status_changed', 'review.reply_state_changed')) not null, "occurred_at" timestamptz not null, "organization_id" uuid not null, "account_id" uuid null, "record_type" text check ("record_type" in ('post', 'location', 'location_update_job', 'account', 'review', 'competitor_scan', 'beta_brand')) not null, "record_id" uuid not null, "record" jsonb not null, constraint "activity_event_pkey" primary key ("id"));`);
    this.addSql(`create index "activity_event_organization_id_id_index" on "activity_event" ("organization_id", "id");`);
    this.addSql(`create index "activity_event_organization_id_account_id_id_index" on "activity_event" ("organization_id", "account_id", "id");`);
    this.addSql(`create index "activity_event_organization_id_record_id_id_index" on "activity_event" ("organization_id", "record_id", "id");`);
    this.addSql(`create index "activity_event_organization_id_type_id_index" on "activity_event" ("organization_id", "type", "id");`);
    // The retention sweep deletes by time.
    this.addSql(`create index "activity_event_occurred_at_index" on "activity_event" ("occurred_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "activity_event" cascade;`);
  }
}
