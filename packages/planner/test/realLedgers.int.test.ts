/**
 * Ledger problems as the planner meets them in a real data dir: every ledger here is written to disk
 * as bytes and read back by the real store reader (@maka/stores), so the planner is tested against
 * the snapshots that reader produces, never against shapes built by hand.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AgentRun, RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe, type LedgerBuilder } from '@maka/events/testing'
import { describeStoreError } from '@maka/stores'
import { ledgerPath, makeFileStores } from '@maka/store-jsonl'
import { afterAll, describe, expect, it } from 'vitest'
import type { LedgerSnapshot } from '@maka/stores'
import { type AncestorRead, type ContinuationPlan, planContinuation } from '../src/index.js'
import { continuationHeader, defaultFacts, freshIds, header, safeRows } from './givenLedger.js'

const roots: Array<string> = []
afterAll(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
})

const rowBytes = (event: RuntimeEvent): Buffer => Buffer.from(`${JSON.stringify(event)}\n`, 'utf8')
const bytesOf = (events: ReadonlyArray<RuntimeEvent>): Buffer => Buffer.concat(events.map(rowBytes))

interface OnDisk {
  readonly header: AgentRun
  readonly bytes: Buffer
}

/** Writes each run's header and ledger bytes to a fresh data dir and reads every ledger back through the store. */
const readThroughStore = async (runs: ReadonlyArray<OnDisk>): Promise<ReadonlyArray<AncestorRead>> => {
  const root = await mkdtemp(join(tmpdir(), 'maka-planner-'))
  roots.push(root)
  const stores = makeFileStores(root)
  const reads: Array<AncestorRead> = []
  for (const run of runs) {
    const created = await stores.runs.create(run.header)()
    if (created._tag === 'Left') throw new Error(describeStoreError(created.left))
    await writeFile(ledgerPath(stores.dataDir, run.header.sessionId, run.header.runId), run.bytes)
  }
  for (const run of runs) {
    const read = await stores.events.read(run.header.sessionId, run.header.runId)()
    if (read._tag === 'Left') throw new Error(describeStoreError(read.left))
    const ledger: LedgerSnapshot = read.right
    reads.push({ header: run.header, ledger })
  }
  return reads
}

/** Plans the last run of `runs`, its predecessors as the ancestors, all read from disk. */
const planOnDisk = async (runs: ReadonlyArray<OnDisk>): Promise<ContinuationPlan> => {
  const reads = await readThroughStore(runs)
  const source = reads[reads.length - 1]!
  return planContinuation(
    { source: source.header, ledger: source.ledger, ancestors: reads.slice(0, -1), facts: defaultFacts },
    freshIds,
  )
}

const detailOf = (plan: ContinuationPlan, code: string) => plan.diagnostics.find((d) => d.code === code)?.detail

// A well-formed row of another run (its own id, so it is not also a duplicate id).
const foreignRow = (field: 'sessionId' | 'runId'): RuntimeEvent => {
  const other = makeLedgerBuilderUnsafe({
    sessionId: field === 'sessionId' ? 'session-9' : 'session-1',
    invocationId: 'invocation-1',
    runId: field === 'runId' ? 'run-9' : 'run-1',
    turnId: 'turn-1',
  })
  return { ...other.modelText('from elsewhere'), id: `foreign-${field}` } as RuntimeEvent
}

const insertAt = <A>(items: ReadonlyArray<A>, index: number, item: A): ReadonlyArray<A> => [
  ...items.slice(0, index),
  item,
  ...items.slice(index),
]

const idsOf = (n: number) => ({ runId: `run-c${n}`, invocationId: `invocation-c${n}`, turnId: `turn-c${n}` })
const builderFor = (h: AgentRun): LedgerBuilder =>
  makeLedgerBuilderUnsafe({ sessionId: h.sessionId, invocationId: h.invocationId, runId: h.runId, turnId: h.turnId })

/** A normal root run and one continuation of it, pinned at the root's full ledger. */
const chain = () => {
  const rootHeader = header(idsOf(0))
  const r = builderFor(rootHeader)
  const rootEvents = [
    r.userText('refactor the parser'),
    r.functionCall('call-0', 'read_file', { path: 'parser.ts' }),
    r.functionResponse('call-0', 'read_file', 'source'),
    r.terminal(),
  ]
  const childHeader = continuationHeader(idsOf(1), rootHeader, rootEvents.length)
  const l = builderFor(childHeader)
  const childEvents = [
    l.continuationStart(childHeader.continuationSource!),
    l.functionCall('call-1', 'shell', { cmd: 'step 1' }),
    l.functionResponse('call-1', 'shell', 'ok 1'),
    l.terminal(),
  ]
  return { rootHeader, rootEvents, childHeader, childEvents }
}

