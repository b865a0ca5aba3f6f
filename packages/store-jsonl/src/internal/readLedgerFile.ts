/**
 * Reads a ledger file by streaming it through one reusable buffer: each read's complete rows are
 * scanned at once and only the partial last row is carried over, so memory stays at one buffer plus
 * what the scan keeps — the decoded events for a snapshot, only their ids for a fold or a replay.
 *
 * It reads what `readFile` would: up to the size `fstat` reported when the file was opened (an
 * append racing with the read is left for the next read), or to EOF when that size is 0. A replay
 * reads exactly the committed prefix its fold reported, and hashes it again to prove it unchanged.
 */
import { constants } from 'node:fs'
import type { RuntimeEvent } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import {
  consumerFailed,
  ioFailed,
  ledgerChanged,
  notFound,
  type LedgerIdentity,
  type LedgerScan,
  type LedgerSink,
  type LedgerSnapshot,
  type ReplayExpectation,
} from '@maka/stores'
import { type CommittedDigest, makeCommittedDigest } from './committedDigest.js'
import { makeLedgerScanner, type LedgerScanner } from '../ledgerScanner.js'
import type { StoreFile } from '../StoreFs.js'
import { isErrno, openConfined, type Outcome, type StoreContext } from './durableFs.js'

// Big enough that a read costs far more than the await around it; grown for a longer row.
const CHUNK_BYTES = 1 << 20
// A replay's chunk is also the batch its consumer holds while it writes, and every young collection
// that finds the batch alive counts it as surviving: V8 doubles its young generation once the bytes
// that survived add up to its size. A 16 KiB batch keeps that sum below the line for a 100k-row plan
// and 200k (peak RSS of `resume plan --json` at 100k rows: ~74 MB, against ~81 MB with 256 KiB).
const REPLAY_CHUNK_BYTES = 1 << 14

/**
 * Reads and scans a ledger: missing → `NotFound`, any other failure → `IoFailed('read')`.
 * @category constructors
 */
export const readLedgerFile = (
  context: StoreContext,
  path: string,
  identity: LedgerIdentity,
): Outcome<LedgerSnapshot> =>
  withLedger(context, path, async (handle) => {
    const scanner = makeLedgerScanner(identity)
    const { tail } = await streamHandle(handle, null, scanner, null, null)
    return E.right(scanner.snapshot(tail))
  })

/**
 * Reads and scans a ledger like `readLedgerFile`, handing each row to `onEvent` instead of keeping
 * it and hashing the committed bytes as they pass; with `pin`, also the prefix digest at that row
 * count (reported when the pin is at most the high-water). A throwing `onEvent` stops the read:
 * `IoFailed('deliver')`.
 * @category constructors
 */
export const foldLedgerFile = (
  context: StoreContext,
  path: string,
  identity: LedgerIdentity,
  onEvent: (event: RuntimeEvent) => void,
  pin?: number,
): Outcome<LedgerScan> =>
  withLedger(context, path, async (handle) => {
    const consumer = guardConsumer(onEvent)
    const scanner = makeLedgerScanner(identity, consumer.sink)
    const digest = makeCommittedDigest(pin)
    try {
      const { tail } = await streamHandle(handle, null, scanner, digest, null)
      const scan = scanner.ledgerScan(tail, digest.digest(scanner.committedBytes()))
      if (pin === undefined || pin > scan.highWater) return E.right(scan)
      const atPin = digest.atPin()
      if (atPin === null) throw new Error('bug: the fold passed its pin without a digest')
      return E.right({ ...scan, digestAt: { rows: pin, digest: atPin } })
    } catch (cause) {
      if (consumer.failed()) return E.left(consumerFailed(path, consumer.cause()))
      throw cause
    }
  })

/**
 * Reads exactly `expected.committedBytes` bytes of a ledger again, handing the rows of each read
 * chunk to `onRows` (awaited before the next read), then checks them against `expected.digest`:
 * fewer bytes, a prefix that does not end a row, or another digest → `LedgerChanged`. Missing →
 * `NotFound`; a rejected `onRows` stops the replay: `IoFailed('deliver')`.
 * @category constructors
 */
