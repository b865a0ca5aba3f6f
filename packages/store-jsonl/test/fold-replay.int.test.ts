/**
 * `fold` and `replay` of the JSONL ledger: a fold answers what `read` answers without keeping a
 * row, and a replay hands the same rows again and proves, by the digest, that the committed bytes
 * did not change between the two reads.
 */
import { createHash } from 'node:crypto'
import { appendFile, open, readFile, truncate, writeFile } from 'node:fs/promises'
import type { RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { afterAll, describe, expect, it } from 'vitest'
import type { LedgerScan, LedgerSnapshot } from '@maka/stores'
import { ledgerPath, makeFileStores, type FileStores } from '../src/index.js'
import {
  failure,
  identity,
  makeTempRoot,
  referenceLedger,
  removeTempRoots,
  rowBytes,
  runHeader,
  value,
} from './fixtures/world.js'

afterAll(removeTempRoots)

const { sessionId, runId } = identity
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')

const givenRun = async (): Promise<FileStores> => {
  const stores = makeFileStores(await makeTempRoot())
  await value(stores.runs.create(runHeader()))
  return stores
}

const givenLedgerBytes = async (bytes: Buffer): Promise<{ stores: FileStores; path: string }> => {
  const stores = await givenRun()
  const path = ledgerPath(stores.dataDir, sessionId, runId)
  await writeFile(path, bytes)
  return { stores, path }
}

const fold = async (stores: FileStores): Promise<{ scan: LedgerScan; handed: Array<RuntimeEvent> }> => {
  const handed: Array<RuntimeEvent> = []
  const scan = await value(stores.events.fold(sessionId, runId, (event) => handed.push(event)))
  return { scan, handed }
}

const replay = async (stores: FileStores, expected: LedgerScan) => {
  const batches: Array<ReadonlyArray<RuntimeEvent>> = []
  const result = await stores.events.replay(sessionId, runId, expected, (events) => {
    batches.push(events)
  })()
  return { result, batches, handed: batches.flat() }
}

// What a fold must report, given the read of the same bytes.
const scanOf = ({ events, ...rest }: LedgerSnapshot, digest: string): LedgerScan => ({
  rows: events.length,
  ...rest,
  digest,
})

// A ledger of `count` rows long enough to span several read chunks of 1 MiB.
const manyRows = (count: number): ReadonlyArray<RuntimeEvent> => {
  const rows = makeLedgerBuilderUnsafe(identity)
  return Array.from({ length: count }, (_, i) => rows.userText(`row ${i} ${'x'.repeat(300)}`))
}

const bytesOf = (events: ReadonlyArray<RuntimeEvent>): Buffer => Buffer.concat(events.map(rowBytes))

// Ledgers whose fold and read must agree: clean, torn, damaged, foreign, and rows of any length.
const cases = (): ReadonlyArray<readonly [string, Buffer]> => {
  const rows = referenceLedger()
  const foreign = makeLedgerBuilderUnsafe({ ...identity, runId: 'run-9' }).userText('another run')
  const clean = bytesOf(rows)
  const long = bytesOf(manyRows(12_000))
  return [
    ['a clean ledger', clean],
    ['a torn last row', Buffer.concat([clean, rowBytes(rows[0]!).subarray(0, 20)])],
    [
      'an unreadable row before committed rows',
      Buffer.concat([bytesOf(rows.slice(0, 2)), Buffer.from('{"not":1}\n'), bytesOf(rows.slice(2))]),
    ],
    ['a foreign row', Buffer.concat([bytesOf(rows.slice(0, 2)), rowBytes(foreign), bytesOf(rows.slice(2))])],
    ['a final line without its newline', Buffer.concat([clean, Buffer.from(JSON.stringify(rows[0]))])],
    ['invalid UTF-8 in a row', Buffer.concat([clean, Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x0a]), clean])],
    ['a ledger spanning several read chunks', long],
    ['a long ledger with a torn last row', Buffer.concat([long, Buffer.from('{"id":"cut')])],
    // Longer than a read chunk, the bad row is dropped as it streams, never carried whole.
    ['a 3 MiB bad final line without a newline', Buffer.concat([clean, Buffer.alloc(3 << 20, 0x41)])],
    ['a 3 MiB bad row, then rows', Buffer.concat([clean, Buffer.alloc(3 << 20, 0x41), Buffer.from('\n'), clean])],
    ['a 3 MiB torn row', Buffer.concat([clean, Buffer.from('{"id":"'), Buffer.alloc(3 << 20, 0x41)])],
    [
      'a 3 MiB valid row',
      Buffer.concat([clean, rowBytes(makeLedgerBuilderUnsafe(identity).userText('y'.repeat(3 << 20)))]),
    ],
  ]
}

