/**
 * The failures of the file stores: one `_tag`ged union carried in every `TaskEither`, so callers can
 * map each one to a stable rejection code (`target_run_conflict`, `source_run_unreadable`, …)
 * without parsing messages. Every member has a human `message`; none ever holds a row's values.
 */
import type { ContinuationClaim, OwnerLock } from '@maka/events'
import type { LedgerProblem } from './LedgerSnapshot.js'
import * as E from 'fp-ts/lib/Either.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * An id that would name a file or folder does not match `^[A-Za-z0-9_-]{1,128}$`; nothing was touched.
 * @category errors
 */
export interface InvalidId {
  readonly _tag: 'InvalidId'
  readonly field: string
  readonly value: unknown
  readonly message: string
}

/**
 * A record handed to a store does not have its exact shape, or contradicts itself.
 * @category errors
 */
export interface InvalidRecord {
  readonly _tag: 'InvalidRecord'
  readonly record: string
  readonly reason: string
  readonly message: string
}

/**
 * A file the operation needs does not exist.
 * @category errors
 */
export interface NotFound {
  readonly _tag: 'NotFound'
  readonly path: string
  readonly message: string
}

/**
 * A record file exists but is not valid JSON, fails its codec, or disagrees with its path.
 * @category errors
 */
export interface Unreadable {
  readonly _tag: 'Unreadable'
  readonly path: string
  readonly reason: string
  readonly message: string
}

/**
 * An append was refused because the ledger is corrupt (an unreadable row or another run's row).
 * @category errors
 */
export interface LedgerUnreadable {
  readonly _tag: 'LedgerUnreadable'
  readonly path: string
  readonly problem: LedgerProblem
  readonly message: string
}

/**
 * A second read of a ledger's committed prefix (`RuntimeEventStore.replay`) did not find the bytes
 * the first read (`fold`) hashed: fewer of them, other bytes, or a row that no longer decodes.
 * Nothing the replay handed over may be trusted. `committedBytes` is what the first read committed.
 * @category errors
 */
export interface LedgerChanged {
  readonly _tag: 'LedgerChanged'
  readonly path: string
  readonly committedBytes: number
  readonly reason: 'fewer_bytes' | 'different_bytes'
  readonly message: string
}

/**
 * A run header already exists at this path; it was left untouched.
 * @category errors
 */
export interface RunAlreadyExists {
  readonly _tag: 'RunAlreadyExists'
  readonly path: string
  readonly sessionId: string
  readonly runId: string
  readonly message: string
}

/**
 * A session header already exists at this path; it was left untouched.
 * @category errors
 */
export interface SessionAlreadyExists {
  readonly _tag: 'SessionAlreadyExists'
  readonly path: string
  readonly sessionId: string
  readonly message: string
}

/**
 * The boundary is already claimed; `existing` is the claim on disk when it could be read.
 * @category errors
 */
export interface ClaimConflict {
  readonly _tag: 'ClaimConflict'
  readonly path: string
  readonly existing?: ContinuationClaim
  readonly message: string
}

/**
 * Another live owner holds the session's `owner.lock`.
 * @category errors
 */
export interface OwnerLockHeld {
  readonly _tag: 'OwnerLockHeld'
  readonly path: string
  readonly existing: OwnerLock
  readonly message: string
}

/**
 * The caller's staleness check for an existing owner lock failed; the lock was left alone.
 * @category errors
 */
export interface StaleCheckFailed {
  readonly _tag: 'StaleCheckFailed'
  readonly path: string
  readonly message: string
}

/**
 * An append expected another committed row count; nothing was written.
 * @category errors
 */
export interface HighWaterConflict {
  readonly _tag: 'HighWaterConflict'
  readonly path: string
  readonly expected: number
  readonly actual: number
  readonly message: string
}

/**
 * An event handed to `append` names another session or run than the ledger it was appended to.
 * @category errors
 */
export interface EventIdentityMismatch {
  readonly _tag: 'EventIdentityMismatch'
  readonly path: string
  readonly field: 'sessionId' | 'runId'
  readonly message: string
}

/**
 * A filesystem call failed. `operation` is the fs step (`open`, `write`, `append`, `fsync`, `link`,
 * `rename`, `mkdir`, …), `code` its errno name (`ENOSPC`, `EIO`, `EACCES`, `EROFS`, …, `SHORT_WRITE`
 * or `UNKNOWN`), `subject` what the store was doing (`create owner.lock of session S`). `message` is
 * one sentence naming both and never holds a row's values:
 * `could not create owner.lock of session S: no space left on device (ENOSPC at link)`.
 * @category errors
 */
export interface IoFailed {
  readonly _tag: 'IoFailed'
  readonly operation: string
  readonly path: string
  readonly code: string
  readonly subject: string
  /** The error's own words, e.g. `no space left on device`. */
  readonly detail: string
  readonly message: string
}

/**
 * An entry below the data directory is a symbolic link (data dir confinement, docs/decisions.md);
 * nothing was read or written through it. `relativePath` names it inside the data directory.
 * @category errors
 */
