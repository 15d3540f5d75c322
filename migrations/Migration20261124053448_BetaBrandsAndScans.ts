import { Migration } from '@mikro-orm/migrations';

/**
 * Beta consents (their companies, tokens sealed), beta brands, competitor scans; consent sessions know their
 * provider, and a provider without PKCE keeps no verifier.
 */
export class Migration20261124053448_BetaBrandsAndScans extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "beta_connection" ("id" uuid not null, "organization_id" uuid not null, "company_id" text not null, "access_token" text not null, "access_token_expires_at" timestamptz not null, "refresh_token" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "beta_connection_pkey" primary key ("id"));`);
    this.addSql(`alter table "beta_connection" add constraint "beta_connection_organization_id_company_id_unique" unique ("organization_id", "company_id");`);

    this.addSql(`create table "beta_brand" ("id" uuid not null, "segment_id" text not null, "organization_id" uuid not null, "beta_company_id" text not null, "beta_brand_id" text null, "beta_etag" text null, "beta_state" text null, "beta_sync_status" text check ("beta_sync_status" in ('PENDING', 'SYNCED', 'FAILED')) not null default 'PENDING', "sync_error" text null, "brand_name" text not null, "name" text not null, "country_code" text not null, "primary_category" text not null, "additional_categories" text[] not null, "beta_categories" text[] not null, "website_url" text null, "app_store_url" text null, "ownership_type" text check ("ownership_type" in ('BRAND_OWNER', 'FRANCHISEE')) not null, "use_location_name" boolean not null default false, "send_action_links" boolean not null default false, "locations" text[] not null, "provision_source" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null, "version" int not null default 1, constraint "beta_brand_pkey" primary key ("id"));`);
    this.addSql(`alter table "beta_brand" add constraint "beta_brand_segment_id_unique" unique ("segment_id");`);

    this.addSql(`create table "competitor_scan" ("id" uuid not null, "organization_id" uuid not null, "account_id" uuid not null, "location_id" uuid not null, "place_id" text not null, "text" text not null, "radius" double precision not null, "rings" int not null, "status" text not null default 'queued', "created_by" text not null, "type" text not null default 'geo_grid', "origin" text not null, "center" jsonb not null, "competitors" jsonb not null, "client" jsonb null, "strategy" jsonb null, "dots" jsonb not null, "number_of_competitors" int not null default 0, "error" text null, "created_at" timestamptz not null, "finished_at" timestamptz null, constraint "competitor_scan_pkey" primary key ("id"));`);
    this.addSql(`create index "competitor_scan_account_id_location_id_created_at_index" on "competitor_scan" ("account_id", "location_id", "created_at");`);

    this.addSql(`alter table "beta_connection" add constraint "beta_connection_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "beta_brand" add constraint "beta_brand_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "competitor_scan" add constraint "competitor_scan_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "competitor_scan" add constraint "competitor_scan_account_id_foreign" foreign key ("account_id") references "account" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "competitor_scan" add constraint "competitor_scan_location_id_foreign" foreign key ("location_id") references "location" ("id") on update cascade on delete cascade;`);

    // Sessions made before this migration were all alpha's.
    this.addSql(`alter table "oauth_session" add column "provider" text not null default 'alpha';`);
    this.addSql(`alter table "oauth_session" alter column "provider" drop default;`);
    this.addSql(`alter table "oauth_session" alter column "code_verifier" type text using ("code_verifier"::text);`);
    this.addSql(`alter table "oauth_session" alter column "code_verifier" drop not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "beta_connection" cascade;`);

    this.addSql(`drop table if exists "beta_brand" cascade;`);

    this.addSql(`drop table if exists "competitor_scan" cascade;`);

    this.addSql(`alter table "oauth_session" drop column "provider";`);

    this.addSql(`alter table "oauth_session" alter column "code_verifier" type text using ("code_verifier"::text);`);
    this.addSql(`alter table "oauth_session" alter column "code_verifier" set not null;`);
  }
}
