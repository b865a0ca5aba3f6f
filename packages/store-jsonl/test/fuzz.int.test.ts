/**
 * Fuzzing the ledger store on real files (issue 9): committed rows plus hostile bytes on disk, read
 * through `RuntimeEventStore.read` (and `fold` and `replay`) and then appended to. A read changes no byte, ever; it reports
 * what `scanLedger` reports over the same bytes; an append truncates a torn tail and nothing else,
 * and refuses — changing nothing — when the ledger has a problem. Then 50 MB rows, whole and cut.
 */
import { createHash } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { ledgerPath, makeFileStores, scanLedger, type FileStores } from '../src/index.js'
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
const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')

const givenLedgerBytes = async (bytes: Buffer): Promise<{ stores: FileStores; path: string }> => {
  const stores = makeFileStores(await makeTempRoot())
  await value(stores.runs.create(runHeader()))
  const path = ledgerPath(stores.dataDir, sessionId, runId)
  await writeFile(path, bytes)
  return { stores, path }
}

const rows = referenceLedger()
const next = rows[3]!
const committed = Buffer.concat(rows.slice(0, 3).map(rowBytes))
const fresh = { ...next, id: 'fresh-id' } as typeof next

const damage: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b)),
  fc.nat({ max: rowBytes(next).length }).map((cut) => rowBytes(next).subarray(0, cut)),
  fc.constantFrom(
    Buffer.from('\ufeff'),
    Buffer.from('\r\n'),
    Buffer.from([0xff, 0xfe, 0x0a]),
    rowBytes({ ...next, id: rows[0]!.id }),
    Buffer.from(`{"a":${'['.repeat(2000)}`),
  ),
)

describe('RuntimeEventStore under fuzzing', () => {
  describe('when a ledger on disk ends in any damage', () => {
    it('reads it without changing a byte, as scanLedger does, and an append truncates only a torn tail', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(damage, { minLength: 1, maxLength: 3 }), async (damages) => {
          const bytes = Buffer.concat([committed, ...damages])
          const { stores, path } = await givenLedgerBytes(bytes)
          const snapshot = await value(stores.events.read(sessionId, runId))
          expect(sha(await readFile(path))).toBe(sha(bytes))
          expect(snapshot).toEqual(scanLedger(bytes, identity))
          expect(snapshot.events.slice(0, 3)).toEqual(rows.slice(0, 3))
          // A fold answers the same without keeping a row, and hashes exactly the committed bytes.
          const handed: Array<unknown> = []
          const scan = await value(stores.events.fold(sessionId, runId, (event) => handed.push(event)))
          const { events, ...rest } = snapshot
          expect(handed).toEqual(events)
          expect(scan).toEqual({
            rows: events.length,
            ...rest,
            digest: sha(bytes.subarray(0, snapshot.committedBytes)),
          })
          const replayed: Array<unknown> = []
          const again = await stores.events.replay(sessionId, runId, scan, (batch) => {
            replayed.push(...batch)
          })()
          expect(again._tag).toBe('Right')
          expect(replayed).toEqual(events)
          // A second store instance reads the same, and still nothing changed.
          expect(await value(makeFileStores(stores.dataDir).events.read(sessionId, runId))).toEqual(snapshot)
          expect(sha(await readFile(path))).toBe(sha(bytes))

          if (snapshot.problem !== null) {
            const refused = await failure(stores.events.append(sessionId, runId, fresh))
            expect(refused._tag).toBe('LedgerUnreadable')
            expect(sha(await readFile(path))).toBe(sha(bytes))
          } else {
            await value(stores.events.append(sessionId, runId, fresh))
            const after = await readFile(path)
            expect(after.equals(Buffer.concat([bytes.subarray(0, snapshot.committedBytes), rowBytes(fresh)]))).toBe(
              true,
            )
          }
        }),
        { numRuns: 80 },
      )
    }, 180_000)
  })

  describe('when a row is 50 MB long', () => {
    const big = { ...next, id: 'big-row', content: { kind: 'text', text: 'x'.repeat(50 * 1024 * 1024) } }
    const bigRow = rowBytes(big as typeof next)

    it('reads it whole when its newline is there', async () => {
      const { stores } = await givenLedgerBytes(Buffer.concat([committed, bigRow]))
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.problem).toBeNull()
      expect(snapshot.highWater).toBe(4)
      expect(snapshot.events[3]).toEqual(big)
    }, 180_000)

    it.each([
      ['whole but missing its newline', bigRow.subarray(0, bigRow.length - 1), false],
      ['cut in the middle', bigRow.subarray(0, bigRow.length >> 1), true],
      ['not JSON at all', Buffer.alloc(50 * 1024 * 1024, 0x41), false],
    ])(
      'as a final line %s: torn only when cut, and never truncated otherwise',
      async (_name, tail, torn) => {
        const bytes = Buffer.concat([committed, tail])
        const { stores, path } = await givenLedgerBytes(bytes)
        const snapshot = await value(stores.events.read(sessionId, runId))
        expect(snapshot.events).toEqual(rows.slice(0, 3))
        expect(snapshot.highWater).toBe(3)
        if (torn) {
          expect(snapshot.problem).toBeNull()
          expect(snapshot.tornTail).toEqual({ offset: committed.length, length: tail.length })
          await value(stores.events.append(sessionId, runId, next))
          expect((await readFile(path)).equals(Buffer.concat([committed, rowBytes(next)]))).toBe(true)
        } else {
          expect(snapshot.tornTail).toBeNull()
          expect(snapshot.problem).toMatchObject({ _tag: 'Unreadable', line: 4 })
          expect((await failure(stores.events.append(sessionId, runId, next)))._tag).toBe('LedgerUnreadable')
          expect(sha(await readFile(path))).toBe(sha(bytes))
        }
      },
      180_000,
    )

    it('counts the rows after a 50 MB line that is not JSON, and reports that line', async () => {
      const bytes = Buffer.concat([committed, Buffer.alloc(50 * 1024 * 1024, 0x00), Buffer.from('\n'), rowBytes(next)])
      const { stores } = await givenLedgerBytes(bytes)
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.problem).toEqual({ _tag: 'Unreadable', line: 4, reason: 'row is not valid JSON' })
      expect(snapshot.highWater).toBe(5)
      expect(snapshot.events).toEqual(rows.slice(0, 3))
    }, 180_000)
  })
})
