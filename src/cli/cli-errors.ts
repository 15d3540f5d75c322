/** How a CLI command fails: bad usage (exit 2, with the usage), or a failure it explains in one line (exit 1). */
export class UsageError extends Error {}

export class CommandFailed extends Error {}
