/**
 * Reads only the last complete row of a ledger: the tail of the file, not the whole of it. Startup
 * recovery uses it to confirm that a terminal header's run ends with its terminal event without
 * decoding every row of every run; anything it cannot tell from the tail is answered `null`, and
 * the caller falls back to the full read.
 */
import { isUtf8 } from 'node:buffer'
import { constants } from 'node:fs'
import type { RuntimeEvent } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { decodeParsedRow, ioFailed, notFound, type LedgerIdentity } from '@maka/stores'
import { isErrno, openConfined, type Outcome, type StoreContext } from './durableFs.js'

// A terminal row is a few hundred bytes; a longer last row is left to the full read.
const TAIL_BYTES = 1 << 14
const NEWLINE = 0x0a

/**
 * The last newline-terminated row, decoded: `null` when there is none, it is longer than the tail
 * window, it does not decode to the exact shape, or it belongs to another run. Missing → `NotFound`.
 * @category constructors
 */
export const readLastRow = async (
  context: StoreContext,
  path: string,
  identity: LedgerIdentity,
): Outcome<RuntimeEvent | null> => {
  // Confined like every read: a ledger that is a link, or lies behind one, is refused.
  const opened = await openConfined(context, 'read', path, constants.O_RDONLY)
  if (E.isLeft(opened)) return isErrno(opened.left, 'ENOENT') ? E.left(notFound(path)) : opened
  const handle = opened.right
  try {
    const { size } = await handle.stat()
    const length = Math.min(size, TAIL_BYTES)
    const buffer = Buffer.allocUnsafe(length)
    let filled = 0
    while (filled < length) {
      const { bytesRead } = await handle.read(buffer, filled, length - filled, size - length + filled)
      if (bytesRead === 0) break
      filled += bytesRead
    }
    return E.right(lastRowOf(buffer.subarray(0, filled), size - length === 0, identity))
  } catch (cause) {
    return E.left(ioFailed('read', path, cause))
  } finally {
    await handle.close().catch(() => undefined)
  }
}

const lastRowOf = (tail: Buffer, startsAtFileStart: boolean, identity: LedgerIdentity): RuntimeEvent | null => {
  // Bytes after the last newline are a torn row, never part of the committed prefix.
  const end = tail.lastIndexOf(NEWLINE)
  if (end === -1) return null
  const before = end === 0 ? -1 : tail.lastIndexOf(NEWLINE, end - 1)
  if (before === -1 && !startsAtFileStart) return null
  // `toString` would turn invalid bytes into U+FFFD and let a damaged row pass.
  if (!isUtf8(tail.subarray(before + 1, end))) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(tail.toString('utf8', before + 1, end))
  } catch {
    return null
  }
  const event = E.getOrElseW(() => null)(decodeParsedRow(parsed))
  if (event === null || event.sessionId !== identity.sessionId || event.runId !== identity.runId) return null
  return event
}