describe('planContinuation over ledgers read by the real store', () => {
  describe('when the source ledger is whole', () => {
    it('continues (the baseline every case below breaks)', async () => {
      const plan = await planOnDisk([{ header: header(), bytes: bytesOf(safeRows()) }])
      expect(plan.disposition).toBe('continue')
    })
  })

  describe('when a well-formed row of another session or run stands anywhere in the source ledger', () => {
    const positions = [0, 1, 2, 3, 4]
    const cases = positions.flatMap((at) => (['sessionId', 'runId'] as const).map((field) => [at, field] as const))
    it.each(cases)('at index %i (other %s) parks runtime_identity_mismatch naming its line', async (at, field) => {
      const events = insertAt(safeRows(), at, foreignRow(field))
      const plan = await planOnDisk([{ header: header(), bytes: bytesOf(events) }])
      expect(plan.rejectionReasons).toEqual(['runtime_identity_mismatch'])
      expect(detailOf(plan, 'runtime_identity_mismatch')).toMatchObject({ runId: 'run-1', line: at + 1, field })
    })
  })

  describe('when a foreign row is followed by an unreadable row', () => {
    it('parks runtime_ledger_unreadable at the unreadable line: exit 7 comes before exit 8', async () => {
      const [a, b, ...rest] = safeRows()
      const bytes = Buffer.concat([bytesOf([a!, foreignRow('runId'), b!]), Buffer.from('not json\n'), bytesOf(rest)])
      const plan = await planOnDisk([{ header: header(), bytes }])
      expect(plan.rejectionReasons).toEqual(['runtime_ledger_unreadable'])
      expect(detailOf(plan, 'runtime_ledger_unreadable')).toMatchObject({ reason: 'row_unreadable', line: 4 })
      expect(plan.sourceRuntimeEventHighWater).toBeNull()
    })
  })

  describe('when two rows of the source ledger share an id', () => {
    it('parks runtime_ledger_unreadable at the second one', async () => {
      const events = safeRows()
      const twin = { ...events[2]!, id: events[1]!.id }
      const plan = await planOnDisk([{ header: header(), bytes: bytesOf([events[0]!, events[1]!, twin, events[3]!]) }])
      expect(plan.rejectionReasons).toEqual(['runtime_ledger_unreadable'])
      expect(detailOf(plan, 'runtime_ledger_unreadable')).toMatchObject({ line: 3 })
    })
  })

  describe('when the source ledger ends without a newline', () => {
    it('continues on the committed rows, with a torn-tail warning, when the tail is a cut JSON object', async () => {
      const events = safeRows()
      const cut = rowBytes(events[3]!).subarray(0, 40)
      const plan = await planOnDisk([{ header: header(), bytes: Buffer.concat([bytesOf(events.slice(0, 3)), cut]) }])
      expect(plan.diagnostics.map((d) => d.code)).toContain('ledger_torn_tail')
      expect(plan.sourceRuntimeEventHighWater).toBe(3)
    })

    it.each([
      ['garbage', Buffer.from('garbage')],
      ['a complete row missing only its newline', Buffer.from(JSON.stringify(safeRows()[3]))],
    ])('parks runtime_ledger_unreadable on %s, at its line', async (_name, tail) => {
      const events = safeRows()
      const plan = await planOnDisk([{ header: header(), bytes: Buffer.concat([bytesOf(events.slice(0, 3)), tail]) }])
      expect(plan.rejectionReasons).toEqual(['runtime_ledger_unreadable'])
      expect(detailOf(plan, 'runtime_ledger_unreadable')).toMatchObject({ line: 4 })
    })
  })

  describe('when a foreign row stands in an ancestor’s ledger', () => {
    // Index 4 is past the child's pin (4 rows): still the ancestor's ledger, still reported.
    it.each([0, 1, 3, 4])('at index %i parks runtime_identity_mismatch naming the ancestor', async (at) => {
      const { rootHeader, rootEvents, childHeader, childEvents } = chain()
      const pinned = at < 4 ? insertAt(rootEvents, at, foreignRow('runId')) : [...rootEvents, foreignRow('runId')]
      // The child pins the ancestor's row count as it now stands, so only the foreign row is wrong.
      const child = at < 4 ? continuationHeader(idsOf(1), rootHeader, pinned.length) : childHeader
      const l = builderFor(child)
      const ownEvents = at < 4 ? [l.continuationStart(child.continuationSource!), ...childEvents.slice(1)] : childEvents
      const plan = await planOnDisk([
        { header: rootHeader, bytes: bytesOf(pinned) },
        { header: child, bytes: bytesOf(ownEvents) },
      ])
      expect(plan.rejectionReasons).toEqual(['runtime_identity_mismatch'])
      expect(detailOf(plan, 'runtime_identity_mismatch')).toMatchObject({ runId: 'run-c0', line: at + 1 })
    })

    it('parks a foreign first row of the continuation itself as runtime_identity_mismatch', async () => {
      const { rootHeader, rootEvents, childHeader, childEvents } = chain()
      const plan = await planOnDisk([
        { header: rootHeader, bytes: bytesOf(rootEvents) },
        { header: childHeader, bytes: bytesOf([foreignRow('sessionId'), ...childEvents]) },
      ])
      expect(plan.rejectionReasons).toEqual(['runtime_identity_mismatch'])
      expect(detailOf(plan, 'runtime_identity_mismatch')).toMatchObject({ runId: 'run-c1', line: 1 })
    })

    it('parks runtime_ledger_unreadable when the ancestor repeats an id', async () => {
      const { rootHeader, rootEvents, childHeader, childEvents } = chain()
      const twin = { ...rootEvents[3]!, id: rootEvents[0]!.id }
      const plan = await planOnDisk([
        { header: rootHeader, bytes: bytesOf([...rootEvents.slice(0, 3), twin]) },
        { header: childHeader, bytes: bytesOf(childEvents) },
      ])
      expect(plan.rejectionReasons).toEqual(['runtime_ledger_unreadable'])
      expect(detailOf(plan, 'runtime_ledger_unreadable')).toMatchObject({ runId: 'run-c0', line: 4 })
    })
  })
})
