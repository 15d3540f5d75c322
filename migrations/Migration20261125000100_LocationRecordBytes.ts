import { Migration } from '@mikro-orm/migrations';

/**
 * Each location keeps the size of its row as JSON (`record_bytes`), measured by PostgreSQL on every insert and
 * update, whatever wrote it: a page of locations ends at a byte budget (docs/locations.md) by summing these, without
 * rendering rows it will not send.
 */
export class Migration20261125000100_LocationRecordBytes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "location" add column "record_bytes" int not null default 0;`);
    this.addSql(`create function location_record_bytes() returns trigger language plpgsql as $fn$
      begin
        -- Measured with itself at 0, so the size does not depend on the previous one.
        new.record_bytes := 0;
        new.record_bytes := octet_length(row_to_json(new)::text);
        return new;
      end
      $fn$;`);
    this.addSql(`create trigger "location_record_bytes" before insert or update on "location" for each row execute function location_record_bytes();`);
    // The trigger measures the rows already there.
    this.addSql(`update "location" set "record_bytes" = 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "location_record_bytes" on "location";`);
    this.addSql(`drop function if exists location_record_bytes();`);
    this.addSql(`alter table "location" drop column "record_bytes";`);
  }
}