export const replayLedgerFile = (
  context: StoreContext,
  path: string,
  identity: LedgerIdentity,
  expected: ReplayExpectation,
  onRows: (events: ReadonlyArray<RuntimeEvent>) => void | Promise<void>,
): Outcome<void> =>
  withLedger(context, path, async (handle) => {
    let batch: Array<RuntimeEvent> = []
    // A flag, not the cause: a consumer may reject with anything, `undefined` included.
    const delivery: { failed: boolean; cause: unknown } = { failed: false, cause: undefined }
    // The same bytes as the fold's (the digest proves it at the end), so the fold's id check holds
    // for the rows it handed over: with their count known, only those go out and no id is kept.
    const limit = expected.rows
    let handed = 0
    const scanner = makeLedgerScanner(
      identity,
      (event) => {
        if (limit !== undefined && handed >= limit) return
        handed += 1
        batch.push(event)
      },
      limit === undefined ? {} : { repeatedIds: 'known_absent' },
    )
    const digest = makeCommittedDigest()
    const deliver = async (): Promise<boolean> => {
      if (batch.length === 0) return true
      const rows = batch
      batch = []
      try {
        await onRows(rows)
        return true
      } catch (cause) {
        delivery.failed = true
        delivery.cause = cause
        return false
      }
    }
    const { total } = await streamHandle(handle, expected.committedBytes, scanner, digest, deliver, REPLAY_CHUNK_BYTES)
    if (delivery.failed) return E.left(consumerFailed(path, delivery.cause))
    if (total < expected.committedBytes) return E.left(ledgerChanged(path, expected.committedBytes, 'fewer_bytes'))
    const committed = scanner.committedBytes()
    if (committed !== expected.committedBytes || digest.digest(committed) !== expected.digest) {
      return E.left(ledgerChanged(path, expected.committedBytes, 'different_bytes'))
    }
    return E.right(undefined)
  })

// -------------------------------------------------------------------------------------
// internal
// -------------------------------------------------------------------------------------

const withLedger = async <A>(
  context: StoreContext,
  path: string,
  body: (handle: StoreFile) => Outcome<A>,
): Outcome<A> => {
  const opened = await openConfined(context, 'read', path, constants.O_RDONLY)
  if (E.isLeft(opened)) return isErrno(opened.left, 'ENOENT') ? E.left(notFound(path)) : opened
  const handle = opened.right
  try {
    return await body(handle)
  } catch (cause) {
    return E.left(ioFailed('read', path, cause))
  } finally {
    // A close failure after a complete read changes nothing that was read.
    await handle.close().catch(() => undefined)
  }
}

const guardConsumer = (onEvent: (event: RuntimeEvent) => void) => {
  let failed = false
  let cause: unknown = null
  const sink: LedgerSink = (event) => {
    try {
      onEvent(event)
    } catch (thrown) {
      failed = true
      cause = thrown
      throw thrown
    }
  }
  return { sink, failed: () => failed, cause: () => cause }
}

const streamHandle = async (
  handle: StoreFile,
  limit: number | null,
  scanner: LedgerScanner,
  digest: CommittedDigest | null,
  afterChunk: (() => Promise<boolean>) | null,
  chunkBytes = CHUNK_BYTES,
): Promise<{ readonly total: number; readonly tail: number }> => {
  // Without a limit, the size `fstat` reports; a size of 0 (a file some filesystems cannot size) reads to EOF.
  const size = limit ?? (await handle.stat()).size
  const toEof = limit === null && size === 0
  let buffer = Buffer.allocUnsafe(toEof ? chunkBytes : Math.min(size, chunkBytes))
  let filled = 0
  let total = 0
  for (;;) {
    const length = toEof ? buffer.length - filled : Math.min(buffer.length - filled, size - total)
    if (length === 0 && (toEof || total < size) && buffer.length > 0) {
      // No newline in a whole buffer: one row is longer than it.
      const larger = Buffer.allocUnsafe(buffer.length * 2)
      buffer.copy(larger, 0, 0, filled)
      buffer = larger
      continue
    }
    if (length === 0) break
    const { bytesRead } = await handle.read(buffer, filled, length, null)
    if (bytesRead === 0) break
    filled += bytesRead
    total += bytesRead
    const consumed = scanner.scan(buffer.subarray(0, filled))
    digest?.feed(buffer, consumed, scanner.committedBytes())
    if (consumed > 0) {
      buffer.copy(buffer, 0, consumed, filled)
      filled -= consumed
    }
    if (afterChunk !== null && !(await afterChunk())) break
  }
  return { total, tail: filled }
}
