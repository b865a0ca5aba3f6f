/**
 * The exit codes of `maka` (docs/contract.md §4). Scripts branch on these, so they are stable: never renumber.
 */

/**
 * Every exit code the CLI uses.
 * @category models
 */
export const ExitCode = {
  /** The command did what was asked: a run completed, a plan continues, a demo behaved. */
  ok: 0,
  /** A run or continuation failed, or a demo step did not behave as the contract says. */
  failed: 1,
  /** Bad input: unknown option or session, malformed id, unreadable data dir. Nothing was changed. */
  badInput: 2,
  /** The planner parked (or execution was rejected): resuming was refused with stable reasons. */
  parked: 3,
  /** SIGINT (Ctrl+C): the active run was cancelled (or, on a second signal, left to recovery). */
  interrupted: 130,
  /** SIGTERM: as `interrupted`, for the termination signal. */
  terminated: 143,
} as const

/**
 * An exit code.
 * @category models
 */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/**
 * Bad input found before anything was touched: printed as one line on stderr, exit 2.
 * @category errors
 */
export class BadInputError extends Error {
  override readonly name = 'BadInputError'
}

/**
 * A write to the data dir failed (a full disk, a read-only or unwritable folder, a link refused):
 * printed as one line on stderr naming the operation and the error, exit 1.
 * @category errors
 */
export class WriteFailedError extends Error {
  override readonly name = 'WriteFailedError'
}

/**
 * The chosen store cannot be reached or used (a PostgreSQL server that refuses the connection, a
 * database from a newer maka): printed as one line on stderr naming the store safely, exit 1.
 * @category errors
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError'
}

/**
 * A plan's history could not be read again as it was planned (its rows changed between the two
 * reads, or could not be read): the JSON printed so far is cut off before its end and must not be
 * used. Printed as one line on stderr, exit 1.
 * @category errors
 */
export class HistoryChangedError extends Error {
  override readonly name = 'HistoryChangedError'
}

/**
 * A ledger `maka show` was printing no longer held the rows it first read (rewritten or cut between
 * its two reads): the output printed so far is cut off before its end. One line on stderr, exit 1.
 * @category errors
 */
export class ShowCutOffError extends Error {
  override readonly name = 'ShowCutOffError'
}
