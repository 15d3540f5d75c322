import { Migration } from '@mikro-orm/migrations';

/** The ledger of asynchronous work (docs/async-work.md): one row per unit of work, newest first by its UUID v7 id. */
export class Migration20261126010000_AsyncWork extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "async_work" ("id" uuid not null, "organization_id" uuid not null, "account_id" uuid null, "kind" text check ("kind" in ('POST_PUBLISH', 'POST_CHECK', 'POST_DELETE', 'LOCATION_PUBLISH', 'LOCATION_UPDATE', 'ACCOUNT_IMPORT', 'COMPETITOR_SCAN', 'BETA_BRAND_SYNC', 'REVIEW_REPLY_SEND', 'REVIEW_REPLY_CHECK', 'CITATIONS_DISABLE')) not null, "status" text check ("status" in ('QUEUED', 'RUNNING', 'RETRYING', 'SUCCEEDED', 'FAILED', 'DEAD_LETTERED')) not null, "subject_id" uuid not null, "queue" text null, "payload" jsonb null, "attempts" int not null default 0, "max_attempts" int not null, "error" text null, "progress" real null, "created_at" timestamptz not null, "started_at" timestamptz null, "ended_at" timestamptz null, "updated_at" timestamptz not null, "version" int not null default 1, constraint "async_work_pkey" primary key ("id"));`);
    this.addSql(`create index "async_work_account_id_id_index" on "async_work" ("account_id", "id");`);
    this.addSql(`create index "async_work_organization_id_id_index" on "async_work" ("organization_id", "id");`);

    this.addSql(`alter table "async_work" add constraint "async_work_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "async_work" add constraint "async_work_account_id_foreign" foreign key ("account_id") references "account" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "async_work" cascade;`);
  }

}
