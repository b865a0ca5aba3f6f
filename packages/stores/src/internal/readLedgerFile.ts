/**
 * Reads a ledger file into a snapshot by streaming it through one reusable buffer: each read's
 * complete rows are scanned at once and only the partial last row is carried over, so memory stays
 * at the decoded events plus one buffer instead of the whole file plus the events.
 *
 * It reads what `readFile` would: up to the size `fstat` reported when the file was opened (an
 * append racing with the read is left for the next read), or to EOF when that size is 0.
 */
import { constants } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import { makeLedgerScanner, type LedgerIdentity, type LedgerSnapshot } from '../LedgerSnapshot.js'
import { ioFailed, notFound } from '../StoreError.js'
import type { StoreFile } from '../StoreFs.js'
import { isErrno, openConfined, type Outcome, type StoreContext } from './durableFs.js'

// Big enough that a read costs far more than the await around it; grown for a longer row.
const CHUNK_BYTES = 1 << 20

/**
 * Reads and scans a ledger: missing → `NotFound`, any other failure → `IoFailed('read')`.
 * @category constructors
 */
export const readLedgerFile = async (
  context: StoreContext,
  path: string,
  identity: LedgerIdentity,
): Outcome<LedgerSnapshot> => {
  const opened = await openConfined(context, 'read', path, constants.O_RDONLY)
  if (E.isLeft(opened)) return isErrno(opened.left, 'ENOENT') ? E.left(notFound(path)) : opened
  const handle = opened.right
  try {
    return E.right(await scanHandle(handle, identity))
  } catch (cause) {
    return E.left(ioFailed('read', path, cause))
  } finally {
    // A close failure after a complete read changes nothing that was read.
    await handle.close().catch(() => undefined)
  }
}

const scanHandle = async (handle: StoreFile, identity: LedgerIdentity): Promise<LedgerSnapshot> => {
  const { size } = await handle.stat()
  const scanner = makeLedgerScanner(identity)
  let buffer = Buffer.allocUnsafe(size > 0 ? Math.min(size, CHUNK_BYTES) : CHUNK_BYTES)
  let filled = 0
  let total = 0
  for (;;) {
    if (filled === buffer.length) {
      // No newline in a whole buffer: one row is longer than it.
      const larger = Buffer.allocUnsafe(buffer.length * 2)
      buffer.copy(larger, 0, 0, filled)
      buffer = larger
    }
    const room = buffer.length - filled
    const length = size > 0 ? Math.min(room, size - total) : room
    if (length === 0) break
    const { bytesRead } = await handle.read(buffer, filled, length, null)
    if (bytesRead === 0) break
    filled += bytesRead
    total += bytesRead
    const consumed = scanner.scan(buffer.subarray(0, filled))
    if (consumed > 0) {
      buffer.copy(buffer, 0, consumed, filled)
      filled -= consumed
    }
  }
  return scanner.snapshot(filled)
}
