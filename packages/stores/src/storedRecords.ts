/**
 * The record rules every store that keeps records as stored texts (a database row per header,
 * claim or shell run) shares with the file stores: a text that does not parse, does not decode or
 * names other ids than its place is `Unreadable`; a listed shell run whose id the store never writes
 * fails the whole listing closed (decision 60).
 */
import { decodeWith, ShellRun, ShellRunId } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import type { ShellRunListing } from './ShellRunStore.js'
import { type StoreError, unreadable } from './StoreError.js'

const decodeShellRun = decodeWith(ShellRun)

/**
 * Decodes one stored record text at `at` (a path-like place, for the error).
 * @category constructors
 */
export const decodeStoredRecord = <A>(
  text: string,
  at: string,
  decode: (u: unknown) => E.Either<string, A>,
  sameIds: (a: A) => boolean,
): E.Either<StoreError, A> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return E.left(unreadable(at, 'record is not valid JSON'))
  }
  const decoded = decode(parsed)
  if (E.isLeft(decoded)) return E.left(unreadable(at, decoded.left))
  return sameIds(decoded.right) ? decoded : E.left(unreadable(at, 'the record names other ids than its place'))
}

/**
 * The listing of a session's stored shell runs, given as (id, record text) rows in listing order.
 * @category constructors
 */
export const listStoredShellRuns = (
  sessionId: string,
  rows: ReadonlyArray<{ readonly shellRunId: string; readonly record: string }>,
  whereOf: (sessionId: string, shellRunId: string) => string,
): E.Either<StoreError, ReadonlyArray<ShellRunListing>> => {
  const listed: Array<ShellRunListing> = []
  for (const { shellRunId, record } of rows) {
    if (!ShellRunId.is(shellRunId)) return E.left(unreadable(whereOf(sessionId, shellRunId), 'shell run id is invalid'))
    const decoded = decodeStoredRecord(
      record,
      whereOf(sessionId, shellRunId),
      decodeShellRun,
      (r) => r.sessionId === sessionId && r.shellRunId === shellRunId,
    )
    listed.push(E.isRight(decoded) ? { shellRunId, shellRun: decoded.right } : { shellRunId, error: decoded.left })
  }
  return E.right(listed)
}
