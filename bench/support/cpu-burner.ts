/**
 * One core kept busy, for `--load N` (bench/support/load.ts): forked with an IPC channel and
 * `--require exit-with-parent.js`, it spins in slices of SLICE_MS and yields between them only so that the closing
 * channel (the benchmark ended, however) is seen and the process exits.
 */
const SLICE_MS = 50;

let sink = 0;
function burn(): void {
  const until = performance.now() + SLICE_MS;
  // Arithmetic the compiler cannot drop, until the slice is over.
  while (performance.now() < until) sink = (sink + Math.sqrt(sink + 1)) % 1e9;
  setImmediate(burn);
}
burn();
