import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { isTerminalEvent } from '@maka/events'
import { afterAll, describe, expect, it } from 'vitest'
import { ledgerPath, makeFileStores } from '../src/index.js'
import { identity, makeTempRoot, removeTempRoots, runHeader, value } from './fixtures/world.js'

afterAll(removeTempRoots)

// Versioned golden ledger (house style: fixtures/ledgers/<scenario>.v<schemaVersion>.jsonl). It pins
// the on-disk row format: the store must keep reading it, and must write the very same bytes.
const GOLDEN = fileURLToPath(
  new URL('../../../fixtures/ledgers/stores-tool-step-failed-terminal.v1.jsonl', import.meta.url),
)

describe('golden ledger stores-tool-step-failed-terminal.v1', () => {
  describe('when it is read through the store', () => {
    it('decodes all four rows with nothing torn or corrupt', async () => {
      const stores = makeFileStores(await makeTempRoot())
      await value(stores.runs.create(runHeader()))
      await writeFile(ledgerPath(stores.dataDir, identity.sessionId, identity.runId), await readFile(GOLDEN))
      const snapshot = await value(stores.events.read(identity.sessionId, identity.runId))
      expect(snapshot.problem).toBeNull()
      expect(snapshot.tornTail).toBeNull()
      expect(snapshot.highWater).toBe(4)
      expect(snapshot.events.map((e) => e.content?.kind)).toEqual([
        'text',
        'function_call',
        'function_response',
        'error',
      ])
      expect(isTerminalEvent(snapshot.events[3]!)).toBe(true)
    })
  })

  describe('when its rows are appended again through the store', () => {
    it('writes byte-identical lines', async () => {
      const golden = await readFile(GOLDEN)
      const source = makeFileStores(await makeTempRoot())
      await value(source.runs.create(runHeader()))
      await writeFile(ledgerPath(source.dataDir, identity.sessionId, identity.runId), golden)
      const { events } = await value(source.events.read(identity.sessionId, identity.runId))

      const target = makeFileStores(await makeTempRoot())
      await value(target.runs.create(runHeader()))
      for (const event of events) await value(target.events.append(identity.sessionId, identity.runId, event))
      const written = await readFile(ledgerPath(target.dataDir, identity.sessionId, identity.runId))
      expect(written.equals(golden)).toBe(true)
    })
  })
})
