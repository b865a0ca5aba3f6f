import { writeFile } from 'node:fs/promises'
import type { RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { ledgerPath, makeFileStores, scanLedger, type FileStores } from '../src/index.js'
import { identity, makeTempRoot, removeTempRoots, rowBytes, runHeader, value } from './fixtures/world.js'

afterAll(removeTempRoots)

const { sessionId, runId } = identity

// The store streams a ledger through a 1 MiB buffer and decodes it in 64 KiB windows; these
// ledgers cross both boundaries many times, with rows longer than either.
const rowsOf = (count: number, longEvery: number, longBytes: number): ReadonlyArray<RuntimeEvent> => {
  const b = makeLedgerBuilderUnsafe(identity)
  const rows: Array<RuntimeEvent> = [b.userText('start — ünïcödé, 日本語, emoji 🎉')]
  for (let i = 1; i < count; i += 1) {
    if (i % longEvery === 0) rows.push(b.functionResponse(`call-${i}`, 'read_file', { text: 'x'.repeat(longBytes) }))
    else if (i % 7 === 0) rows.push(b.modelText(`step ${i}: ¿qué pasa? ✓`))
    else rows.push(b.functionCall(`call-${i}`, 'shell', { command: `echo ${i}` }))
  }
  return rows
}

const givenLedger = async (bytes: Buffer): Promise<FileStores> => {
  const stores = makeFileStores(await makeTempRoot())
  await value(stores.runs.create(runHeader()))
  await writeFile(ledgerPath(stores.dataDir, sessionId, runId), bytes)
  return stores
}

describe('RuntimeEventStore.read of a ledger larger than its read buffer', () => {
  describe('when rows of every size cross the buffer and window boundaries', () => {
    it('returns every row, as scanLedger does over the whole file', async () => {
      const rows = rowsOf(12_000, 997, 3 << 20)
      const bytes = Buffer.concat(rows.map(rowBytes))
      expect(bytes.length).toBeGreaterThan(3 * (3 << 20))
      const snapshot = await value((await givenLedger(bytes)).events.read(sessionId, runId))
      expect(snapshot.problem).toBeNull()
      expect(snapshot.tornTail).toBeNull()
      expect(snapshot.highWater).toBe(rows.length)
      expect(snapshot.committedBytes).toBe(bytes.length)
      expect(snapshot.events).toEqual(rows)
      expect(scanLedger(bytes, identity)).toEqual(snapshot)
    })
  })

  describe('when a long ledger ends in a torn row', () => {
    it('reports the torn tail at the last newline', async () => {
      const rows = rowsOf(9_000, 2_000, 200_000)
      const whole = Buffer.concat(rows.map(rowBytes))
      const torn = Buffer.concat([whole, rowBytes(rows[1]!).subarray(0, 150)])
      const snapshot = await value((await givenLedger(torn)).events.read(sessionId, runId))
      expect(snapshot.problem).toBeNull()
      expect(snapshot.highWater).toBe(rows.length)
      expect(snapshot.committedBytes).toBe(whole.length)
      expect(snapshot.tornTail).toEqual({ offset: whole.length, length: 150 })
      expect(snapshot.events).toHaveLength(rows.length)
    })
  })

  describe('when a row deep in the ledger is not UTF-8', () => {
    it('reports Unreadable at its line, keeps the rows before it and counts every row', async () => {
      const rows = rowsOf(20_000, 5_000, 100_000)
      const lines = rows.map(rowBytes)
      const bad = 15_321
      lines[bad - 1] = Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')])
      const snapshot = await value((await givenLedger(Buffer.concat(lines))).events.read(sessionId, runId))
      expect(snapshot.problem).toEqual({ _tag: 'Unreadable', line: bad, reason: 'row is not valid UTF-8' })
      expect(snapshot.events).toEqual(rows.slice(0, bad - 1))
      expect(snapshot.highWater).toBe(rows.length)
    })
  })

  describe('when a row deep in the ledger belongs to another run', () => {
    it('reports IdentityMismatch at its line', async () => {
      const rows = rowsOf(20_000, 5_000, 100_000)
      const lines = rows.map(rowBytes)
      const other = makeLedgerBuilderUnsafe({ ...identity, runId: 'run-other' }).modelText('elsewhere')
      lines[17_000 - 1] = rowBytes(other)
      const snapshot = await value((await givenLedger(Buffer.concat(lines))).events.read(sessionId, runId))
      expect(snapshot.problem).toEqual({ _tag: 'IdentityMismatch', line: 17_000, field: 'runId' })
      expect(snapshot.events).toHaveLength(rows.length)
      expect(snapshot.highWater).toBe(rows.length)
    })
  })
})
