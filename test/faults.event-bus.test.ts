import type { Client } from 'pg';
import { eventBusOutageSuite, type BusOutage } from './support/event-bus-outage';
import { openAdmin, type CapturedLog } from './support/faults';

/**
 * The PostgreSQL event bus down (issue 15, Build 9): its listening (lg-events-listen) and publishing
 * (lg-events-publish) sessions are terminated, and kept from coming back by a login event trigger on the test's
 * own database that refuses those two application names (PostgreSQL 17 and later; the embedded one is 18). Older
 * servers only see the sessions terminated, and the bus may come back at once.
 */
function postgresOutage(): BusOutage {
  let admin: Client;
  let log: CapturedLog;
  let loginTriggers = false;
  let held = false;
  let refusedBefore = 0;
  const figures = { terminated: 0, refused: 0 };
  const BUS = `datname = current_database() and application_name like 'lg-events-%'`;
  const refusedReconnects = () => log.count((line) => line.msg === 'event listen connection: reconnect failed');

  const release = async () => {
    if (!held) return;
    held = false;
    await admin.query('drop event trigger lg_fault_refuse_bus');
    await admin.query('drop function lg_fault_refuse_bus()');
    figures.refused = refusedReconnects() - refusedBefore;
  };

  return {
    env: {},
    kind: 'refused',
    get holdsDown() {
      return loginTriggers;
    },
    async attach(t, captured) {
      log = captured;
      admin = await openAdmin(t.databaseUrl);
      const { rows } = await admin.query<{ server_version_num: string }>('show server_version_num');
      loginTriggers = Number(rows[0]!.server_version_num) >= 170000;
    },
    async cut() {
      refusedBefore = refusedReconnects();
      const lost = log.count((line) => line.msg === 'event listen connection lost; reconnecting');
      if (loginTriggers) {
        await admin.query(`create function lg_fault_refuse_bus() returns event_trigger language plpgsql as $$
          begin
            if current_setting('application_name') like 'lg-events-%' then
              raise exception 'the event bus is cut off by a fault test';
            end if;
          end $$`);
        await admin.query('create event trigger lg_fault_refuse_bus on login execute function lg_fault_refuse_bus()');
        held = true;
      }
      const { rows } = await admin.query<{ done: boolean }>(`select pg_terminate_backend(pid) as done from pg_stat_activity where ${BUS}`);
      figures.terminated += rows.filter((row) => row.done).length;
      await log.until(() => log.count((line) => line.msg === 'event listen connection lost; reconnecting') > lost, 'the listening connection to be lost');
      if (loginTriggers) await log.until(() => refusedReconnects() >= refusedBefore + 2, 'two refused reconnects of the listening connection');
    },
    restore: release,
    async connections() {
      const { rows } = await admin.query<{ app: string; n: number }>(`select application_name as app, count(*)::int as n from pg_stat_activity where ${BUS} group by 1`);
      const of = (app: string) => rows.find((row) => row.app === app)?.n ?? 0;
      return { listen: of('lg-events-listen'), publish: of('lg-events-publish') };
    },
    figures: () =>
      `bus sessions terminated ${figures.terminated}; reconnects refused while held down ${figures.refused}` +
      (loginTriggers ? ' (login event trigger)' : ' (not held down: PostgreSQL < 17)'),
    async close() {
      if (!admin) return;
      await release();
      await admin.end();
    },
  };
}

eventBusOutageSuite('the PostgreSQL event bus down (test/faults.event-bus.test.ts)', async () => postgresOutage());
