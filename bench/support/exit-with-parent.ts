/**
 * Preloaded (`node --require dist-dev/bench/support/exit-with-parent.js …`) into a helper server a benchmark forks with an
 * IPC channel: when the channel closes (the benchmark exited, or was killed), the helper exits too, so no baseline
 * server is left listening after a run however it ended. A process started without an IPC channel is left alone.
 */
if (typeof process.send === 'function') {
  process.on('disconnect', () => process.exit(0));
}
