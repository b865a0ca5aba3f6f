/**
 * The store conformance suite: what every adapter of the store ports must do, whatever it stores
 * the facts in (docs/decisions.md #80). Each case starts from a fresh, empty store; durability is
 * checked through a second, freshly opened instance, and races and kills use real OS processes.
 */
import { createHash } from 'node:crypto'
import { writeFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type RuntimeEvent,
  makeIsoTimestampUnsafe,
  makeNonEmptyStringUnsafe,
  makeNonNegativeIntUnsafe,
  makeRunIdUnsafe,
} from '@maka/events'
import type { LedgerScan, LedgerSnapshot, StorePorts } from '@maka/stores'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { killAllChildren, spawnStoreChild } from './children.js'
import {
  claimAndHeader,
  failure,
  ledgerRows,
  ownerLock,
  runHeader,
  runIdentity,
  sessionRecord,
  shellRun,
  value,
} from './records.js'

/**
 * How the suite reaches one adapter.
 * @category models
 */
export interface ConformanceSubject {
  /** Creates a fresh, empty store and returns its location (a directory, a file, a schema). */
  readonly fresh: () => Promise<string>
  /** Opens a new instance over a location; the suite closes what it opens. */
  readonly open: (location: string) => Promise<StorePorts>
  /** Removes a location made by `fresh`. */
  readonly remove: (location: string) => Promise<void>
  /**
   * The adapter's built module for child processes: `module` is its absolute path, `open` the name
   * of an export `(location) => StorePorts | Promise<StorePorts>`.
   */
  readonly child: { readonly module: string; readonly open: string }
  /** Commits a row the codecs reject after a run's committed rows, bypassing the port. */
  readonly writeGarbageRow: (location: string, sessionId: string, runId: string) => Promise<void>
  /**
   * Leaves the first `bytes` of a row as the ledger's torn last row. Only where the medium can tear
   * a row (a JSONL file); a transactional store commits whole rows and leaves this out.
   */
  readonly tearTail?: (location: string, sessionId: string, runId: string, row: Buffer) => Promise<void>
  /**
   * `pid` (default): the owner lock names a process and the caller's `isStale` judges it by pid
   * liveness, as for JSONL and SQLite. `server`: the adapter decides ownership another way (a shared
   * server's session lock) and brings its own ownership tests; the port-level cases still run.
   */
  readonly ownership?: 'pid' | 'server'
  /**
   * Replaces the committed row at 1-based `line` with `text` (a row's JSON text, no newline),
   * bypassing the port: the suite gives a text of the same length, so only a digest can tell.
   */
  readonly rewriteRow: (location: string, sessionId: string, runId: string, line: number, text: string) => Promise<void>
  /**
   * What `capabilities.durableAppend` must answer once the store has served a call: true for the
   * JSONL files and SQLite; for PostgreSQL, what the server's settings imply.
   */
  readonly durableAppend: boolean
  /**
   * Whether the adapter offers `StorePorts.survey` (many sessions' recovery facts in bulk): the suite
   * then checks that each session's facts are what the per-session reads answer.
   */
  readonly survey: boolean
}

const RACERS = 8
/** Processes racing one stale owner lock. */
const LOCK_RACERS = 16
// CI runs a few dozen rounds; MAKA_LOCK_RACE_ROUNDS=500 (or more) makes it the stress test.
const LOCK_RACE_ROUNDS = Number(process.env['MAKA_LOCK_RACE_ROUNDS'] ?? 40)

/**
 * Registers the suite for one adapter under `describe(name)`.
 * @category constructors
 */
