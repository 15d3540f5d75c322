/**
 * The embedded PostgreSQL cannot run with this layout, for a reason the user must fix (a directory out of the
 * `postgres` user's reach, a cluster without its connection facts). Its message is one line, meant to be printed
 * alone: `npm start` and the CLI print it and exit 78.
 */
export class DatabaseSetupError extends Error {
  override readonly name = 'DatabaseSetupError';
}
