/**
 * The ledger a run appends to stays open between its appends (decision 168): an append is one write
 * (and one fsync when durable) through the descriptor kept from the run's first append. These tests
 * hold what that must not cost: a ledger removed or replaced behind the store's back is reopened
 * rather than written into a file nobody reads; `close` and an idle spell release every descriptor;
 * and one store instance never holds more than a bounded number.
 */
import { readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { ledgerPath, makeFileStores, nodeStoreFs, syncStoreFs, type StoreFs } from '../src/index.js'
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

// A port over `base` that counts, per path, the files it opened and has not closed yet.
const countingFs = (base: StoreFs) => {
  const open = new Map<string, number>()
  const opens: Array<string> = []
  const fs: StoreFs = {
    ...base,
    open: async (path, flags, mode) => {
      const file = await base.open(path, flags, mode)
      opens.push(path)
      open.set(path, (open.get(path) ?? 0) + 1)
      let closed = false
      return {
        ...file,
        close: async () => {
          if (!closed) open.set(path, (open.get(path) ?? 0) - 1)
          closed = true
          return file.close()
        },
      }
    },
  }
  const openCount = (path: string): number => open.get(path) ?? 0
  const ledgersOpen = (): number => [...open.entries()].filter(([p, n]) => p.endsWith('.jsonl') && n > 0).length
  return { fs, openCount, ledgersOpen, opens }
}

const waitFor = async (condition: () => boolean, ceilingMs = 60_000): Promise<void> => {
  const deadline = Date.now() + ceilingMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within the ceiling')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('a ledger kept open between appends', () => {
  for (const [name, base] of [
    ['node', nodeStoreFs],
    ['sync', syncStoreFs],
  ] as const) {
    describe(`through the ${name} port`, () => {
      it('reopens a ledger replaced behind its back, so the row lands in the file at the path', async () => {
        const dataDir = await makeTempRoot()
        const stores = makeFileStores(dataDir, { fs: base })
        await value(stores.runs.create(runHeader()))
        const [first, second] = referenceLedger()
        await value(stores.events.append(sessionId, runId, first!, { durable: true }))
        // Another writer swaps in a copy of the same bytes, as an atomic save does: write, then rename over.
        const path = ledgerPath(dataDir, sessionId, runId)
        await writeFile(`${path}.copy`, await readFile(path))
        await rename(`${path}.copy`, path)

        expect(await value(stores.events.append(sessionId, runId, second!, { durable: true }))).toEqual({
          highWater: 2,
        })
        expect(await readFile(path)).toEqual(Buffer.concat([rowBytes(first!), rowBytes(second!)]))
        await stores.close()
      })

      it('reopens a ledger removed behind its back, and counts its rows from the file now at the path', async () => {
        const dataDir = await makeTempRoot()
        const stores = makeFileStores(dataDir, { fs: base })
        await value(stores.runs.create(runHeader()))
        const [first, second] = referenceLedger()
        await value(stores.events.append(sessionId, runId, first!))
        const path = ledgerPath(dataDir, sessionId, runId)
        await unlink(path)

        // The run's ledger is empty now: an append that expects one row is refused, and writes nothing.
        const refused = await failure(stores.events.append(sessionId, runId, second!, { expectedHighWater: 1 }))
        expect(refused._tag).toBe('HighWaterConflict')
        expect(await value(stores.events.read(sessionId, runId))).toMatchObject({ highWater: 0 })
        await stores.close()
      })

      it('notices rows another instance appended, and continues after them', async () => {
        const dataDir = await makeTempRoot()
        const mine = makeFileStores(dataDir, { fs: base })
        const theirs = makeFileStores(dataDir, { fs: base })
        await value(mine.runs.create(runHeader()))
        const [first, second, third] = referenceLedger()
        await value(mine.events.append(sessionId, runId, first!))
        await value(theirs.events.append(sessionId, runId, second!, { expectedHighWater: 1 }))
        expect(await value(mine.events.append(sessionId, runId, third!, { expectedHighWater: 2 }))).toEqual({
          highWater: 3,
        })
        const rows = await value(mine.events.read(sessionId, runId))
        expect(rows.events.map((e) => e.id)).toEqual([first!.id, second!.id, third!.id])
        await Promise.all([mine.close(), theirs.close()])
      })
    })
  }

  it('closes every kept ledger on close, and opens it again for the next append', async () => {
    const dataDir = await makeTempRoot()
    const counting = countingFs(nodeStoreFs)
    const stores = makeFileStores(dataDir, { fs: counting.fs })
    await value(stores.runs.create(runHeader()))
    const [first, second] = referenceLedger()
    const path = ledgerPath(dataDir, sessionId, runId)
    await value(stores.events.append(sessionId, runId, first!))
    expect(counting.openCount(path)).toBe(1)
    await stores.close()
    expect(counting.openCount(path)).toBe(0)
    expect(await value(stores.events.append(sessionId, runId, second!))).toEqual({ highWater: 2 })
    expect(counting.openCount(path)).toBe(1)
    await stores.close()
    expect(counting.openCount(path)).toBe(0)
  })

  it('closes a ledger that had no append for a while, without being asked', async () => {
    const dataDir = await makeTempRoot()
    const counting = countingFs(nodeStoreFs)
    const stores = makeFileStores(dataDir, { fs: counting.fs })
    await value(stores.runs.create(runHeader()))
    const path = ledgerPath(dataDir, sessionId, runId)
    await value(stores.events.append(sessionId, runId, referenceLedger()[0]!))
    expect(counting.openCount(path)).toBe(1)
    await waitFor(() => counting.openCount(path) === 0)
  })

  it('holds at most 16 ledgers open, however many runs it appends to', async () => {
    const dataDir = await makeTempRoot()
    const counting = countingFs(nodeStoreFs)
    const stores = makeFileStores(dataDir, { fs: counting.fs })
    const runs = Array.from({ length: 24 }, (_, i) => ({ ...identity, runId: `run-${i + 1}` }))
    for (const run of runs) await value(stores.runs.create(runHeader(run)))
    // Twice over, concurrently: every append still lands, in order, in its own run; the bound may
    // be passed only by appends in flight, and holds again once they are done.
    for (const round of [0, 1]) {
      await Promise.all(
        runs.map((run) => value(stores.events.append(sessionId, run.runId, referenceLedger(run)[round]!))),
      )
      expect(counting.ledgersOpen()).toBe(16)
    }
    for (const run of runs) {
      await value(stores.events.append(sessionId, run.runId, referenceLedger(run)[2]!))
      expect(counting.ledgersOpen()).toBeLessThanOrEqual(16)
    }
    for (const run of runs) {
      const rows = await value(stores.events.read(sessionId, run.runId))
      expect(rows.events.map((e) => e.id)).toEqual(
        referenceLedger(run)
          .slice(0, 3)
          .map((e) => e.id),
      )
    }
    await stores.close()
    expect(counting.ledgersOpen()).toBe(0)
  })
})
