import { Migration } from '@mikro-orm/migrations';

/**
 * `lg_refuse(code, detail)` ends the statement that calls it with the error `code` (an SQLSTATE of ours) carrying
 * `detail`: a rate limit counted by the statement of the change it admits refuses that change, and everything the
 * statement wrote with it, in the same round trip (src/limits/rate-limiter.ts, docs/write-path.md).
 */
export class Migration20261130000000_RefusalsInStatements extends Migration {
  override up(): void {
    this.addSql(`create function lg_refuse(p_code text, p_detail jsonb) returns boolean language plpgsql volatile as $fn$
      begin
        raise exception using errcode = p_code, message = 'refused: ' || p_code, detail = p_detail::text;
      end
      $fn$;`);
  }

  override down(): void {
    this.addSql('drop function if exists lg_refuse(text, jsonb);');
  }
}
