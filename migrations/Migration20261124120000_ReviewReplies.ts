import { Migration } from '@mikro-orm/migrations';

/**
 * A review reply that could not be sent, or whose moderation could not be followed, keeps why (reviewReplyState
 * FAILED); a review is unique per account, not across organizations (two may connect one provider account); an
 * account holds each provider location once.
 */
export class Migration20261124120000_ReviewReplies extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "review" add column "reply_error" jsonb null;`);
    this.addSql(`alter table "review" drop constraint if exists "review_reply_state_check";`);
    this.addSql(`alter table "review" add constraint "review_reply_state_check" check ("reply_state" in ('PENDING', 'ACTIVE', 'REJECTED', 'FAILED'));`);
    this.addSql(`alter table "review" drop constraint "review_name_unique";`);
    this.addSql(`alter table "review" add constraint "review_account_id_name_unique" unique ("account_id", "name");`);
    this.addSql(`alter table "location" add constraint "location_account_id_alpha_location_name_unique" unique ("account_id", "alpha_location_name");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "location" drop constraint "location_account_id_alpha_location_name_unique";`);
    this.addSql(`alter table "review" drop constraint "review_account_id_name_unique";`);
    this.addSql(`alter table "review" add constraint "review_name_unique" unique ("name");`);
    this.addSql(`alter table "review" drop column "reply_error";`);
    this.addSql(`update "review" set "reply_state" = null where "reply_state" = 'FAILED';`);
    this.addSql(`alter table "review" drop constraint if exists "review_reply_state_check";`);
    this.addSql(`alter table "review" add constraint "review_reply_state_check" check ("reply_state" in ('PENDING', 'ACTIVE', 'REJECTED'));`);
  }
}
