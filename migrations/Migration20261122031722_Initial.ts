import { Migration } from '@mikro-orm/migrations';

export class Migration20261122031722_Initial extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "organization" ("id" uuid not null, "name" text not null, "owners" text[] not null, "state" text not null default 'ACTIVE', "beta_api" boolean not null default false, "citations_api" boolean not null default false, "created_at" timestamptz not null, constraint "organization_pkey" primary key ("id"));`);

    this.addSql(`create table "account" ("id" uuid not null, "organization_id" uuid not null, "name" text not null, "reference_id" text null, "alpha_state" text not null default 'VERIFIED', "country_codes" text[] not null, "created_at" timestamptz not null, constraint "account_pkey" primary key ("id"));`);
    this.addSql(`create index "account_organization_id_index" on "account" ("organization_id");`);
    this.addSql(`alter table "account" add constraint "account_organization_id_reference_id_unique" unique ("organization_id", "reference_id");`);

    this.addSql(`create table "location" ("id" uuid not null, "account_id" uuid not null, "reference_id" text null, "name" text not null, "category_id" text null, "address" text null, "postal" text null, "city" text null, "country_code" text null, "administrative_area" text null, "additional_address_lines" text[] not null, "description" text null, "phone_number" text null, "additional_phone_numbers" text[] not null, "website_uri" text null, "latitude" double precision null, "longitude" double precision null, "profile_logo_url" text null, "cover_url" text null, "additional_category_ids" text[] not null, "service_area_place_ids" text[] not null, "service_area_place_names" text[] not null, "place_id" text null, "regular_hours" jsonb not null, "special_hours" jsonb not null, "more_hours" jsonb not null, "categories" jsonb null, "service_items" jsonb not null, "service_area" jsonb null, "citations_status" text not null default 'ACTIVE', "connected" boolean not null default false, "alpha_location_name" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "location_pkey" primary key ("id"));`);
    this.addSql(`create index "location_account_id_index" on "location" ("account_id");`);
    this.addSql(`create index "location_account_id_reference_id_index" on "location" ("account_id", "reference_id");`);

    this.addSql(`create table "api_token" ("id" uuid not null, "organization_id" uuid not null, "account_id" uuid null, "token_hash" text not null, "prefix" text not null, "label" text null, "created_at" timestamptz not null, "revoked_at" timestamptz null, constraint "api_token_pkey" primary key ("id"));`);
    this.addSql(`create index "api_token_organization_id_index" on "api_token" ("organization_id");`);
    this.addSql(`alter table "api_token" add constraint "api_token_token_hash_unique" unique ("token_hash");`);

    this.addSql(`alter table "account" add constraint "account_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "location" add constraint "location_account_id_foreign" foreign key ("account_id") references "account" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "api_token" add constraint "api_token_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "api_token" add constraint "api_token_account_id_foreign" foreign key ("account_id") references "account" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "account" drop constraint "account_organization_id_foreign";`);

    this.addSql(`alter table "api_token" drop constraint "api_token_organization_id_foreign";`);

    this.addSql(`alter table "location" drop constraint "location_account_id_foreign";`);

    this.addSql(`alter table "api_token" drop constraint "api_token_account_id_foreign";`);

    this.addSql(`drop table if exists "organization" cascade;`);

    this.addSql(`drop table if exists "account" cascade;`);

    this.addSql(`drop table if exists "location" cascade;`);

    this.addSql(`drop table if exists "api_token" cascade;`);
  }

}
