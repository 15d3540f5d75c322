import { Migration } from '@mikro-orm/migrations';

/**
 * Location updates as jobs (at most one QUEUED or RUNNING per location, held by a partial unique index so two
 * concurrent requests cannot both pass), the provider account id of accounts, and store codes unique per account.
 */
export class Migration20261124041256_Locations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "location_update_job" ("id" uuid not null, "organization_id" uuid not null, "account_id" uuid not null, "location_id" uuid not null, "status" text check ("status" in ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED')) not null default 'QUEUED', "fields" text[] not null, "changes" jsonb not null, "error" jsonb null, "created_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null, "version" int not null default 1, constraint "location_update_job_pkey" primary key ("id"));`);
    this.addSql(`create index "location_update_job_location_id_created_at_index" on "location_update_job" ("location_id", "created_at");`);
    this.addSql(`create index "location_update_job_account_id_created_at_index" on "location_update_job" ("account_id", "created_at");`);
    this.addSql(`create unique index "location_update_job_one_unfinished" on "location_update_job" ("location_id") where "status" in ('QUEUED', 'RUNNING');`);

    this.addSql(`alter table "location_update_job" add constraint "location_update_job_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "location_update_job" add constraint "location_update_job_account_id_foreign" foreign key ("account_id") references "account" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "location_update_job" add constraint "location_update_job_location_id_foreign" foreign key ("location_id") references "location" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "account" add column "alpha_account_id" text null;`);

    this.addSql(`drop index "location_account_id_index";`);
    this.addSql(`drop index "location_account_id_reference_id_index";`);

    this.addSql(`alter table "location" add column "provider_error" jsonb null, add column "version" int not null default 1;`);
    this.addSql(`alter table "location" add constraint "location_account_id_reference_id_unique" unique ("account_id", "reference_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "location_update_job" cascade;`);

    this.addSql(`alter table "account" drop column "alpha_account_id";`);

    this.addSql(`alter table "location" drop constraint "location_account_id_reference_id_unique";`);
    this.addSql(`alter table "location" drop column "provider_error", drop column "version";`);

    this.addSql(`create index "location_account_id_index" on "location" ("account_id");`);
    this.addSql(`create index "location_account_id_reference_id_index" on "location" ("account_id", "reference_id");`);
  }
}
