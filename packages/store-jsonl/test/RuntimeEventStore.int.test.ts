import { copyFile, mkdir, readFile, writeFile, appendFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ledgerPath, makeFileStores, runHeaderPath, type FileStores } from '../src/index.js'
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

describe('RuntimeEventStore', () => {
  describe('when rows are appended and read back', () => {
    it('returns every row in order with the committed count and byte length', async () => {
      const stores = await givenRun()
      const rows = referenceLedger()
      const highWaters: Array<number> = []
      for (const [index, event] of rows.entries()) {
        const durable = index === 0 || index === rows.length - 1
        highWaters.push((await value(stores.events.append(sessionId, runId, event, { durable }))).highWater)
      }
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(highWaters).toEqual([1, 2, 3, 4])
      expect(snapshot).toEqual({
        events: rows,
        highWater: 4,
        committedBytes: Buffer.concat(rows.map(rowBytes)).length,
        tornTail: null,
        problem: null,
      })
    })

    it('writes exactly JSON plus a newline per row', async () => {
      const stores = await givenRun()
      const rows = referenceLedger()
      for (const event of rows) await value(stores.events.append(sessionId, runId, event))
      const bytes = await readFile(ledgerPath(stores.dataDir, sessionId, runId))
      expect(bytes.equals(Buffer.concat(rows.map(rowBytes)))).toBe(true)
    })
  })

  describe('when the run header exists but no row was appended', () => {
    it('reads an empty ledger', async () => {
      const stores = await givenRun()
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot).toEqual({ events: [], highWater: 0, committedBytes: 0, tornTail: null, problem: null })
    })
  })

  describe('when the run header does not exist', () => {
    it('reports NotFound on read and on append, and creates nothing', async () => {
      const stores = makeFileStores(await makeTempRoot())
      const [event] = referenceLedger()
      expect((await failure(stores.events.read(sessionId, runId)))._tag).toBe('NotFound')
      expect((await failure(stores.events.append(sessionId, runId, event!)))._tag).toBe('NotFound')
      await expect(readFile(ledgerPath(stores.dataDir, sessionId, runId))).rejects.toThrow()
    })
  })

  describe('when the last row is cut at any byte offset', () => {
    it('never reports the cut row as a fact; the next append truncates a torn prefix and refuses a row missing only its newline', async () => {
      const source = await givenRun()
      const rows = referenceLedger()
      const [first, second, third, next] = rows
      for (const event of [first!, second!, third!]) await value(source.events.append(sessionId, runId, event))
      const whole = await readFile(ledgerPath(source.dataDir, sessionId, runId))
      const lastRowStart = whole.length - rowBytes(third!).length
      const root = await makeTempRoot()

      for (let cut = lastRowStart; cut <= whole.length; cut += 1) {
        // Each cut gets its own fresh copy of the run, read and appended through a new store.
        const stores = makeFileStores(join(root, `cut-${cut}`))
        await mkdir(join(stores.dataDir, 'sessions', sessionId, 'runs', runId), { recursive: true })
        await copyFile(runHeaderPath(source.dataDir, sessionId, runId), runHeaderPath(stores.dataDir, sessionId, runId))
        const path = ledgerPath(stores.dataDir, sessionId, runId)
        await writeFile(path, whole.subarray(0, cut))

        const snapshot = await value(stores.events.read(sessionId, runId))
        const complete = cut === whole.length
        // Cut just before its newline, the row is a complete JSON value: not provably torn.
        const newlineOnly = cut === whole.length - 1
        const torn = cut > lastRowStart && !complete && !newlineOnly
        expect(snapshot.problem).toEqual(
          newlineOnly ? { _tag: 'Unreadable', line: 3, reason: expect.any(String) } : null,
        )
        expect(snapshot.events).toEqual(complete ? [first, second, third] : [first, second])
        expect(snapshot.highWater).toBe(complete ? 3 : 2)
        expect(snapshot.committedBytes).toBe(complete ? whole.length : lastRowStart)
        expect(snapshot.tornTail).toEqual(torn ? { offset: lastRowStart, length: cut - lastRowStart } : null)

        if (newlineOnly) {
          expect((await failure(stores.events.append(sessionId, runId, next!)))._tag).toBe('LedgerUnreadable')
          expect((await readFile(path)).equals(whole.subarray(0, cut))).toBe(true)
          continue
        }
        const appended = await value(stores.events.append(sessionId, runId, next!))
        expect(appended.highWater).toBe(complete ? 4 : 3)
        const reread = await value(stores.events.read(sessionId, runId))
        expect(reread.tornTail).toBeNull()
        expect(reread.problem).toBeNull()
        expect(reread.events).toEqual(complete ? [first, second, third, next] : [first, second, next])
        const expectedBytes = Buffer.concat([
          whole.subarray(0, complete ? whole.length : lastRowStart),
          rowBytes(next!),
        ])
        expect((await readFile(path)).equals(expectedBytes)).toBe(true)
      }
    })
  })

  describe('when the final row is complete JSON but has no newline', () => {
    it('is unreadable at its line, never a fact and never truncated', async () => {
      const rows = referenceLedger()
      const bytes = Buffer.concat([rowBytes(rows[0]!), Buffer.from(JSON.stringify(rows[1]))])
      const { stores, path } = await givenLedgerBytes(bytes)
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.events).toEqual([rows[0]])
      expect(snapshot.highWater).toBe(1)
      expect(snapshot.tornTail).toBeNull()
      expect(snapshot.problem).toEqual({ _tag: 'Unreadable', line: 2, reason: expect.stringMatching(/complete JSON/) })
      expect((await failure(stores.events.append(sessionId, runId, rows[2]!)))._tag).toBe('LedgerUnreadable')
      expect((await readFile(path)).equals(bytes)).toBe(true)
    })
  })

  describe('when the final row has no newline and is not the start of a JSON object', () => {
    it.each([
      ['garbage', Buffer.from('not json at all')],
      ['binary', Buffer.from([0x00, 0x01, 0xff, 0xfe, 0x7b])],
      ['invalid UTF-8 inside a string', Buffer.from([...Buffer.from('{"id":"'), 0xc3, 0x28])],
      ['a JSON array', Buffer.from('[{"id":')],
      ['a leading space', Buffer.from(' {"id":')],
      ['a byte-order mark', Buffer.from('\ufeff{"id":')],
      ['JSON followed by more', Buffer.from('{"id":"x"} {')],
    ])('%s makes the ledger unreadable at its line and no append truncates it', async (_name, tail) => {
      const rows = referenceLedger()
      const bytes = Buffer.concat([rowBytes(rows[0]!), tail])
      const { stores, path } = await givenLedgerBytes(bytes)
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.events).toEqual([rows[0]])
      expect(snapshot.tornTail).toBeNull()
      expect(snapshot.problem).toMatchObject({ _tag: 'Unreadable', line: 2 })
      const error = await failure(stores.events.append(sessionId, runId, rows[1]!))
      expect(error._tag === 'LedgerUnreadable' && error.problem.line).toBe(2)
      expect((await readFile(path)).equals(bytes)).toBe(true)
    })

    it('still counts a multi-byte character cut at the very end as a torn row', async () => {
      const rows = referenceLedger()
      const euro = Buffer.from('€') // e2 82 ac
      const bytes = Buffer.concat([rowBytes(rows[0]!), Buffer.from('{"id":"'), euro.subarray(0, 2)])
      const { stores } = await givenLedgerBytes(bytes)
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.problem).toBeNull()
      expect(snapshot.tornTail).toEqual({ offset: rowBytes(rows[0]!).length, length: 9 })
    })
  })

  describe('when two rows share an id', () => {
    it('is unreadable at the second one, and nothing is appended', async () => {
      const rows = referenceLedger()
      const twin = { ...rows[2]!, id: rows[0]!.id }
      const bytes = Buffer.concat([rowBytes(rows[0]!), rowBytes(rows[1]!), rowBytes(twin)])
      const { stores, path } = await givenLedgerBytes(bytes)
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.problem).toEqual({ _tag: 'Unreadable', line: 3, reason: 'row repeats the id of an earlier row' })
      expect(snapshot.events).toEqual([rows[0], rows[1]])
      expect(snapshot.highWater).toBe(3)
      expect((await failure(stores.events.append(sessionId, runId, rows[3]!)))._tag).toBe('LedgerUnreadable')
      expect((await readFile(path)).equals(bytes)).toBe(true)
    })
  })

  describe('when a middle row is garbage', () => {
    it('reports Unreadable at its line, keeps the rows before it and counts every complete row', async () => {
      const rows = referenceLedger()
      const bytes = Buffer.concat([
        rowBytes(rows[0]!),
        Buffer.from('{"secret":"sk-live-123" garbage\n'),
        rowBytes(rows[2]!),
      ])
      const { stores } = await givenLedgerBytes(bytes)
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.events).toEqual([rows[0]])
      expect(snapshot.highWater).toBe(3)
      expect(snapshot.committedBytes).toBe(bytes.length)
      expect(snapshot.problem).toEqual({ _tag: 'Unreadable', line: 2, reason: 'row is not valid JSON' })
      expect(JSON.stringify(snapshot.problem)).not.toContain('sk-live')
    })
  })

  describe('when a middle row is empty', () => {
    it('reports Unreadable at its line', async () => {
      const rows = referenceLedger()
      const { stores } = await givenLedgerBytes(
        Buffer.concat([rowBytes(rows[0]!), Buffer.from('\n'), rowBytes(rows[1]!)]),
      )
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.problem).toEqual({ _tag: 'Unreadable', line: 2, reason: 'row is empty' })
    })
  })

  describe('when a row is not valid UTF-8', () => {
    it('reports Unreadable instead of decoding replacement characters', async () => {
      const rows = referenceLedger()
      const damaged = Buffer.from(`${JSON.stringify(rows[0])}\n`.replace('please', 'pl\u00e9ase'), 'utf8')
      const index = damaged.indexOf(0xc3)
      damaged[index + 1] = 0x28 // breaks the two-byte sequence of é
      const { stores } = await givenLedgerBytes(damaged)
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.problem).toEqual({ _tag: 'Unreadable', line: 1, reason: 'row is not valid UTF-8' })
    })
  })

  describe('when a row has an unknown key', () => {
    it('reports Unreadable with the decoder sentence', async () => {
      const rows = referenceLedger()
      const extra = Buffer.from(`${JSON.stringify({ ...rows[1], surprise: 'value-not-shown' })}\n`)
      const { stores } = await givenLedgerBytes(Buffer.concat([rowBytes(rows[0]!), extra]))
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.events).toEqual([rows[0]])
      expect(snapshot.problem).toMatchObject({ _tag: 'Unreadable', line: 2 })
      expect(snapshot.problem?._tag === 'Unreadable' && snapshot.problem.reason).toContain('surprise')
      expect(JSON.stringify(snapshot.problem)).not.toContain('value-not-shown')
    })
  })

  describe('when a row belongs to another run', () => {
    it('reports IdentityMismatch at its line', async () => {
      const rows = referenceLedger()
      const foreign = referenceLedger({ ...identity, runId: 'run-other' })[1]!
      const later = rows[2]!
      const { stores } = await givenLedgerBytes(Buffer.concat([rowBytes(rows[0]!), rowBytes(foreign), rowBytes(later)]))
      const snapshot = await value(stores.events.read(sessionId, runId))
      // The foreign row is well-formed: reading goes on, so every row is counted and decoded.
      expect(snapshot.events).toEqual([rows[0], foreign, later])
      expect(snapshot.highWater).toBe(3)
      expect(snapshot.problem).toEqual({ _tag: 'IdentityMismatch', line: 2, field: 'runId' })
    })

    it('still reports a later unreadable row instead, which outranks it', async () => {
      const rows = referenceLedger()
      const foreign = referenceLedger({ ...identity, runId: 'run-other' })[1]!
      const bytes = Buffer.concat([rowBytes(rows[0]!), rowBytes(foreign), Buffer.from('garbage\n'), rowBytes(rows[2]!)])
      const { stores } = await givenLedgerBytes(bytes)
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.problem).toEqual({ _tag: 'Unreadable', line: 3, reason: 'row is not valid JSON' })
      expect(snapshot.events).toEqual([rows[0], foreign])
      expect(snapshot.highWater).toBe(4)
    })
  })

  describe('when a row belongs to another session', () => {
    it('reports IdentityMismatch on sessionId', async () => {
      const foreign = referenceLedger({ ...identity, sessionId: 'session-other' })[0]!
      const { stores } = await givenLedgerBytes(rowBytes(foreign))
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.problem).toEqual({ _tag: 'IdentityMismatch', line: 1, field: 'sessionId' })
    })
  })

  describe('when the ledger is corrupt', () => {
    it.each([
      ['a garbage row', Buffer.from('not json\n')],
      ['another run’s row', rowBytes(referenceLedger({ ...identity, runId: 'run-other' })[0]!)],
      ['a garbage row followed by a torn tail', Buffer.from('not json\n{"id":')],
    ])('refuses to append after %s and leaves the bytes unchanged', async (_name, corrupt) => {
      const rows = referenceLedger()
      const bytes = Buffer.concat([rowBytes(rows[0]!), corrupt])
      const { stores, path } = await givenLedgerBytes(bytes)
      const error = await failure(stores.events.append(sessionId, runId, rows[1]!))
      expect(error._tag).toBe('LedgerUnreadable')
      expect(error._tag === 'LedgerUnreadable' && error.problem.line).toBe(2)
      expect((await readFile(path)).equals(bytes)).toBe(true)
    })

    it('refuses even when the corruption appears after the store cached the ledger', async () => {
      const stores = await givenRun()
      const rows = referenceLedger()
      await value(stores.events.append(sessionId, runId, rows[0]!))
      const path = ledgerPath(stores.dataDir, sessionId, runId)
      await appendFile(path, 'garbage\n')
      const before = await readFile(path)
      expect((await failure(stores.events.append(sessionId, runId, rows[1]!)))._tag).toBe('LedgerUnreadable')
      expect((await readFile(path)).equals(before)).toBe(true)
    })
  })

  describe('when an expected high-water is given', () => {
    it('appends when it matches and refuses with HighWaterConflict, writing nothing, when it differs', async () => {
      const stores = await givenRun()
      const rows = referenceLedger()
      await value(stores.events.append(sessionId, runId, rows[0]!, { expectedHighWater: 0 }))
      await value(stores.events.append(sessionId, runId, rows[1]!, { expectedHighWater: 1 }))
      const path = ledgerPath(stores.dataDir, sessionId, runId)
      const before = await readFile(path)
      const error = await failure(stores.events.append(sessionId, runId, rows[2]!, { expectedHighWater: 1 }))
      expect(error).toMatchObject({ _tag: 'HighWaterConflict', expected: 1, actual: 2 })
      expect((await readFile(path)).equals(before)).toBe(true)
    })

    it('compares with the committed rows only, not with a torn tail, and leaves the tail on conflict', async () => {
      const rows = referenceLedger()
      const bytes = Buffer.concat([rowBytes(rows[0]!), Buffer.from('{"id":"torn')])
      const { stores, path } = await givenLedgerBytes(bytes)
      expect(await failure(stores.events.append(sessionId, runId, rows[1]!, { expectedHighWater: 2 }))).toMatchObject({
        _tag: 'HighWaterConflict',
        actual: 1,
      })
      expect((await readFile(path)).equals(bytes)).toBe(true)
      expect(await value(stores.events.append(sessionId, runId, rows[1]!, { expectedHighWater: 1 }))).toEqual({
        highWater: 2,
      })
    })
  })

  describe('when 50 appends to one run are started at once', () => {
    it('lands every row as a whole line, each with its own high-water', async () => {
      const stores = await givenRun()
      const rows = Array.from({ length: 50 }, (_, i) => ({
        ...referenceLedger()[1]!,
        id: `event-${i}` as never,
        content: { kind: 'text' as const, text: `row ${i} `.repeat(200) },
      }))
      const results = await Promise.all(rows.map((event) => value(stores.events.append(sessionId, runId, event))))
      expect(results.map((r) => r.highWater).sort((a, b) => a - b)).toEqual(rows.map((_, i) => i + 1))
      const snapshot = await value(stores.events.read(sessionId, runId))
      expect(snapshot.problem).toBeNull()
      expect(snapshot.tornTail).toBeNull()
      expect(snapshot.highWater).toBe(50)
      expect(new Set(snapshot.events.map((e) => e.id))).toEqual(new Set(rows.map((e) => e.id)))
    })
  })

  describe('when two store instances append to one run in turn', () => {
    it('each notices the other’s rows instead of trusting a stale count', async () => {
      const first = await givenRun()
      const second = makeFileStores(first.dataDir)
      const rows = referenceLedger()
      expect(await value(first.events.append(sessionId, runId, rows[0]!))).toEqual({ highWater: 1 })
      expect(await value(second.events.append(sessionId, runId, rows[1]!))).toEqual({ highWater: 2 })
      expect(await value(first.events.append(sessionId, runId, rows[2]!, { expectedHighWater: 2 }))).toEqual({
        highWater: 3,
      })
    })
  })

  describe('when the event does not belong to the ledger or is not a valid row', () => {
    it('refuses with EventIdentityMismatch or InvalidRecord and writes nothing', async () => {
      const stores = await givenRun()
      const [event] = referenceLedger({ ...identity, runId: 'run-other' })
      expect(await failure(stores.events.append(sessionId, runId, event!))).toMatchObject({
        _tag: 'EventIdentityMismatch',
        field: 'runId',
      })
      const invalid = { ...referenceLedger()[0]!, extra: true } as never
      expect((await failure(stores.events.append(sessionId, runId, invalid)))._tag).toBe('InvalidRecord')
      await expect(readFile(ledgerPath(stores.dataDir, sessionId, runId))).rejects.toThrow()
    })
  })
})
