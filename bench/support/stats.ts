/** Percentiles and table formatting for the benchmarks. Nothing here asserts: figures are only reported. */

export interface Summary {
  count: number;
  p50: number | undefined;
  p95: number | undefined;
  p99: number | undefined;
  max: number | undefined;
}

/** Nearest-rank percentile of values already sorted ascending; undefined for an empty sample. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function summarize(values: ArrayLike<number>): Summary {
  // A typed array sorts numerically and fast, which matters for the ~200k samples of the fan-out run.
  const sorted = Float64Array.from(values).sort();
  return {
    count: sorted.length,
    p50: percentileOfSorted(sorted, 50),
    p95: percentileOfSorted(sorted, 95),
    p99: percentileOfSorted(sorted, 99),
    max: sorted.length > 0 ? sorted[sorted.length - 1] : undefined,
  };
}

/** A growable Float64 sample buffer: the fan-out run records one sample per (subscriber, event). */
export class Samples {
  private buffer = new Float64Array(1024);
  private size = 0;

  push(value: number): void {
    if (this.size === this.buffer.length) {
      const grown = new Float64Array(this.buffer.length * 2);
      grown.set(this.buffer);
      this.buffer = grown;
    }
    this.buffer[this.size++] = value;
  }

  get length(): number {
    return this.size;
  }

  values(): Float64Array {
    return this.buffer.subarray(0, this.size);
  }
}

export function ms(value: number | undefined, digits = 1): string {
  return value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);
}

/** A plain-text table: the first row is the header; numbers line up on the right. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ');
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n');
}
