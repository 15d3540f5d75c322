import { Migration } from '@mikro-orm/migrations';

/**
 * Connecting alpha accounts: consents in progress, the identities they authorize (tokens sealed), the accounts'
 * import progress, reviews with their replies, and the organization's billing subscription.
 */
export class Migration20261124045725_Connections extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "billing_subscription" ("organization_id" uuid not null, "quantity" int not null, "updated_at" timestamptz not null, constraint "billing_subscription_pkey" primary key ("organization_id"));`);
    this.addSql(`alter table "billing_subscription" add constraint "billing_subscription_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);

    this.addSql(`create table "alpha_identity" ("id" uuid not null, "organization_id" uuid not null, "subject" text not null, "email" text null, "name" text null, "access_token" text not null, "access_token_expires_at" timestamptz not null, "refresh_token" text null, "scopes" text[] not null, "redirect_url" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "alpha_identity_pkey" primary key ("id"));`);
    this.addSql(`alter table "alpha_identity" add constraint "alpha_identity_organization_id_subject_unique" unique ("organization_id", "subject");`);

    this.addSql(`create table "oauth_session" ("id" uuid not null, "organization_id" uuid not null, "state_hash" text not null, "caller_state" text null, "redirect_url" text not null, "code_verifier" text not null, "expires_at" timestamptz not null, "status" text check ("status" in ('PENDING', 'AUTHORIZED', 'FAILED', 'CONNECTED')) not null default 'PENDING', "identity_id" uuid null, "token_refreshed" boolean not null default false, "created_at" timestamptz not null, "completed_at" timestamptz null, constraint "oauth_session_pkey" primary key ("id"));`);
    this.addSql(`alter table "oauth_session" add constraint "oauth_session_state_hash_unique" unique ("state_hash");`);

    this.addSql(`create table "review" ("id" uuid not null, "organization_id" uuid not null, "account_id" uuid not null, "location_id" uuid not null, "name" text not null, "reviewer_name" text null, "reviewer_photo_url" text null, "reviewer_anonymous" boolean not null default false, "star_rating" smallint not null, "comment" text null, "create_time" timestamptz not null, "update_time" timestamptz not null, "reply_comment" text null, "reply_update_time" timestamptz null, "reply_state" text check ("reply_state" in ('PENDING', 'ACTIVE', 'REJECTED')) null, "deleted_at" timestamptz null, "version" int not null default 1, constraint "review_pkey" primary key ("id"));`);
    this.addSql(`alter table "review" add constraint "review_name_unique" unique ("name");`);
    this.addSql(`create index "review_location_id_create_time_index" on "review" ("location_id", "create_time");`);

    this.addSql(`alter table "alpha_identity" add constraint "alpha_identity_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "oauth_session" add constraint "oauth_session_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "oauth_session" add constraint "oauth_session_identity_id_foreign" foreign key ("identity_id") references "alpha_identity" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "review" add constraint "review_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "review" add constraint "review_account_id_foreign" foreign key ("account_id") references "account" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "review" add constraint "review_location_id_foreign" foreign key ("location_id") references "location" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "account" add column "alpha_identity_id" uuid null, add column "sync_status" text check ("sync_status" in ('NONE', 'QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED')) not null default 'NONE', add column "sync_progress" jsonb null, add column "sync_error" text null, add column "last_synced_at" timestamptz null;`);
    this.addSql(`alter table "account" add constraint "account_alpha_identity_id_foreign" foreign key ("alpha_identity_id") references "alpha_identity" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "account" add constraint "account_organization_id_alpha_account_id_unique" unique ("organization_id", "alpha_account_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "oauth_session" drop constraint "oauth_session_identity_id_foreign";`);

    this.addSql(`alter table "account" drop constraint "account_alpha_identity_id_foreign";`);

    this.addSql(`drop table if exists "billing_subscription" cascade;`);

    this.addSql(`drop table if exists "alpha_identity" cascade;`);

    this.addSql(`drop table if exists "oauth_session" cascade;`);

    this.addSql(`drop table if exists "review" cascade;`);

    this.addSql(`alter table "account" drop constraint "account_organization_id_alpha_account_id_unique";`);
    this.addSql(`alter table "account" drop column "alpha_identity_id", drop column "sync_status", drop column "sync_progress", drop column "sync_error", drop column "last_synced_at";`);
  }
}