describe('RuntimeEventStore.fold', () => {
  it.each(cases())('answers what read answers, rows handed over and not kept: %s', async (_, bytes) => {
    const { stores } = await givenLedgerBytes(bytes)
    const snapshot = await value(stores.events.read(sessionId, runId))
    const { scan, handed } = await fold(stores)
    expect(handed).toEqual(snapshot.events)
    expect(scan).toEqual(scanOf(snapshot, sha256(bytes.subarray(0, snapshot.committedBytes))))
  })

  // The prefix digest at a pin is the file's bytes up to the end of row `pin`, whatever the medium
  // does around it: chunk and window boundaries, bad rows dropped as they stream, a torn tail.
  it.each(cases())(
    'reports the digest of the bytes up to the pin’s newline, from the same pass: %s',
    async (_, bytes) => {
      const { stores } = await givenLedgerBytes(bytes)
      const plain = await fold(stores)
      const ends: Array<number> = []
      for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) ends.push(at + 1)
      expect(ends).toHaveLength(plain.scan.highWater)
      const highWater = plain.scan.highWater
      // The rows around the first read chunk's end, the middle, and the ends of the ledger.
      const atChunk = ends.filter((end) => end <= 1 << 20).length
      const pins = [0, 1, Math.floor(highWater / 2), atChunk, atChunk + 1, highWater - 1, highWater]
      for (const pin of new Set(pins.filter((p) => p >= 0 && p <= highWater))) {
        const handed: Array<RuntimeEvent> = []
        const scan = await value(stores.events.fold(sessionId, runId, (event) => handed.push(event), { digestAt: pin }))
        expect(handed).toEqual(plain.handed)
        const end = pin === 0 ? 0 : ends[pin - 1]!
        expect(scan).toEqual({ ...plain.scan, digestAt: { rows: pin, digest: sha256(bytes.subarray(0, end)) } })
      }
      const past = await value(stores.events.fold(sessionId, runId, () => undefined, { digestAt: highWater + 1 }))
      expect(past).toEqual(plain.scan)
    },
  )

  it('reports pin 0 of a run without a ledger file as the digest of zero bytes, and nothing past it', async () => {
    const stores = await givenRun()
    const noop = () => undefined
    const empty = sha256(Buffer.alloc(0))
    expect(await value(stores.events.fold(sessionId, runId, noop, { digestAt: 0 }))).toEqual({
      rows: 0,
      highWater: 0,
      committedBytes: 0,
      tornTail: null,
      problem: null,
      digest: empty,
      digestAt: { rows: 0, digest: empty },
    })
    expect(await value(stores.events.fold(sessionId, runId, noop, { digestAt: 1 }))).not.toHaveProperty('digestAt')
  })

  it('hashes the committed bytes only: a torn tail is outside the digest', async () => {
    const clean = bytesOf(referenceLedger())
    const { stores } = await givenLedgerBytes(Buffer.concat([clean, Buffer.from('{"id":"cu')]))
    const { scan } = await fold(stores)
    expect(scan.tornTail).toEqual({ offset: clean.length, length: 9 })
    expect(scan.digest).toBe(sha256(clean))
  })

  it('reads an empty scan, with the digest of zero bytes, for a run without a ledger file', async () => {
    const stores = await givenRun()
    const { scan, handed } = await fold(stores)
    expect(handed).toEqual([])
    expect(scan).toEqual({
      rows: 0,
      highWater: 0,
      committedBytes: 0,
      tornTail: null,
      problem: null,
      digest: sha256(Buffer.alloc(0)),
    })
  })

  it('reports a missing run as NotFound and a hostile id as InvalidId, like read', async () => {
    const stores = makeFileStores(await makeTempRoot())
    const noop = () => undefined
    expect(await failure(stores.events.fold(sessionId, runId, noop))).toEqual(
      await failure(stores.events.read(sessionId, runId)),
    )
    expect((await failure(stores.events.fold('../x', runId, noop)))._tag).toBe('InvalidId')
  })

  it('stops at a throwing consumer with IoFailed at deliver, never repeating its words', async () => {
    const { stores } = await givenLedgerBytes(bytesOf(referenceLedger()))
    let calls = 0
    const error = await failure(
      stores.events.fold(sessionId, runId, () => {
        calls += 1
        throw new Error('secret prompt text')
      }),
    )
    expect(calls).toBe(1)
    expect(error).toMatchObject({ _tag: 'IoFailed', operation: 'deliver', code: 'CONSUMER_FAILED' })
    expect(error.message).not.toContain('secret')
  })
})