export interface SymlinkInDataDir {
  readonly _tag: 'SymlinkInDataDir'
  readonly path: string
  readonly relativePath: string
  /** True when the link resolves outside the data directory (or cannot be resolved). */
  readonly leadsOutside: boolean
  readonly message: string
}

/**
 * Every failure a store reports.
 * @category errors
 */
export type StoreError =
  | InvalidId
  | InvalidRecord
  | NotFound
  | Unreadable
  | LedgerUnreadable
  | LedgerChanged
  | RunAlreadyExists
  | SessionAlreadyExists
  | ClaimConflict
  | OwnerLockHeld
  | StaleCheckFailed
  | HighWaterConflict
  | EventIdentityMismatch
  | IoFailed
  | SymlinkInDataDir

// -------------------------------------------------------------------------------------
// constructors (not re-exported: the package builds these, callers only read them)
// -------------------------------------------------------------------------------------

// Ids are not secrets, but a hostile one can be long or hold control characters: quote and cap it.
const quoteId = (value: unknown): string => {
  if (typeof value !== 'string') return `a ${value === null ? 'null' : typeof value}`
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value
  return JSON.stringify(shown)
}

/**
 * Builds a `InvalidId` error.
 * @category constructors
 */
export const invalidId = (field: string, value: unknown): InvalidId => ({
  _tag: 'InvalidId',
  field,
  value,
  message: `${field} ${quoteId(value)} is not a valid id (1–128 of A-Z a-z 0-9 _ -)`,
})

/**
 * Builds a `InvalidRecord` error.
 * @category constructors
 */
export const invalidRecord = (record: string, reason: string): InvalidRecord => ({
  _tag: 'InvalidRecord',
  record,
  reason,
  message: `invalid ${record}: ${reason}`,
})

/**
 * Builds a `NotFound` error.
 * @category constructors
 */
export const notFound = (path: string): NotFound => ({ _tag: 'NotFound', path, message: `${path} does not exist` })

/**
 * Builds a `Unreadable` error.
 * @category constructors
 */
export const unreadable = (path: string, reason: string): Unreadable => ({
  _tag: 'Unreadable',
  path,
  reason,
  message: `${path} is unreadable: ${reason}`,
})

/**
 * Builds a `LedgerUnreadable` error.
 * @category constructors
 */
export const ledgerUnreadable = (path: string, problem: LedgerProblem): LedgerUnreadable => ({
  _tag: 'LedgerUnreadable',
  path,
  problem,
  message:
    problem._tag === 'Unreadable'
      ? `${path} is unreadable at line ${problem.line} (${problem.reason}); appends are refused`
      : `${path} line ${problem.line} has another ${problem.field}; appends are refused`,
})

/**
 * Builds a `LedgerChanged` error; its sentence never quotes a row.
 * @category constructors
 */
export const ledgerChanged = (
  path: string,
  committedBytes: number,
  reason: LedgerChanged['reason'],
): LedgerChanged => ({
  _tag: 'LedgerChanged',
  path,
  committedBytes,
  reason,
  message: `the ledger changed between two reads of its committed rows: ${path} ${
    reason === 'fewer_bytes'
      ? `no longer holds the ${committedBytes} bytes read before`
      : `differs within the first ${committedBytes} bytes read before`
  }; nothing read from it may be trusted`,
})

/**
 * Builds a `RunAlreadyExists` error.
 * @category constructors
 */
export const runAlreadyExists = (path: string, sessionId: string, runId: string): RunAlreadyExists => ({
  _tag: 'RunAlreadyExists',
  path,
  sessionId,
  runId,
  message: `run ${runId} of session ${sessionId} already exists`,
})

/**
 * Builds a `SessionAlreadyExists` error.
 * @category constructors
 */
export const sessionAlreadyExists = (path: string, sessionId: string): SessionAlreadyExists => ({
  _tag: 'SessionAlreadyExists',
  path,
  sessionId,
  message: `session ${sessionId} already exists`,
})

/**
 * Builds a `ClaimConflict` error.
 * @category constructors
 */
export const claimConflict = (path: string, existing: ContinuationClaim | undefined): ClaimConflict => ({
  _tag: 'ClaimConflict',
  path,
  ...(existing === undefined ? {} : { existing }),
  message:
    existing === undefined ? `${path} is already claimed` : `${path} is already claimed by run ${existing.targetRunId}`,
})

/**
 * Builds a `OwnerLockHeld` error.
 * @category constructors
 */
export const ownerLockHeld = (path: string, existing: OwnerLock): OwnerLockHeld => ({
  _tag: 'OwnerLockHeld',
  path,
  existing,
  message: `${path} is held by pid ${existing.pid} on ${existing.hostname} (started ${existing.startedAt})`,
})

/**
 * Builds a `StaleCheckFailed` error.
 * @category constructors
 */
export const staleCheckFailed = (path: string, cause: unknown): StaleCheckFailed => ({
  _tag: 'StaleCheckFailed',
  path,
  message: `could not tell whether ${path} is stale: ${cause instanceof Error ? cause.message : String(cause)}`,
})