export const describeStoreConformance = (name: string, subject: ConformanceSubject): void => {
  const opened: Array<StorePorts> = []
  const locations: Array<string> = []
  const scratch: Array<string> = []

  const fresh = async () => {
    const location = await subject.fresh()
    locations.push(location)
    return location
  }
  const open = async (location: string) => {
    const stores = await subject.open(location)
    opened.push(stores)
    return stores
  }
  const freshStores = async () => {
    const location = await fresh()
    return { location, stores: await open(location) }
  }
  const scratchDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'maka-conformance-'))
    scratch.push(dir)
    return dir
  }
  const closeAll = async () => {
    for (const stores of opened.splice(0)) await stores.close?.()
  }

  afterEach(closeAll)
  afterAll(async () => {
    killAllChildren()
    await closeAll()
    for (const location of locations.splice(0)) await subject.remove(location)
    for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true })
  })

  const S = 'session-1'
  const source = runIdentity(S, 1)

  // A session with a source run holding `rows` committed rows.
  const withSourceRun = async (stores: StorePorts, rows = 4) => {
    await value(stores.sessions.create(sessionRecord(S)))
    await value(stores.runs.create(runHeader(source)))
    const events = ledgerRows(source, rows)
    for (const event of events) await value(stores.events.append(S, source.runId, event, { durable: true }))
    return events
  }

  describe(`${name}: store conformance`, () => {
    describe('sessions', () => {
      it('creates exclusively, reads back and lists sorted', async () => {
        const { location, stores } = await freshStores()
        expect(await value(stores.sessions.list())).toEqual([])
        expect((await failure(stores.sessions.read('session-b')))._tag).toBe('NotFound')
        await value(stores.sessions.create(sessionRecord('session-b')))
        await value(stores.sessions.create(sessionRecord('session-a')))
        const again = await failure(stores.sessions.create({ ...sessionRecord('session-b'), title: 'other' }))
        expect(again._tag).toBe('SessionAlreadyExists')
        const reopened = await open(location)
        expect(await value(reopened.sessions.list())).toEqual(['session-a', 'session-b'])
        expect(await value(reopened.sessions.read('session-b'))).toEqual(sessionRecord('session-b'))
      })

      it('refuses unsafe ids and bad records, creating nothing', async () => {
        const { stores } = await freshStores()
        for (const id of ['..', 'a/b', '', 'x'.repeat(129)]) {
          expect((await failure(stores.sessions.read(id)))._tag).toBe('InvalidId')
          expect((await failure(stores.events.read(id, 'run-1')))._tag).toBe('InvalidId')
          expect((await failure(stores.runs.list(id)))._tag).toBe('InvalidId')
        }
        const bad = { ...sessionRecord(S), cwd: 'relative' } as never
        expect((await failure(stores.sessions.create(bad)))._tag).toBe('InvalidRecord')
        expect(await value(stores.sessions.list())).toEqual([])
      })
    })

    describe('run headers', () => {
      it('creates exclusively, updates only what exists, lists every run', async () => {
        const { location, stores } = await freshStores()
        await value(stores.sessions.create(sessionRecord(S)))
        expect(await value(stores.runs.list(S))).toEqual([])
        await value(stores.runs.create(runHeader(source)))
        const clash = await failure(
          stores.runs.create(runHeader(source, { modelId: makeNonEmptyStringUnsafe('other') })),
        )
        expect(clash._tag).toBe('RunAlreadyExists')
        expect(await value(stores.runs.read(S, source.runId))).toEqual(runHeader(source))
        const missing = runHeader(runIdentity(S, 9))
        expect((await failure(stores.runs.update(missing)))._tag).toBe('NotFound')
        expect((await failure(stores.runs.read(S, 'run-9')))._tag).toBe('NotFound')
        const done = runHeader(source, {
          status: 'completed',
          updatedAt: makeIsoTimestampUnsafe('2026-01-02T03:05:00.000Z'),
        })
        await value(stores.runs.update(done, { durable: true }))
        await value(stores.runs.create(runHeader(runIdentity(S, 0))))
        const reopened = await open(location)
        expect(await value(reopened.runs.read(S, source.runId))).toEqual(done)
        const listed = await value(reopened.runs.list(S))
        expect(listed.map((entry) => entry.runId)).toEqual(['run-0', 'run-1'])
        expect(listed[1]).toEqual({ runId: 'run-1', header: done })
        expect(
          (await failure(stores.runs.create({ ...runHeader(runIdentity(S, 5)), status: 'nope' } as never)))._tag,
        ).toBe('InvalidRecord')
      })
    })

    describe('ledger', () => {
      it('appends rows durably and reads them back, exactly, from a new instance', async () => {
        const { location, stores } = await freshStores()
        await value(stores.sessions.create(sessionRecord(S)))
        await value(stores.runs.create(runHeader(source)))
        expect(await value(stores.events.read(S, source.runId))).toMatchObject({ events: [], highWater: 0 })
        expect(await value(stores.events.readLastRow(S, source.runId))).toBeNull()
        const events = ledgerRows(source, 7)
        const marks: Array<number> = []
        for (const [i, event] of events.entries()) {
          const { highWater } = await value(stores.events.append(S, source.runId, event, { durable: i % 2 === 0 }))
          marks.push(highWater)
        }
        expect(marks).toEqual([1, 2, 3, 4, 5, 6, 7])
        const reopened = await open(location)
        const snapshot = await value(reopened.events.read(S, source.runId))
        expect(snapshot).toMatchObject({ highWater: 7, tornTail: null, problem: null })
        expect(snapshot.events).toEqual(events)
        expect(await value(reopened.events.readLastRow(S, source.runId))).toEqual(events[6])
      })

      it('refuses an append to a missing run, a foreign row, an invalid row and a stale high-water', async () => {
        const { stores } = await freshStores()
        const events = await withSourceRun(stores, 2)
        const [next] = ledgerRows(runIdentity(S, 1), 3).slice(2)
        expect(
          (await failure(stores.events.append(S, 'run-7', { ...next!, runId: makeNonEmptyStringUnsafe('run-7') })))
            ._tag,
        ).toBe('NotFound')
        expect((await failure(stores.events.read(S, 'run-7')))._tag).toBe('NotFound')
        expect(
          (await failure(stores.events.append(S, source.runId, { ...next!, runId: makeNonEmptyStringUnsafe('run-2') })))
            ._tag,
        ).toBe('EventIdentityMismatch')
        expect((await failure(stores.events.append(S, source.runId, { ...next!, extra: 1 } as never)))._tag).toBe(
          'InvalidRecord',
        )
        const stale = await failure(stores.events.append(S, source.runId, next!, { expectedHighWater: 1 }))
        expect(stale).toMatchObject({ _tag: 'HighWaterConflict', expected: 1, actual: 2 })
        expect((await value(stores.events.read(S, source.runId))).events).toEqual(events)
        expect(await value(stores.events.append(S, source.runId, next!, { expectedHighWater: 2 }))).toEqual({
          highWater: 3,
        })
      })

      it('gives concurrent appends of one instance distinct, gapless high-waters', async () => {
        const { location, stores } = await freshStores()
        await value(stores.sessions.create(sessionRecord(S)))
        await value(stores.runs.create(runHeader(source)))
        const events = ledgerRows(source, 30)
        const marks = await Promise.all(events.map((event) => value(stores.events.append(S, source.runId, event))))
        expect(marks.map((m) => m.highWater).sort((a, b) => a - b)).toEqual(events.map((_, i) => i + 1))
        const snapshot = await value((await open(location)).events.read(S, source.runId))
        expect(snapshot.highWater).toBe(30)
        expect(new Set(snapshot.events.map((e) => e.id)).size).toBe(30)
      })

      it('reports a row that does not decode as corruption and appends nothing after it', async () => {
        const { location, stores } = await freshStores()
        const events = await withSourceRun(stores, 3)
        await subject.writeGarbageRow(location, S, source.runId)
        const reopened = await open(location)
        const snapshot = await value(reopened.events.read(S, source.runId))
        expect(snapshot.events).toEqual(events)
        expect(snapshot.highWater).toBe(4)
        expect(snapshot.problem).toMatchObject({ _tag: 'Unreadable', line: 4 })
        const [next] = ledgerRows(source, 5).slice(4)
        const refused = await failure(reopened.events.append(S, source.runId, next!))
        expect(refused._tag).toBe('LedgerUnreadable')
        expect(await value(reopened.events.read(S, source.runId))).toEqual(snapshot)
      })

      // Registered only where the medium can tear a row: a transactional store has no such state.
      const tearTail = subject.tearTail
      if (tearTail !== undefined)
        it('never counts a torn last row, and repairs only it', async () => {
          const { location, stores } = await freshStores()
          const events = await withSourceRun(stores, 3)
          const [next, after] = ledgerRows(source, 5).slice(3)
          const row = Buffer.from(`${JSON.stringify(next)}\n`, 'utf8')
          await tearTail(location, S, source.runId, row.subarray(0, Math.floor(row.length / 2)))
          const reopened = await open(location)
          const snapshot = await value(reopened.events.read(S, source.runId))
          expect(snapshot).toMatchObject({ highWater: 3, problem: null })
          expect(snapshot.tornTail).not.toBeNull()
          expect(snapshot.events).toEqual(events)
          expect(await value(reopened.events.append(S, source.runId, after!))).toEqual({ highWater: 4 })
          expect((await value(reopened.events.read(S, source.runId))).events).toEqual([...events, after])
        })

      it('keeps every acknowledged durable row of a process killed mid-append (SIGKILL)', async () => {
        const { location, stores } = await freshStores()
        await value(stores.sessions.create(sessionRecord(S)))
        await value(stores.runs.create(runHeader(source)))
        const events = ledgerRows(source, 400)
        const eventsFile = join(await scratchDir(), 'events.json')
        await writeFile(eventsFile, JSON.stringify(events))
        const child = spawnStoreChild({
          ...subject.child,
          location,
          mode: 'append',
          sessionId: S,
          runId: source.runId,
          eventsFile,
        })
        await child.waitFor((m) => typeof m['committed'] === 'number' && m['committed'] >= 5)
        await child.kill()
        const acknowledged = Math.max(
          ...child.messages.map((m) => (typeof m['committed'] === 'number' ? m['committed'] : 0)),
        )
        expect(child.messages.some((m) => 'error' in m)).toBe(false)
        const reopened = await open(location)
        const snapshot = await value(reopened.events.read(S, source.runId))
        expect(snapshot.problem).toBeNull()
        expect(snapshot.highWater).toBeGreaterThanOrEqual(acknowledged)
        expect(snapshot.events).toEqual(events.slice(0, snapshot.highWater))
        const { highWater } = await value(reopened.events.append(S, source.runId, events[snapshot.highWater]!))
        expect(highWater).toBe(snapshot.highWater + 1)
      })
    })

    describe('capabilities', () => {
      it('says whether a durable append survives a crash of the machine', async () => {
        const { stores } = await freshStores()
        expect(await value(stores.sessions.list())).toEqual([])
        expect(stores.capabilities.durableAppend).toBe(subject.durableAppend)
        // A copy of the ports (a host's wrapper) carries the same answer.
        expect({ ...stores }.capabilities.durableAppend).toBe(subject.durableAppend)
      })
    })

    describe('ledger fold and replay', () => {
      // What every adapter's digest covers: each row text plus a newline, in order (a JSONL file's bytes).
      const digestOf = (events: ReadonlyArray<RuntimeEvent>) =>
        createHash('sha256')
          .update(events.map((event) => `${JSON.stringify(event)}\n`).join(''), 'utf8')
          .digest('hex')
      const scanOf = ({ events, ...rest }: LedgerSnapshot, digest: string): LedgerScan => ({
        rows: events.length,
        ...rest,
        digest,
      })
      const foldOf = async (stores: StorePorts, runId = source.runId) => {
        const handed: Array<RuntimeEvent> = []
        const scan = await value(stores.events.fold(S, runId, (event) => handed.push(event)))
        return { scan, handed }
      }
      const replayOf = async (stores: StorePorts, expected: LedgerScan) => {
        const handed: Array<RuntimeEvent> = []
        const result = await stores.events.replay(S, source.runId, expected, (events) => {
          handed.push(...events)
        })()
        return { result, handed }
      }

      it('folds what read reads, handing every row over in order, with the digest of the row texts', async () => {
        const { location, stores } = await freshStores()
        const events = await withSourceRun(stores, 9)
        const reopened = await open(location)
        const snapshot = await value(reopened.events.read(S, source.runId))
        const { scan, handed } = await foldOf(reopened)
        expect(handed).toEqual(events)
        expect(scan).toEqual(scanOf(snapshot, digestOf(events)))
      })

      // The prefix digest at a pin, from the same pass: the digest after exactly `h` rows, computed
      // here over the rows' JSON texts; every adapter must give the same hex for the same rows.
      it('reports the prefix digest at a pin (0, 1, the middle, the high-water) and none past it', async () => {
        const { location, stores } = await freshStores()
        const events = await withSourceRun(stores, 9)
        const reopened = await open(location)
        const { scan: plain } = await foldOf(reopened)
        expect(plain).not.toHaveProperty('digestAt')
        for (const pin of [0, 1, 5, 9]) {
          const handed: Array<RuntimeEvent> = []
          const scan = await value(reopened.events.fold(S, source.runId, (e) => handed.push(e), { digestAt: pin }))
          expect(handed).toEqual(events)
          expect(scan).toEqual({ ...plain, digestAt: { rows: pin, digest: digestOf(events.slice(0, pin)) } })
        }
        expect(plain.digest).toBe(digestOf(events))
        for (const pin of [10, 1000]) {
          const handed: Array<RuntimeEvent> = []
          const scan = await value(reopened.events.fold(S, source.runId, (e) => handed.push(e), { digestAt: pin }))
          expect(handed).toEqual(events)
          expect(scan).toEqual(plain)
          expect(scan).not.toHaveProperty('digestAt')
        }
        // A scan with a pin is still what a replay takes.
        const pinned = await value(reopened.events.fold(S, source.runId, () => undefined, { digestAt: 3 }))
        expect((await replayOf(reopened, pinned)).handed).toEqual(events)
      })

      it('digests pin 0 of an empty run, and refuses a pin that is not a row count, reading nothing', async () => {
        const { stores } = await freshStores()
        await value(stores.sessions.create(sessionRecord(S)))
        await value(stores.runs.create(runHeader(source)))
        const noop = () => undefined
        expect(await value(stores.events.fold(S, source.runId, noop, { digestAt: 0 }))).toMatchObject({
          highWater: 0,
          digest: digestOf([]),
          digestAt: { rows: 0, digest: digestOf([]) },
        })
        expect(await value(stores.events.fold(S, source.runId, noop, { digestAt: 1 }))).not.toHaveProperty('digestAt')
        for (const pin of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
          const refused = await failure(stores.events.fold(S, source.runId, noop, { digestAt: pin }))
          expect(refused).toMatchObject({ _tag: 'InvalidRecord', record: 'FoldOptions' })
        }
        expect((await failure(stores.events.fold(S, 'run-7', noop, { digestAt: 0 })))._tag).toBe('NotFound')
      })

      it('digests a pin before, at and past an undecodable row, which is committed', async () => {
        const { location, stores } = await freshStores()
        const events = await withSourceRun(stores, 3)
        await subject.writeGarbageRow(location, S, source.runId)
        const reopened = await open(location)
        const { scan } = await foldOf(reopened)
        expect(scan).toMatchObject({ highWater: 4, rows: 3, problem: { _tag: 'Unreadable', line: 4 } })
        const at = async (pin: number) =>
          (await value(reopened.events.fold(S, source.runId, () => undefined, { digestAt: pin }))).digestAt
        expect(await at(3)).toEqual({ rows: 3, digest: digestOf(events) })
        // The pin counts rows as `highWater` does, not as `rows` does.
        expect(await at(4)).toEqual({ rows: 4, digest: scan.digest })
        expect(await at(5)).toBeUndefined()
      })

      it('folds an empty run, a missing run and a hostile id as read reads them', async () => {
        const { stores } = await freshStores()
        await value(stores.sessions.create(sessionRecord(S)))
        await value(stores.runs.create(runHeader(source)))
        const { scan, handed } = await foldOf(stores)
        expect(handed).toEqual([])
        expect(scan).toEqual({
          rows: 0,
          highWater: 0,
          committedBytes: 0,
          tornTail: null,
          problem: null,
          digest: digestOf([]),
        })
        expect((await replayOf(stores, scan)).result).toEqual({ _tag: 'Right', right: undefined })
        const noop = () => undefined
        expect((await failure(stores.events.fold(S, 'run-7', noop)))._tag).toBe('NotFound')
        expect((await failure(stores.events.replay(S, 'run-7', scan, noop)))._tag).toBe('NotFound')
        expect((await failure(stores.events.fold(S, '../run', noop)))._tag).toBe('InvalidId')
        expect((await failure(stores.events.replay(S, source.runId, { ...scan, digest: 'nope' }, noop)))._tag).toBe(
          'InvalidRecord',
        )
      })

      it('folds and replays a ledger with an undecodable row as read reads it', async () => {
        const { location, stores } = await freshStores()
        const events = await withSourceRun(stores, 3)
        await subject.writeGarbageRow(location, S, source.runId)
        const reopened = await open(location)
        const snapshot = await value(reopened.events.read(S, source.runId))
        const { scan, handed } = await foldOf(reopened)
        expect(handed).toEqual(snapshot.events)
        expect(scan).toEqual(scanOf(snapshot, scan.digest))
        // The undecodable row is committed: the digest covers it too.
        expect(scan.digest).not.toBe(digestOf(events))
        expect(scan.problem).toMatchObject({ _tag: 'Unreadable', line: 4 })
        const replayed = await replayOf(reopened, scan)
        expect(replayed.result._tag).toBe('Right')
        expect(replayed.handed).toEqual(snapshot.events)
      })

      const tornTail = subject.tearTail
      if (tornTail !== undefined)
        it('leaves a torn last row out of the fold, its digest and the replay', async () => {
          const { location, stores } = await freshStores()
          const events = await withSourceRun(stores, 3)
          const [next] = ledgerRows(source, 4).slice(3)
          const row = Buffer.from(`${JSON.stringify(next)}\n`, 'utf8')
          await tornTail(location, S, source.runId, row.subarray(0, 12))
          const reopened = await open(location)
          const snapshot = await value(reopened.events.read(S, source.runId))
          const { scan, handed } = await foldOf(reopened)
          expect(scan.tornTail).not.toBeNull()
          expect(handed).toEqual(events)
          expect(scan).toEqual(scanOf(snapshot, digestOf(events)))
          expect((await replayOf(reopened, scan)).handed).toEqual(events)
          // The torn row is not committed: a pin at the high-water digests the committed rows, one past it has no digest.
          const pinned = await value(reopened.events.fold(S, source.runId, () => undefined, { digestAt: 3 }))
          expect(pinned).toEqual({ ...scan, digestAt: { rows: 3, digest: digestOf(events) } })
          const past = await value(reopened.events.fold(S, source.runId, () => undefined, { digestAt: 4 }))
          expect(past).toEqual(scan)
        })

      it('replays the folded rows in order, awaiting each batch, whatever was appended since', async () => {
        const { location, stores } = await freshStores()
        const events = await withSourceRun(stores, 40)
        const { scan } = await foldOf(stores)
        const [later] = ledgerRows(source, 41).slice(40)
        await value(stores.events.append(S, source.runId, later!))
        const reopened = await open(location)
        let busy = false
        let overlaps = 0
        const seen: Array<RuntimeEvent> = []
        const result = await reopened.events.replay(S, source.runId, scan, async (rows) => {
          if (busy) overlaps += 1
          busy = true
          for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setTimeout(resolve, 1))
          seen.push(...rows)
          busy = false
        })()
        expect(result).toEqual({ _tag: 'Right', right: undefined })
        expect(overlaps).toBe(0)
        expect(seen).toEqual(events)
      })

      it('is LedgerChanged when a committed row changed in place, or fewer bytes are there', async () => {
        const { location, stores } = await freshStores()
        const events = await withSourceRun(stores, 4)
        const { scan } = await foldOf(stores)
        expect((await replayOf(stores, { ...scan, committedBytes: scan.committedBytes + 1 })).result).toMatchObject({
          _tag: 'Left',
          left: { _tag: 'LedgerChanged', reason: 'fewer_bytes' },
        })
        const other = createHash('sha256').update('other').digest('hex')
        expect((await replayOf(stores, { ...scan, digest: other })).result).toMatchObject({
          _tag: 'Left',
          left: { _tag: 'LedgerChanged', reason: 'different_bytes' },
        })
        // Same length, still a row that decodes: only the digest tells.
        const text = JSON.stringify(events[1])
        const changed = text.replace('"text":"x"', '"text":"y"')
        expect(changed).not.toBe(text)
        await subject.rewriteRow(location, S, source.runId, 2, changed)
        const replayed = await replayOf(await open(location), scan)
        expect(replayed.result).toMatchObject({
          _tag: 'Left',
          left: { _tag: 'LedgerChanged', reason: 'different_bytes' },
        })
        const message = (replayed.result as { left: { message: string } }).left.message
        expect(message).toContain('the ledger changed between two reads of its committed rows')
        expect(message).not.toContain('write_file')
      })

      it('stops at a consumer that throws or rejects: IoFailed at deliver', async () => {
        const { stores } = await freshStores()
        await withSourceRun(stores, 3)
        const folded = await failure(
          stores.events.fold(S, source.runId, () => {
            throw new Error('boom')
          }),
        )
        expect(folded).toMatchObject({ _tag: 'IoFailed', operation: 'deliver' })
        const { scan } = await foldOf(stores)
        const replayed = await failure(
          stores.events.replay(S, source.runId, scan, () => Promise.reject(new Error('boom'))),
        )
        expect(replayed).toMatchObject({ _tag: 'IoFailed', operation: 'deliver' })
        // The store is fine afterwards.
        expect((await foldOf(stores)).scan).toEqual(scan)
      })
    })

    describe('recovery survey', () => {
      if (subject.survey)
        it('answers for each session what its per-session reads answer, a page at a time', async () => {
          const { location, stores } = await freshStores()
          // session-1: a source run of 4 rows, a claimed boundary with its target header, an empty
          // run, two shell runs and this instance's owner lock.
          await withSourceRun(stores)
          const { claim, header } = claimAndHeader(source, 4, runIdentity(S, 2))
          await value(stores.claims.claimBoundary(claim, header))
          await value(stores.runs.create(runHeader(runIdentity(S, 3))))
          await value(stores.shellRuns.write(shellRun(source, 'shell-b')))
          await value(stores.shellRuns.write(shellRun(source, 'shell-a')))
          await value(stores.ownerLocks.acquire(S, ownerLock(process.pid), () => Promise.resolve(false)))
          // session-2: one run of 2 rows and nothing else; session-3: a session record alone.
          const other = runIdentity('session-2', 1)
          await value(stores.sessions.create(sessionRecord('session-2')))
          await value(stores.runs.create(runHeader(other)))
          for (const event of ledgerRows(other, 2)) {
            await value(stores.events.append('session-2', other.runId, event, { durable: true }))
          }
          await value(stores.sessions.create(sessionRecord('session-3')))
          const ids = ['session-3', S, 'session-9', '../escape', 'session-2']
          const reader = (await open(location)).survey
          if (reader === undefined) throw new Error('the adapter says it offers a survey, and has none')
          const surveyed = await value(reader.read(ids))
          const expected = []
          for (const sessionId of ids) {
            const runs = await stores.runs.list(sessionId)()
            const lastRows = new Map()
            if (runs._tag === 'Right') {
              for (const entry of runs.right) {
                lastRows.set(entry.runId, await stores.events.readLastRow(sessionId, entry.runId)())
              }
            }
            expected.push({
              sessionId,
              ownerLock: await stores.ownerLocks.read(sessionId)(),
              shellRuns: await stores.shellRuns.list(sessionId)(),
              claims: await stores.claims.list(sessionId)(),
              runs,
              lastRows,
            })
          }
          expect(surveyed).toEqual(expected)
          // What the fixture holds shows through, so the equality above is not one of empty answers.
          const first = surveyed[1]
          expect(first?.runs._tag === 'Right' && first.runs.right.map((entry) => entry.runId)).toEqual([
            'run-1',
            'run-2',
            'run-3',
          ])
          expect(first?.lastRows.get('run-1')).toEqual({
            _tag: 'Right',
            right: (await value(stores.events.read(S, 'run-1'))).events[3],
          })
          expect(first?.lastRows.get('run-3')).toEqual({ _tag: 'Right', right: null })
          expect(first?.ownerLock).toMatchObject({ _tag: 'Right', right: { pid: process.pid } })
          await value(stores.ownerLocks.release(S, ownerLock(process.pid)))
        })
      else
        it('offers none, so recovery reads session by session', async () => {
          const { stores } = await freshStores()
          expect(stores.survey).toBeUndefined()
        })
    })

    describe('shell runs', () => {
      it('writes, replaces and lists records', async () => {
        const { location, stores } = await freshStores()
        await value(stores.sessions.create(sessionRecord(S)))
        expect(await value(stores.shellRuns.list(S))).toEqual([])
        await value(stores.shellRuns.write(shellRun(source, 'shell-b')))
        await value(stores.shellRuns.write(shellRun(source, 'shell-a')))
        const ended = shellRun(source, 'shell-b', { status: 'completed', exitCode: 0 })
        await value(stores.shellRuns.write(ended))
        const listed = await value((await open(location)).shellRuns.list(S))
        expect(listed).toEqual([
          { shellRunId: 'shell-a', shellRun: shellRun(source, 'shell-a') },
          { shellRunId: 'shell-b', shellRun: ended },
        ])
      })

      it('round-trips a supervised foreground record, which carries its operationId', async () => {
        const { location, stores } = await freshStores()
        await value(stores.sessions.create(sessionRecord(S)))
        const supervised = shellRun(source, 'shell-f', {
          operationId: makeNonEmptyStringUnsafe(`${source.runId}-o3`),
          bootId: makeNonEmptyStringUnsafe('b7c1f0e2-54a9-4c3e-9d0e-1f2a3b4c5d6e'),
          startTicks: makeNonNegativeIntUnsafe(123456),
        })
        await value(stores.shellRuns.write(supervised))
        expect(await value((await open(location)).shellRuns.list(S))).toEqual([
          { shellRunId: 'shell-f', shellRun: supervised },
        ])
        const ended = { ...supervised, status: 'failed' as const, exitCode: 2, endedAt: supervised.startedAt }
        await value(stores.shellRuns.write(ended))
        expect(await value((await open(location)).shellRuns.list(S))).toEqual([
          { shellRunId: 'shell-f', shellRun: ended },
        ])
      })
    })

    describe('continuation claims', () => {
      it('claims a boundary once, with its target header, durably', async () => {
        const { location, stores } = await freshStores()
        await withSourceRun(stores)
        expect(await value(stores.claims.read(S, source.runId, 4))).toBeNull()
        const first = claimAndHeader(source, 4, runIdentity(S, 2))
        await value(stores.claims.claimBoundary(first.claim, first.header))
        const second = claimAndHeader(source, 4, runIdentity(S, 3))
        const conflict = await failure(stores.claims.claimBoundary(second.claim, second.header))
        expect(conflict._tag).toBe('ClaimConflict')
        const reopened = await open(location)
        expect(await value(reopened.claims.read(S, source.runId, 4))).toEqual(first.claim)
        expect(await value(reopened.runs.read(S, 'run-2'))).toEqual(first.header)
        expect((await failure(reopened.runs.read(S, 'run-3')))._tag).toBe('NotFound')
        // Another boundary of the same run is its own claim.
        const later = claimAndHeader(source, 3, runIdentity(S, 4))
        await value(reopened.claims.claimBoundary(later.claim, later.header))
        const claims = await value(reopened.claims.list(S))
        expect(claims).toHaveLength(2)
        expect(claims).toEqual(expect.arrayContaining([first.claim, later.claim]))
      })

      it('refuses a header that is not the claim target, and a target run that already exists', async () => {
        const { stores } = await freshStores()
        await withSourceRun(stores)
        const { claim, header } = claimAndHeader(source, 4, runIdentity(S, 2))
        const wrong = await failure(stores.claims.claimBoundary(claim, { ...header, runId: makeRunIdUnsafe('run-8') }))
        expect(wrong._tag).toBe('InvalidRecord')
        expect(await value(stores.claims.list(S))).toEqual([])
        expect((await failure(stores.runs.read(S, 'run-8')))._tag).toBe('NotFound')
        await value(stores.runs.create(runHeader(runIdentity(S, 2))))
        const taken = await failure(stores.claims.claimBoundary(claim, header))
        expect(taken._tag).toBe('RunAlreadyExists')
        // The header that was there stays as it was; a claim left behind is recovery's to close.
        expect(await value(stores.runs.read(S, 'run-2'))).toEqual(runHeader(runIdentity(S, 2)))
      })

      it('reads a claim repeated with its target run as the claim taken, not the run', async () => {
        const { stores } = await freshStores()
        await withSourceRun(stores)
        const { claim, header } = claimAndHeader(source, 4, runIdentity(S, 2))
        await value(stores.claims.claimBoundary(claim, header))
        // Both the boundary and the target run exist now: the boundary is what was taken.
        const again = await failure(stores.claims.claimBoundary(claim, header))
        expect(again._tag).toBe('ClaimConflict')
        expect(await value(stores.claims.list(S))).toEqual([claim])
      })

      it(`lets exactly one of ${RACERS} racing processes claim a boundary`, async () => {
        const { location, stores } = await freshStores()
        await withSourceRun(stores)
        const barrier = join(await scratchDir(), 'go')
        const racers = Array.from({ length: RACERS }, (_, i) => {
          const { claim, header } = claimAndHeader(source, 4, runIdentity(S, 10 + i))
          return spawnStoreChild({ ...subject.child, location, mode: 'claim', claim, header, barrier })
        })
        await Promise.all(racers.map((racer) => racer.waitFor((m) => m['ready'] === true)))
        await writeFile(barrier, 'go')
        const results = await Promise.all(
          racers.map(async (racer) => (await racer.waitFor((m) => 'result' in m))['result']),
        )
        await Promise.all(racers.map((racer) => racer.exited))
        expect(results.filter((r) => r === 'claimed')).toHaveLength(1)
        expect(results.filter((r) => r !== 'claimed')).toEqual(Array(RACERS - 1).fill('ClaimConflict'))
        const reopened = await open(location)
        const claims = await value(reopened.claims.list(S))
        expect(claims).toHaveLength(1)
        const winner = claims[0]!.targetRunId
        const targets = (await value(reopened.runs.list(S))).map((entry) => entry.runId).filter((id) => id !== 'run-1')
        expect(targets).toEqual([winner])
        expect(racers[results.indexOf('claimed')]).toBeDefined()
      })
    })

    describe('owner lock', () => {
      const byPid = (subject.ownership ?? 'pid') === 'pid'
      if (byPid)
        it('is exclusive, judged by the caller, taken over when stale and released by its owner only', async () => {
          const { location, stores } = await freshStores()
          expect(await value(stores.ownerLocks.read(S))).toBeNull()
          const mine = ownerLock(1001)
          await value(stores.ownerLocks.acquire(S, mine, () => Promise.resolve(false)))
          const other = open(location)
          const held = await failure((await other).ownerLocks.acquire(S, ownerLock(1002), () => Promise.resolve(false)))
          expect(held).toMatchObject({ _tag: 'OwnerLockHeld', existing: mine })
          const same = await failure(stores.ownerLocks.acquire(S, mine, () => Promise.resolve(false)))
          expect(same._tag).toBe('OwnerLockHeld')
          const broken = await failure(
            stores.ownerLocks.acquire(S, ownerLock(1003), () => Promise.reject(new Error('x'))),
          )
          expect(broken._tag).toBe('StaleCheckFailed')
          expect((await failure(stores.ownerLocks.release(S, ownerLock(1002))))._tag).toBe('OwnerLockHeld')
          const judged: Array<unknown> = []
          const theirs = ownerLock(1002)
          await value(
            (await other).ownerLocks.acquire(S, theirs, (existing) => {
              judged.push(existing)
              return Promise.resolve(true)
            }),
          )
          expect(judged).toEqual([mine])
          expect(await value(stores.ownerLocks.read(S))).toEqual(theirs)
          await value((await other).ownerLocks.release(S, theirs))
          expect(await value(stores.ownerLocks.read(S))).toBeNull()
          await value(stores.ownerLocks.release(S, theirs))
        })

      if (byPid)
        it('names a live process until it dies, then lets a pid-liveness check take it over', async () => {
          const { location, stores } = await freshStores()
          const holder = spawnStoreChild({ ...subject.child, location, mode: 'lock', sessionId: S, lock: null })
          const started = await holder.waitFor((m) => 'result' in m)
          expect(started['result']).toBe('acquired')
          const alive = (pid: number) => {
            try {
              process.kill(pid, 0)
              return true
            } catch {
              return false
            }
          }
          const isStale = (existing: { readonly pid: number }) => Promise.resolve(!alive(existing.pid))
          const held = await failure(stores.ownerLocks.acquire(S, ownerLock(process.pid), isStale))
          expect(held).toMatchObject({ _tag: 'OwnerLockHeld', existing: { pid: holder.pid } })
          await holder.kill()
          await value(stores.ownerLocks.acquire(S, ownerLock(process.pid), isStale))
          expect(await value((await open(location)).ownerLocks.read(S))).toEqual(ownerLock(process.pid))
        })

      // The data-losing race of issue 20: several processes judge one dead owner's lock stale at
      // once. Each round plants a lock of a pid that cannot exist and lets LOCK_RACERS processes go
      // for it together; a winner keeps its lock alive, so two winners in a round are two owners.
      if (byPid)
        it(`lets exactly one of ${LOCK_RACERS} processes take over a stale lock, ${LOCK_RACE_ROUNDS} rounds`, async () => {
          const { location, stores } = await freshStores()
          const barrierDir = await scratchDir()
          const prefix = 'race-'
          const racers = Array.from({ length: LOCK_RACERS }, () =>
            spawnStoreChild({
              ...subject.child,
              location,
              mode: 'lock-race',
              rounds: LOCK_RACE_ROUNDS,
              barrierDir,
              prefix,
            }),
          )
          for (const racer of racers) await racer.waitFor((m) => m['ready'] === true)
          const owners: Array<number> = []
          for (let round = 1; round <= LOCK_RACE_ROUNDS; round += 1) {
            // pid_max is at most 2^22 on Linux (and lower on macOS): no process has this pid.
            const dead = ownerLock(4_194_304 + round)
            await value(stores.ownerLocks.acquire(`${prefix}${round}`, dead, () => Promise.resolve(false)))
            await writeFile(join(barrierDir, String(round)), '')
            const results = await Promise.all(racers.map((racer) => racer.waitFor((m) => m['round'] === round)))
            const winners = results.filter((m) => m['result'] === 'acquired')
            owners.push(winners.length)
            // Every loser saw a live owner: none failed for any other reason.
            expect(results.filter((m) => m['result'] !== 'acquired' && m['result'] !== 'OwnerLockHeld')).toEqual([])
          }
          expect(owners.filter((count) => count !== 1)).toEqual([])
          const last = await value((await open(location)).ownerLocks.read(`${prefix}${LOCK_RACE_ROUNDS}`))
          expect(racers.map((racer) => racer.pid)).toContain(last?.pid)
          for (const racer of racers) await racer.kill()
        })

      // A shared server's lock is judged by the server: the caller's pid check is never asked (a pid
      // of another host means nothing here), and a holder's lock ends when its connection does.
      if (!byPid)
        it('is exclusive while its holder lives, never judged by the caller, released by its owner only', async () => {
          const { location, stores } = await freshStores()
          expect(await value(stores.ownerLocks.read(S))).toBeNull()
          const mine = ownerLock(1001)
          await value(stores.ownerLocks.acquire(S, mine, () => Promise.resolve(false)))
          const other = await open(location)
          const judged: Array<unknown> = []
          const judge = (existing: unknown) => {
            judged.push(existing)
            return Promise.resolve(true)
          }
          const held = await failure(other.ownerLocks.acquire(S, ownerLock(1002), judge))
          expect(held).toMatchObject({ _tag: 'OwnerLockHeld', existing: mine })
          expect(judged).toEqual([])
          expect((await failure(stores.ownerLocks.acquire(S, mine, judge)))._tag).toBe('OwnerLockHeld')
          expect(await value(other.ownerLocks.read(S))).toEqual(mine)
          expect((await failure(other.ownerLocks.release(S, ownerLock(1002))))._tag).toBe('OwnerLockHeld')
          expect((await failure(other.ownerLocks.release(S, mine)))._tag).toBe('OwnerLockHeld')
          await value(stores.ownerLocks.release(S, mine))
          expect(await value(other.ownerLocks.read(S))).toBeNull()
          const theirs = ownerLock(1002)
          await value(other.ownerLocks.acquire(S, theirs, judge))
          expect(await value(stores.ownerLocks.read(S))).toEqual(theirs)
          expect((await failure(stores.ownerLocks.acquire(S, mine, judge)))._tag).toBe('OwnerLockHeld')
          await value(other.ownerLocks.release(S, theirs))
          expect(await value(stores.ownerLocks.read(S))).toBeNull()
          await value(stores.ownerLocks.acquire(S, mine, judge))
          expect(judged).toEqual([])
        })

      if (!byPid)
        it('names a live process until it is SIGKILLed, then reads as free and is taken', async () => {
          const { location, stores } = await freshStores()
          const holder = spawnStoreChild({ ...subject.child, location, mode: 'lock', sessionId: S, lock: null })
          const started = await holder.waitFor((m) => 'result' in m)
          expect(started['result']).toBe('acquired')
          const held = await failure(stores.ownerLocks.acquire(S, ownerLock(process.pid), () => Promise.resolve(true)))
          expect(held).toMatchObject({ _tag: 'OwnerLockHeld', existing: { pid: holder.pid } })
          await holder.kill()
          // The server notices the dropped connection on its own schedule: wait for it, generously.
          for (let waited = 0; (await value(stores.ownerLocks.read(S))) !== null; waited += 1) {
            if (waited > 600) throw new Error('the dead holder still owns the session after 60 s')
            await new Promise((done) => setTimeout(done, 100))
          }
          await value(stores.ownerLocks.acquire(S, ownerLock(process.pid), () => Promise.resolve(false)))
          expect(await value((await open(location)).ownerLocks.read(S))).toEqual(ownerLock(process.pid))
        })
    })
  })
}

/** The rows of a ledger as the suite builds them, for adapters' own tests. */
export const conformanceRows = (sessionId: string, runNumber: number, count: number): ReadonlyArray<RuntimeEvent> =>
  ledgerRows(runIdentity(sessionId, runNumber), count)
