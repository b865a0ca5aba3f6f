/**
 * The host's rule for a failed write (docs/decisions.md): a store error that says the data dir
 * could not be written or may not be followed — `IoFailed` (a full disk, EIO, EACCES, EROFS at any
 * step) or `SymlinkInDataDir` — is printed as exactly one stderr line holding the store's own
 * sentence (operation and errno, never a prompt or a row), and the command exits 1.
 */
import type { RecoveryAction } from '@maka/executor'
import type { StoreError } from '@maka/stores'
import { WriteFailedError } from './ExitCode.js'

/**
 * The sentence of a failed write, or null when the error is something else (or absent).
 * @category guards
 */
export const failedWriteSentence = (error: StoreError | undefined): string | null =>
  error !== undefined && (error._tag === 'IoFailed' || error._tag === 'SymlinkInDataDir') ? error.message : null

/**
 * Throws `WriteFailedError` (one stderr line, exit 1) for the first recovery action that a failed
 * write left undone: a repair that could not be written must not read as "nothing to repair".
 * @category guards
 */
export const requireRecoveryWritten = (actions: ReadonlyArray<RecoveryAction>): void => {
  for (const action of actions) {
    const sentence = failedWriteSentence(action.error)
    if (sentence !== null) throw new WriteFailedError(`recovery stopped: ${sentence}`)
  }
}