/**
 * Builds a `HighWaterConflict` error.
 * @category constructors
 */
export const highWaterConflict = (path: string, expected: number, actual: number): HighWaterConflict => ({
  _tag: 'HighWaterConflict',
  path,
  expected,
  actual,
  message: `${path} holds ${actual} committed rows, expected ${expected}; nothing was written`,
})

/**
 * Builds a `EventIdentityMismatch` error.
 * @category constructors
 */
export const eventIdentityMismatch = (path: string, field: 'sessionId' | 'runId'): EventIdentityMismatch => ({
  _tag: 'EventIdentityMismatch',
  path,
  field,
  message: `the event's ${field} differs from the ledger's at ${path}; nothing was written`,
})

/**
 * Builds a `IoFailed` error.
 * @category constructors
 */
export const ioFailed = (operation: string, path: string, cause: unknown): IoFailed => {
  const code = errnoCode(cause) ?? 'UNKNOWN'
  return withSubject(
    { _tag: 'IoFailed', operation, path, code, subject: '', detail: errnoDetail(code, cause), message: '' },
    `${operation} ${path}`,
  )
}

/**
 * The `IoFailed` of a consumer that a fold or replay handed rows to and that threw or rejected
 * (operation `deliver`): its errno name when it has one (`EPIPE`), else `CONSUMER_FAILED`. Its own
 * words are never repeated, as they may quote what it was handed.
 * @category constructors
 */
export const consumerFailed = (path: string, cause: unknown): IoFailed =>
  ioFailed(
    'deliver',
    path,
    Object.assign(new Error('the consumer of the rows failed'), { code: errnoCode(cause) ?? 'CONSUMER_FAILED' }),
  )

/**
 * Hands a batch of a replay to its consumer and awaits it: a consumer that rejects ends the replay
 * with {@link consumerFailed}. An empty batch is not handed over.
 * @category constructors
 */
export const deliverBatch = async <A>(
  onRows: (rows: ReadonlyArray<A>) => void | Promise<void>,
  rows: ReadonlyArray<A>,
  path: string,
): Promise<E.Either<IoFailed, void>> => {
  if (rows.length === 0) return E.right(undefined)
  try {
    await onRows(rows)
    return E.right(undefined)
  } catch (thrown) {
    return E.left(consumerFailed(path, thrown))
  }
}

/**
 * The end of a replay: the digest of what was read again against the one the fold reported.
 * @category constructors
 */
export const replayVerdict = (
  digest: string,
  expected: { readonly committedBytes: number; readonly digest: string },
  path: string,
): E.Either<LedgerChanged, void> =>
  digest === expected.digest
    ? E.right(undefined)
    : E.left(ledgerChanged(path, expected.committedBytes, 'different_bytes'))

/**
 * Names what the store was doing when an fs step failed; other errors pass unchanged.
 * @category constructors
 */
export const withSubject = <E extends StoreError>(e: E, subject: string): E =>
  e._tag === 'IoFailed'
    ? { ...e, subject, message: `could not ${subject}: ${e.detail} (${e.code} at ${e.operation})` }
    : e

/**
 * Builds a `SymlinkInDataDir` error.
 * @category constructors
 */
export const symlinkInDataDir = (path: string, relativePath: string, leadsOutside: boolean): SymlinkInDataDir => ({
  _tag: 'SymlinkInDataDir',
  path,
  relativePath,
  leadsOutside,
  message: `${relativePath} in the data directory is a symbolic link${
    leadsOutside ? ' that leads outside it' : ''
  }; maka does not follow links inside its data directory`,
})

// The same words for a real errno and an injected one, without the path node appends.
const ERRNO_DETAIL: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EIO: 'input/output error',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EFBIG: 'file too large',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in system',
  ENOTDIR: 'not a directory',
  EISDIR: 'is a directory',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
  ENOENT: 'no such file or directory',
  EEXIST: 'file already exists',
  EBUSY: 'resource busy',
}

const errnoDetail = (code: string, cause: unknown): string => {
  const known = ERRNO_DETAIL[code]
  if (known !== undefined) return known
  const raw = cause instanceof Error ? cause.message : String(cause)
  // Node's form is "CODE: words, syscall 'path'"; keep the words.
  return raw.replace(/^[A-Z_]+: /, '').replace(/, \w+ '.*$/, '')
}

/**
 * The `code` of a thrown error, if it has one: an errno name from Node.js, a SQLSTATE from a
 * database server. Pure (it reads a property), so the one reader lives in the contract and every
 * adapter, the inspector and the hosts name a failure in the same words (decision 55).
 * @category guards
 */
export const errnoCode = (cause: unknown): string | undefined =>
  typeof cause === 'object' && cause !== null && typeof (cause as { code?: unknown }).code === 'string'
    ? (cause as { code: string }).code
    : undefined

// -------------------------------------------------------------------------------------
// destructors
// -------------------------------------------------------------------------------------

/**
 * One human sentence for a store error, prefixed with its stable tag.
 * @category errors
 */
export const describeStoreError = (e: StoreError): string => `${e._tag}: ${e.message}`
