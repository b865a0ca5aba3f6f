/**
 * Ctrl+C is not a crash. While a command runs a turn or a continuation, the first SIGINT or SIGTERM
 * asks the runtime to cancel it (the run then ends `cancelled`, `user_interrupted`, durably, and
 * its owner lock is released); the command says one line and exits 130 (SIGTERM: 143). A second
 * signal exits at once, like a crash: the run stays non-terminal and startup recovery closes it as
 * `app_restarted`. A signal while no run is active exits at once too — nothing needs closing.
 */
import { ExitCode } from './ExitCode.js'

/**
 * How long after the first signal a second one still counts as sent together with it.
 * @category constants
 */
export const SECOND_SIGNAL_GRACE_MS = 100

/**
 * The signals a command traps.
 * @category models
 */
export type InterruptSignal = 'SIGINT' | 'SIGTERM'

/**
 * The exit code for a signal: 128 + its number, as shells report it.
 * @category constructors
 */
export const exitCodeOfSignal = (signal: InterruptSignal): ExitCode =>
  signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.terminated

/**
 * A trap installed for the length of one command.
 * @category models
 */
export interface InterruptTrap {
  /** The first signal received, if any. */
  readonly received: () => InterruptSignal | null
  /** Handles a signal as if the process had received it (the TUI's Ctrl+C key). */
  readonly interrupt: (signal: InterruptSignal) => void
  readonly dispose: () => void
}

/**
 * Traps SIGINT and SIGTERM. `cancel` cancels the active run and returns its id, or null when none
 * is active; `exitNow` ends the process (the default writes a line and calls `process.exit`).
 * @category constructors
 */
export const trapInterrupts = (options: {
  readonly cancel: () => string | null
  readonly exitNow?: (code: ExitCode, line: string) => void
}): InterruptTrap => {
  const exitNow =
    options.exitNow ??
    ((code: ExitCode, line: string) => {
      process.stderr.write(`${line}\n`)
      process.exit(code)
    })
  let first: InterruptSignal | null = null
  let cancelling: string | null = null
  let exited = false
  const interrupt = (signal: InterruptSignal): void => {
    if (first !== null) {
      exited = true
      exitNow(
        exitCodeOfSignal(first),
        cancelling === null
          ? 'maka: interrupted again; exiting now.'
          : `maka: interrupted again; exiting now (run ${cancelling} is left to startup recovery).`,
      )
      return
    }
    first = signal
    // Signals sent together are not always handled in one turn of the event loop: the kernel may hand
    // the second to the loop a turn later, and a cancel with no disk wait before its first write (a
    // ledger kept open, decision 168) can finish in that turn. The cancel starts a moment later, so two
    // signals sent together (or a double Ctrl+C) still mean "exit now" (decision 176).
    setTimeout(() => {
      if (exited) return
      cancelling = options.cancel()
      if (cancelling === null) exitNow(exitCodeOfSignal(signal), 'maka: interrupted.')
    }, SECOND_SIGNAL_GRACE_MS)
  }
  const onSigint = () => interrupt('SIGINT')
  const onSigterm = () => interrupt('SIGTERM')
  process.on('SIGINT', onSigint)
  process.on('SIGTERM', onSigterm)
  return {
    received: () => first,
    interrupt,
    dispose: () => {
      process.off('SIGINT', onSigint)
      process.off('SIGTERM', onSigterm)
    },
  }
}

/**
 * The one line a command prints when its run was cancelled by a signal.
 * @category constructors
 */
export const interruptedLine = (runId: string): string => `maka: interrupted; run ${runId} cancelled`
