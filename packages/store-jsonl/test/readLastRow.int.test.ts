/**
 * `RuntimeEventStore.readLastRow`: the last committed row from the file's tail alone, or `null`
 * whenever the tail cannot tell — then recovery reads the whole ledger.
 */
import { writeFile } from 'node:fs/promises'
import { describe, expect, afterAll, it } from 'vitest'
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

const givenLedger = async (bytes: Buffer | null): Promise<FileStores> => {
  const stores = makeFileStores(await makeTempRoot())
  await value(stores.runs.create(runHeader()))
  if (bytes !== null) await writeFile(ledgerPath(stores.dataDir, sessionId, runId), bytes)
  return stores
}

const rows = referenceLedger()
const first = rows[0]
const last = rows[rows.length - 1]
if (first === undefined || last === undefined) throw new Error('the reference ledger is empty')

describe('RuntimeEventStore.readLastRow', () => {
  describe('when the ledger ends with a committed row', () => {
    it('returns that row, decoded', async () => {
      const stores = await givenLedger(Buffer.concat(rows.map(rowBytes)))
      expect(await value(stores.events.readLastRow(sessionId, runId))).toEqual(last)
    })

    it('returns the row before a torn tail, never the torn bytes', async () => {
      const torn = Buffer.from('{"id":"torn","sessionId"')
      const stores = await givenLedger(Buffer.concat([...rows.map(rowBytes), torn]))
      expect(await value(stores.events.readLastRow(sessionId, runId))).toEqual(last)
    })

    it('reads a one-row ledger from the start of the file', async () => {
      const stores = await givenLedger(rowBytes(first))
      expect(await value(stores.events.readLastRow(sessionId, runId))).toEqual(rows[0])
    })
  })

  describe('when the tail cannot tell', () => {
    it('answers null for an empty or missing ledger of an existing run', async () => {
      expect(await value((await givenLedger(null)).events.readLastRow(sessionId, runId))).toBeNull()
      expect(await value((await givenLedger(Buffer.alloc(0))).events.readLastRow(sessionId, runId))).toBeNull()
    })

    it('answers null for a last row that is not the exact shape, another run’s, or longer than the tail', async () => {
      const bad = Buffer.from('{"id":"x"}\n')
      expect(
        await value((await givenLedger(Buffer.concat([rowBytes(first), bad]))).events.readLastRow(sessionId, runId)),
      ).toBeNull()
      const foreign = rowBytes({ ...last, runId: 'run-other' as typeof last.runId })
      expect(
        await value(
          (await givenLedger(Buffer.concat([rowBytes(first), foreign]))).events.readLastRow(sessionId, runId),
        ),
      ).toBeNull()
      const long = rowBytes({ ...last, content: { kind: 'text', text: 'x'.repeat(40_000) } } as typeof last)
      expect(
        await value((await givenLedger(Buffer.concat([rowBytes(first), long]))).events.readLastRow(sessionId, runId)),
      ).toBeNull()
    })

    it('fails NotFound for a run that does not exist', async () => {
      const stores = makeFileStores(await makeTempRoot())
      expect((await failure(stores.events.readLastRow(sessionId, runId)))._tag).toBe('NotFound')
    })
  })
})
