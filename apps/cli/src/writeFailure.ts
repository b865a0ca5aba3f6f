/**
 * The host's rule for a failed write (docs/decisions.md): a store error that says the data dir
 * could not be written or may not be followed — `IoFailed` (a full disk, EIO, EACCES, EROFS at any
 * step) or `SymlinkInDataDir` — is printed as exactly one stderr line holding the store's own
 * sentence (operation and errno, never a prompt or a row), and the command exits 1.
 *
 * One exception, for the commands that plan (`resume plan`, `resume`): a repair the data directory
 * itself refuses (read-only, not permitted, a link or a file where maka keeps its own) does not stop
 * them. Retrying would not help and the session's files are still there to read, so the command says
 * in one stderr line per session what recovery would have repaired, and the session's plan parks
 * with `recovery_unwritable`.
 */
import { relative, isAbsolute, basename, dirname, join } from 'node:path'
import type { RecoveryAction, RecoveryReport } from '@maka/executor'
import type { RecoveryRefusal } from '@maka/planner'
import type { StoreError } from '@maka/stores'
import { WriteFailedError } from './ExitCode.js'

/**
 * A session the data directory did not let recovery repair, as the recovery report gives it.
 * @category models
 */
export type UnwritableSession = RecoveryReport['unwritable'][number]

type PendingRepair = UnwritableSession['pending'][number]

/**
 * The sentence of a failed write, or null when the error is something else (or absent).
 * @category guards
 */
export const failedWriteSentence = (error: StoreError | undefined): string | null =>
  error !== undefined && (error._tag === 'IoFailed' || error._tag === 'SymlinkInDataDir') ? error.message : null

/**
 * Throws `WriteFailedError` (one stderr line, exit 1) for the first recovery action that a failed
 * write left undone: a repair that could not be written must not read as "nothing to repair".
 * Actions of the sessions in `excused` are left out (their refusal is reported another way).
 * @category guards
 */
export const requireRecoveryWritten = (
  actions: ReadonlyArray<RecoveryAction>,
  excused: ReadonlySet<string> = new Set(),
): void => {
  for (const action of actions) {
    if (excused.has(action.sessionId)) continue
    const sentence = failedWriteSentence(action.error)
    if (sentence !== null) throw new WriteFailedError(`recovery stopped: ${sentence}`)
  }
}

// A store writes through a temp file named `.<target>.<pid>.<random>.tmp` beside its target; the
// refusal is about the target, and a name that changes every run would make the plan unstable.
const TEMP_NAME = /^\.(.+)\.\d+\.[0-9a-f]+\.tmp$/

// The refused path inside the data dir: file stores give absolute paths, row stores
// `<file>#<layout path>`.
const pathInDataDir = (dataDir: string, path: string): string => {
  const inside = relative(dataDir, path)
  const layout =
    inside !== '' && !inside.startsWith('..') && !isAbsolute(inside)
      ? inside
      : path.includes('#')
        ? path.slice(path.lastIndexOf('#') + 1)
        : path
  const temp = TEMP_NAME.exec(basename(layout))
  return temp?.[1] === undefined ? layout : join(dirname(layout), temp[1])
}

/**
 * The planner's view of a refusal: the fs step, the errno name (or `SymlinkInDataDir`, found by
 * `lstat`) and the path relative to the data directory.
 * @category constructors
 */
export const refusalOf = (dataDir: string, error: StoreError): RecoveryRefusal => {
  switch (error._tag) {
    case 'SymlinkInDataDir':
      return { operation: 'lstat', code: error._tag, path: error.relativePath }
    case 'IoFailed':
      return { operation: error.operation, code: error.code, path: pathInDataDir(dataDir, error.path) }
    default:
      // Only the two tags above are ever judged a refusal (`isDataDirRefusal`).
      return { operation: 'unknown', code: error._tag, path: '' }
  }
}

const pendingWords = (repair: PendingRepair): string => {
  switch (repair.kind) {
    case 'close_run':
      return `close run ${repair.runId}`
    case 'check_run_ending':
      return `check the ending of run ${repair.runId}`
    case 'fail_shell_run':
      return `mark shell run ${repair.shellRunId} failed`
    case 'close_abandoned_claim':
      return `close the never-started continuation ${repair.runId}`
  }
}

// A session with many broken runs still gets one short line.
const SHOWN_REPAIRS = 5

const listOf = (items: ReadonlyArray<string>): string => {
  const shown =
    items.length > SHOWN_REPAIRS ? [...items.slice(0, SHOWN_REPAIRS), `${items.length - SHOWN_REPAIRS} more`] : items
  return shown.length <= 1 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1) ?? ''}`
}

/**
 * The one stderr line of a session recovery could not repair: the refusal, what recovery would have
 * done (identities only), and whether anything was written.
 * @category constructors
 */
export const unrecoveredLine = (session: UnwritableSession, refusal: RecoveryRefusal): string => {
  const cause = `${refusal.code} at ${refusal.operation} of ${refusal.path}`
  const would = session.pending.length === 0 ? '' : `: it would ${listOf(session.pending.map(pendingWords))}`
  const outcome = session.stage === 'repair' ? 'the repair stopped at that write' : 'nothing was written'
  return `maka: recovery cannot repair session ${session.sessionId} here (${cause})${would}; ${outcome}.`
}