describe('RuntimeEventStore.replay', () => {
  it.each(cases())('hands the rows the fold handed, in order, and resolves Right: %s', async (_, bytes) => {
    const { stores } = await givenLedgerBytes(bytes)
    const folded = await fold(stores)
    const { result, handed, batches } = await replay(stores, folded.scan)
    expect(result).toEqual({ _tag: 'Right', right: undefined })
    expect(handed).toEqual(folded.handed)
    expect(batches.every((batch) => batch.length > 0)).toBe(true)
  })

  it('hands the rows the fold handed whether or not it is told their count: a repeated id ends both alike', async () => {
    const rows = referenceLedger()
    // A second builder starts its ids over: its row repeats the id of the ledger's first row.
    const repeated = makeLedgerBuilderUnsafe(identity).userText('again')
    const { stores } = await givenLedgerBytes(Buffer.concat([bytesOf(rows), rowBytes(repeated), bytesOf(rows)]))
    const folded = await fold(stores)
    expect(folded.scan.rows).toBe(rows.length)
    const { rows: _count, ...withoutCount } = folded.scan
    for (const expected of [folded.scan, withoutCount]) {
      const { result, handed } = await replay(stores, expected as LedgerScan)
      expect(result).toEqual({ _tag: 'Right', right: undefined })
      expect(handed).toEqual(folded.handed)
    }
  })

  it('hands a long ledger in one batch per read chunk', async () => {
    const events = manyRows(12_000)
    const bytes = bytesOf(events)
    const { stores } = await givenLedgerBytes(bytes)
    const { scan } = await fold(stores)
    const { result, batches, handed } = await replay(stores, scan)
    expect(result._tag).toBe('Right')
    expect(handed).toEqual(events)
    // A replay reads 256 KiB at a time (a fold 1 MiB): one batch each.
    expect(batches.length).toBeGreaterThanOrEqual(Math.floor(bytes.length / (1 << 18)))
  })

  it('awaits each batch: a slow consumer sees the batches strictly in order, never two at once', async () => {
    const events = manyRows(12_000)
    const { stores } = await givenLedgerBytes(bytesOf(events))
    const { scan } = await fold(stores)
    let busy = false
    let overlaps = 0
    const seen: Array<RuntimeEvent> = []
    let batches = 0
    const result = await stores.events.replay(sessionId, runId, scan, async (rows) => {
      if (busy) overlaps += 1
      busy = true
      batches += 1
      // Several turns of the event loop: a replay that did not await would read on meanwhile.
      for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setTimeout(resolve, 1))
      seen.push(...rows)
      busy = false
    })()
    expect(result._tag).toBe('Right')
    expect(batches).toBeGreaterThan(1)
    expect(overlaps).toBe(0)
    expect(seen).toEqual(events)
  })

  it('is LedgerChanged when a byte of a committed row changed in place', async () => {
    const events = referenceLedger()
    const { stores, path } = await givenLedgerBytes(bytesOf(events))
    const { scan } = await fold(stores)
    const bytes = await readFile(path)
    // Same length, still a decodable row: only the digest can tell.
    const at = bytes.indexOf('please')
    const handle = await open(path, 'r+')
    await handle.write(Buffer.from('P'), 0, 1, at)
    await handle.close()
    const { result, handed } = await replay(stores, scan)
    expect(result).toMatchObject({ _tag: 'Left', left: { _tag: 'LedgerChanged', path, reason: 'different_bytes' } })
    expect(handed).toHaveLength(events.length)
    const message = (result as { left: { message: string } }).left.message
    expect(message).toContain('the ledger changed between two reads of its committed rows')
    expect(message).not.toContain('please')
  })

  it('is LedgerChanged when a committed row no longer decodes', async () => {
    const events = referenceLedger()
    const { stores, path } = await givenLedgerBytes(bytesOf(events))
    const { scan } = await fold(stores)
    const handle = await open(path, 'r+')
    await handle.write(Buffer.from('#'), 0, 1, 0)
    await handle.close()
    const { result, handed } = await replay(stores, scan)
    expect(result).toMatchObject({ _tag: 'Left', left: { _tag: 'LedgerChanged', reason: 'different_bytes' } })
    expect(handed).toEqual([])
  })

  it('is LedgerChanged when the file was truncated below the committed bytes', async () => {
    const events = manyRows(12_000)
    const { stores, path } = await givenLedgerBytes(bytesOf(events))
    const { scan } = await fold(stores)
    await truncate(path, scan.committedBytes - 1)
    expect((await replay(stores, scan)).result).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'LedgerChanged', reason: 'fewer_bytes', committedBytes: scan.committedBytes },
    })
    // Cut at a row boundary, the prefix is whole rows yet fewer bytes.
    const lastRow = rowBytes(events[events.length - 1]!).length
    await truncate(path, scan.committedBytes - lastRow)
    expect((await replay(stores, scan)).result).toMatchObject({ _tag: 'Left', left: { _tag: 'LedgerChanged' } })
  })

  it('is LedgerChanged when the ledger file is gone, and NotFound when the run is', async () => {
    const { stores, path } = await givenLedgerBytes(bytesOf(referenceLedger()))
    const { scan } = await fold(stores)
    await writeFile(path, '')
    expect((await replay(stores, scan)).result).toMatchObject({ _tag: 'Left', left: { _tag: 'LedgerChanged' } })
    const gone = makeFileStores(await makeTempRoot())
    expect((await failure(gone.events.replay(sessionId, runId, scan, () => undefined)))._tag).toBe('NotFound')
  })

  it('reads only the committed prefix: rows appended after the fold change nothing', async () => {
    const stores = await givenRun()
    const events = referenceLedger()
    for (const event of events.slice(0, 2)) await value(stores.events.append(sessionId, runId, event))
    const folded = await fold(stores)
    for (const event of events.slice(2)) await value(stores.events.append(sessionId, runId, event))
    const { result, handed } = await replay(stores, folded.scan)
    expect(result._tag).toBe('Right')
    expect(handed).toEqual(events.slice(0, 2))
  })

  it('survives the repair of a torn tail after the fold: the committed prefix is untouched', async () => {
    const events = referenceLedger()
    const clean = bytesOf(events.slice(0, 3))
    const { stores } = await givenLedgerBytes(Buffer.concat([clean, rowBytes(events[3]!).subarray(0, 15)]))
    const folded = await fold(stores)
    expect(folded.scan.tornTail).not.toBeNull()
    await value(stores.events.append(sessionId, runId, events[3]!))
    const { result, handed } = await replay(stores, folded.scan)
    expect(result._tag).toBe('Right')
    expect(handed).toEqual(events.slice(0, 3))
  })

  it('replays the empty ledger of a run without a file, and refuses a non-empty expectation there', async () => {
    const stores = await givenRun()
    const { scan } = await fold(stores)
    expect((await replay(stores, scan)).result).toEqual({ _tag: 'Right', right: undefined })
    expect((await replay(stores, { ...scan, committedBytes: 10 })).result).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'LedgerChanged', reason: 'fewer_bytes' },
    })
    expect((await replay(stores, { ...scan, digest: sha256(Buffer.from('x')) })).result).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'LedgerChanged', reason: 'different_bytes' },
    })
  })

  it('refuses an expectation that is not a byte count and a SHA-256, reading nothing', async () => {
    const { stores } = await givenLedgerBytes(bytesOf(referenceLedger()))
    const { scan } = await fold(stores)
    for (const bad of [
      { ...scan, committedBytes: -1 },
      { ...scan, committedBytes: 1.5 },
      { ...scan, digest: scan.digest.toUpperCase() },
      { ...scan, digest: 'abc' },
    ]) {
      let called = false
      const error = await failure(
        stores.events.replay(sessionId, runId, bad, () => {
          called = true
        }),
      )
      expect(error._tag).toBe('InvalidRecord')
      expect(called).toBe(false)
    }
  })

  it('stops at a rejecting consumer with IoFailed at deliver, reading no further batch', async () => {
    const { stores } = await givenLedgerBytes(bytesOf(manyRows(12_000)))
    const { scan } = await fold(stores)
    let calls = 0
    const error = await failure(
      stores.events.replay(sessionId, runId, scan, () => {
        calls += 1
        return Promise.reject(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))
      }),
    )
    expect(calls).toBe(1)
    expect(error).toMatchObject({ _tag: 'IoFailed', operation: 'deliver', code: 'EPIPE' })
  })

  it('gives the same rows and digest when the ledger grows between fold and replay by a torn row', async () => {
    const events = referenceLedger()
    const { stores, path } = await givenLedgerBytes(bytesOf(events))
    const { scan, handed } = await fold(stores)
    await appendFile(path, '{"id":"half')
    const replayed = await replay(stores, scan)
    expect(replayed.result._tag).toBe('Right')
    expect(replayed.handed).toEqual(handed)
  })
})
