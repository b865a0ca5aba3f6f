/**
 * Ctrl+C is not a crash. While a command runs a turn or a continuation, the first SIGINT or SIGTERM
 * asks the runtime to cancel it (the run then ends `cancelled`, `user_interrupted`, durably, and
 * its owner lock is released); the command says one line and exits 130 (SIGTERM: 143). A second
 * signal exits at once, like a crash: the run stays non-terminal and startup recovery closes it as
 * `app_restarted`. A signal while no run is active exits at once too — nothing needs closing.
 */
import { ExitCode } from './ExitCode.js'

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
    // Signals that arrive together are handled in one turn of the event loop, with the microtasks in
    // between; a cancel whose writes are synchronous (decision 68) could finish there, before the
    // second is seen. Starting it on the next turn keeps two signals at once meaning "exit now".
    setImmediate(() => {
      if (exited) return
      cancelling = options.cancel()
      if (cancelling === null) exitNow(exitCodeOfSignal(signal), 'maka: interrupted.')
    })
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
