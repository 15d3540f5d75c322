import type { CpuReading } from './cpu';
import { topShapes, type WireCounts } from './pg-count-proxy';
import { ms, table, type Summary } from './stats';

/**
 * The figures bench/posts and bench/locations print beside their own: per unit of work (a post, an update job)
 * what went to PostgreSQL on the wire and the CPU it took, and the service against the plain pipeline of the same
 * run, as ratios (docs/benchmarks.md, "The plain pipeline").
 */

/** One run of a pipeline: `units` finished (posts LIVE, jobs SUCCEEDED). */
export interface PipelineRun {
  name: string;
  units: number;
  wire: WireCounts | undefined;
  cpu: CpuReading;
}

/** A run's figures per unit, undefined where unknown. */
function perUnit(run: PipelineRun) {
  const per = (value: number | undefined) => (value === undefined || run.units === 0 ? undefined : value / run.units);
  return {
    statements: per(run.wire?.statements),
    roundTrips: per(run.wire?.roundTrips),
    notifies: per(run.wire?.notifies),
    begins: per(run.wire?.begins),
    serverCpuMs: per(run.cpu.server === undefined ? undefined : run.cpu.server * 1000),
    postgresCpuMs: per(run.cpu.postgres === undefined ? undefined : run.cpu.postgres * 1000),
  };
}

/** Statements, round trips, NOTIFYs and BEGINs per unit, and server and PostgreSQL CPU per unit, of each run. */
export function printWire(unit: string, runs: PipelineRun[]): void {
  if (runs.length === 0) return;
  console.log('');
  console.log(`Per ${unit}: on the wire to PostgreSQL (every statement of the pipeline's processes during the run, counted by a proxy) and CPU`);
  const rows = [['run', `${unit}s`, 'statements', 'round trips', 'NOTIFYs', 'BEGINs', 'server CPU ms', 'pg CPU ms']];
  for (const run of runs) {
    const figures = perUnit(run);
    rows.push([
      run.name,
      String(run.units),
      ms(figures.statements),
      ms(figures.roundTrips),
      ms(figures.notifies, 2),
      ms(figures.begins, 2),
      ms(figures.serverCpuMs, 2),
      ms(figures.postgresCpuMs, 2),
    ]);
  }
  console.log(table(rows));
}

/** One side of the comparison: a run, its throughput and its latency from the request to the end. */
export interface ComparedRun extends PipelineRun {
  perSecond: number | undefined;
  latency: Summary;
}

/**
 * The service's run against the plain pipeline's: each figure and service/plain. A throughput ratio under 1 and a
 * cost ratio over 1 are what the service has still to win back.
 */
export function printComparison(unit: string, latencyName: string, service: ComparedRun, plain: ComparedRun): Record<string, unknown> {
  const s = perUnit(service);
  const p = perUnit(plain);
  const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || b === 0 ? undefined : a / b);
  const figures: [string, number | undefined, number | undefined, number][] = [
    [`${unit}s/s`, service.perSecond, plain.perSecond, 1],
    [`${latencyName} p50 ms`, service.latency.p50, plain.latency.p50, 1],
    [`${latencyName} p95 ms`, service.latency.p95, plain.latency.p95, 1],
    [`server CPU ms/${unit}`, s.serverCpuMs, p.serverCpuMs, 2],
    [`PostgreSQL CPU ms/${unit}`, s.postgresCpuMs, p.postgresCpuMs, 2],
    [`statements/${unit}`, s.statements, p.statements, 1],
    [`round trips/${unit}`, s.roundTrips, p.roundTrips, 1],
  ];
  console.log('');
  console.log(`The service (${service.name}) against the plain pipeline (${plain.name}), same ${unit}s, same concurrency, same sandbox process`);
  console.log(
    table([
      ['figure', 'service', 'plain', 'service/plain'],
      ...figures.map(([name, a, b, digits]) => [name, ms(a, digits), ms(b, digits), ms(ratio(a, b), 2)]),
    ]),
  );
  return Object.fromEntries(figures.map(([name, a, b]) => [name, { service: a, plain: b, ratio: ratio(a, b) }]));
}

/**
 * A statement shape for reading: long column lists as `…` (`select … from "post" as "p0" where …`), so that the
 * table and the conditions show in one line.
 */
export function abbreviate(shape: string, max = 200): string {
  const short = shape
    .replace(/^(select (?:distinct )?)(.{40,}?)( from )/i, '$1…$3')
    .replace(/\(([^()]{40,})\)/g, '(…)')
    .replace(/ returning .{40,}$/i, ' returning …');
  return short.length > max ? `${short.slice(0, max - 1)}…` : short;
}

/** The commonest statement shapes of a run, with their count per unit: what there is to cut. */
export function printShapes(title: string, unit: string, run: PipelineRun, top = 15): void {
  if (!run.wire) return;
  console.log('');
  console.log(`${title}: the ${top} commonest statement shapes (count in the run, per ${unit}; $n as ?, literals and long lists as …)`);
  // Shapes are long: left-aligned after the counts, not a table column.
  console.log(`${'count'.padStart(7)}  ${`per ${unit}`.padStart(8)}  statement`);
  for (const [shape, count] of topShapes(run.wire, top)) {
    console.log(`${String(count).padStart(7)}  ${(run.units > 0 ? ms(count / run.units, 2) : 'n/a').padStart(8)}  ${abbreviate(shape)}`);
  }
}
