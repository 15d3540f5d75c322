import { Migration } from '@mikro-orm/migrations';

/** A review reply that could not be sent, or whose moderation could not be followed, keeps why (reviewReplyState FAILED). */
export class Migration20261124120000_ReplyError extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "review" add column "reply_error" jsonb null;`);
    this.addSql(`alter table "review" drop constraint if exists "review_reply_state_check";`);
    this.addSql(`alter table "review" add constraint "review_reply_state_check" check ("reply_state" in ('PENDING', 'ACTIVE', 'REJECTED', 'FAILED'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "review" drop column "reply_error";`);
    this.addSql(`update "review" set "reply_state" = null where "reply_state" = 'FAILED';`);
    this.addSql(`alter table "review" drop constraint if exists "review_reply_state_check";`);
    this.addSql(`alter table "review" add constraint "review_reply_state_check" check ("reply_state" in ('PENDING', 'ACTIVE', 'REJECTED'));`);
  }
}
