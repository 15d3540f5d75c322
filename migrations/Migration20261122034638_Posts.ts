import { Migration } from '@mikro-orm/migrations';

export class Migration20261122034638_Posts extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "post" ("id" uuid not null, "organization_id" uuid not null, "account_id" uuid not null, "location_id" uuid not null, "state" text check ("state" in ('SENDING', 'SCHEDULED', 'LIVE', 'PROCESSING', 'REJECTED', 'ERROR', 'DELETED')) not null default 'SENDING', "source" text check ("source" in ('app', 'external_api')) not null, "params" jsonb not null, "campaign_id" uuid null, "provider_name" text null, "search_url" text null, "last_error" jsonb null, "published_time" timestamptz null, "scheduled_time" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz null, "pending_action" text null default 'publish', "search_vector" tsvector generated always as (to_tsvector('simple', coalesce(params->>'summary', ''))) stored null, "version" int not null default 1, constraint "post_pkey" primary key ("id"));`);
    this.addSql(`create index "post_location_id_index" on "post" ("location_id");`);
    this.addSql(`create index "post_campaign_id_index" on "post" ("campaign_id");`);
    this.addSql(`create index "post_search_vector_index" on "public"."post" using gin("search_vector");`);
    this.addSql(`create index "post_organization_id_created_at_index" on "post" ("organization_id", "created_at");`);
    this.addSql(`create index "post_account_id_created_at_index" on "post" ("account_id", "created_at");`);

    this.addSql(`create table "idempotency_key" ("id" uuid not null, "account_id" uuid not null, "key" text not null, "request_hash" text not null, "post_id" uuid not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, constraint "idempotency_key_pkey" primary key ("id"));`);
    this.addSql(`alter table "idempotency_key" add constraint "idempotency_key_account_id_key_unique" unique ("account_id", "key");`);

    this.addSql(`create table "rate_limit_event" ("id" bigserial primary key, "bucket" text not null, "at" timestamptz not null);`);
    this.addSql(`create index "rate_limit_event_bucket_at_index" on "rate_limit_event" ("bucket", "at");`);

    this.addSql(`alter table "post" add constraint "post_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "post" add constraint "post_account_id_foreign" foreign key ("account_id") references "account" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "post" add constraint "post_location_id_foreign" foreign key ("location_id") references "location" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "idempotency_key" add constraint "idempotency_key_account_id_foreign" foreign key ("account_id") references "account" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "idempotency_key" add constraint "idempotency_key_post_id_foreign" foreign key ("post_id") references "post" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "idempotency_key" drop constraint "idempotency_key_post_id_foreign";`);

    this.addSql(`drop table if exists "post" cascade;`);

    this.addSql(`drop table if exists "idempotency_key" cascade;`);

    this.addSql(`drop table if exists "rate_limit_event" cascade;`);
  }

}
