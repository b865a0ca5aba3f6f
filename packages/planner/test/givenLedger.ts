/**
 * Given/when/then builders for planner tests: a source header, its ledger and host facts in, a plan
 * and assertions out. Headers go through the real AgentRun codec so a fixture can never be a shape
 * the store would reject.
 */
import {
  type AgentRun,
  type ContinuationClaim,
  type RuntimeEvent,
  decodeWith,
  makeNonEmptyStringUnsafe,
  makeRunIdUnsafe,
} from '@maka/events'
import { ContinuationClaim as ContinuationClaimCodec } from '@maka/events'
import {
  FIXTURE_CWD,
  FIXTURE_WORKSPACE,
  type LedgerBuilder,
  makeContinuationHeaderUnsafe,
  makeLedgerBuilderUnsafe,
  makeRunHeaderUnsafe,
} from '@maka/events/testing'
import type { LedgerSnapshot } from '@maka/stores'
import { expect } from 'vitest'
import {
  type Ancestors,
  type BoundaryHolders,
  type ContinuationIds,
  type ContinuationPlan,
  type HostFacts,
  type OperationFacts,
  planContinuation,
} from '../src/index.js'

export const CWD = FIXTURE_CWD
export const WORKSPACE = FIXTURE_WORKSPACE

/** A valid AgentRun header; `omit` removes optional keys the defaults set. */
export const header = makeRunHeaderUnsafe

/** A continuation header of `source` pinned at `highWater`. */
export const continuationHeader = makeContinuationHeaderUnsafe

export const claim = (fields: Partial<Record<keyof ContinuationClaim, unknown>>): ContinuationClaim => {
  const decoded = decodeWith(ContinuationClaimCodec)({
    sessionId: 'session-1',
    sourceInvocationId: 'invocation-1',
    sourceRunId: 'run-1',
    sourceTurnId: 'turn-1',
    sourceRuntimeEventHighWater: 4,
    targetInvocationId: 'invocation-9',
    targetRunId: 'run-9',
    targetTurnId: 'turn-9',
    claimedAt: '2026-01-01T00:02:00.000Z',
    ...fields,
  })
  if (decoded._tag === 'Left') throw new Error(`bad fixture claim: ${decoded.left}`)
  return decoded.right
}

/** A clean ledger read of some rows. */
export const ledgerOf = (
  events: ReadonlyArray<RuntimeEvent>,
  overrides: Partial<LedgerSnapshot> = {},
): LedgerSnapshot => ({
  events,
  highWater: events.length,
  committedBytes: events.reduce((bytes, event) => bytes + Buffer.byteLength(JSON.stringify(event)) + 1, 0),
  tornTail: null,
  problem: null,
  ...overrides,
})

/**
 * The read the store reports for a ledger whose row at `line` is unreadable: the rows before it,
 * every complete row counted (as @maka/stores does; realLedgers.int.test.ts reads real files).
 */
export const unreadableRead = (events: ReadonlyArray<RuntimeEvent>, line: number, reason: string): LedgerSnapshot =>
  ledgerOf(events.slice(0, line - 1), { highWater: events.length, problem: { _tag: 'Unreadable', line, reason } })

/**
 * The read the store reports when the row at `index` belongs to another run (or session): every
 * row kept, the first foreign one named.
 */
export const foreignRead = (
  events: ReadonlyArray<RuntimeEvent>,
  index: number,
  field: 'sessionId' | 'runId',
): LedgerSnapshot => {
  const row = events[index]!
  const foreign = { ...row, id: `foreign-${row.id}`, [field]: `${row[field]}-other` } as RuntimeEvent
  return ledgerOf([...events.slice(0, index), foreign, ...events.slice(index + 1)], {
    problem: { _tag: 'IdentityMismatch', line: index + 1, field },
  })
}

export const defaultFacts: HostFacts = {
  currentCwd: CWD,
  currentWorkspaceIdentity: WORKSPACE,
  backgroundOperationsSettled: true,
  unsettledOperations: [],
  availableToolNames: ['shell', 'read_file'],
}

/** Ids as a test writes them: plain strings, branded here once. */
export type LooseContinuationIds = { readonly [K in keyof ContinuationIds]: string }

/** Brands test ids without checking them, so a test can name any id it wants to plan against. */
export const continuationIdsUnsafe = (ids: LooseContinuationIds): ContinuationIds => ({
  invocationId: makeNonEmptyStringUnsafe(ids.invocationId),
  runId: makeRunIdUnsafe(ids.runId),
  turnId: makeNonEmptyStringUnsafe(ids.turnId),
})

export const freshIds: ContinuationIds = continuationIdsUnsafe({
  invocationId: 'invocation-2',
  runId: 'run-2',
  turnId: 'turn-2',
})

/** The builder for the default source identity (session-1 / invocation-1 / run-1 / turn-1). */
export const rows = (): LedgerBuilder => makeLedgerBuilderUnsafe()

/** The four rows of a turn interrupted after a committed tool response. */
export const safeRows = (l: LedgerBuilder = rows()): ReadonlyArray<RuntimeEvent> => [
  l.userText('list the files'),
  l.functionCall('call-1', 'read_file', { path: '.' }),
  l.functionResponse('call-1', 'read_file', { files: ['a.ts'] }),
  l.terminal(),
]

export interface Given {
  readonly source?: AgentRun
  readonly ledger?: Partial<LedgerSnapshot>
  readonly ancestors?: Ancestors
  readonly boundaryHolders?: BoundaryHolders
  /** What the host read for open operations (Phase 2). */
  readonly operationFacts?: ReadonlyMap<string, OperationFacts>
}

/** Host facts of a host that writes the tool journal (Phase 2), with the built-in tools' modes. */
export const journalFacts: Partial<HostFacts> = {
  availableToolNames: ['list_dir', 'read_file', 'shell', 'write_file'],
  toolJournal: true,
  toolRecoveryModes: { list_dir: 'replay_safe', read_file: 'replay_safe', shell: 'by_args', write_file: 'reconcile' },
}

export interface Then {
  readonly plan: ContinuationPlan
  thenContinues(): Then
  thenParks(reasons: ReadonlyArray<string>): Then
  thenDetail(code: string, detail: Record<string, unknown>): Then
}

const then = (plan: ContinuationPlan): Then => ({
  plan,
  thenContinues() {
    expect(plan.rejectionReasons).toEqual([])
    expect(plan.disposition).toBe('continue')
    expect(plan.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
    expect(plan.continuation).toBeDefined()
    return this
  },
  thenParks(reasons) {
    expect(plan.rejectionReasons).toEqual(reasons)
    expect(plan.disposition).toBe('park')
    expect(plan.continuation).toBeUndefined()
    expect([...new Set(plan.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code))]).toEqual(reasons)
    return this
  },
  thenDetail(code, detail) {
    expect(plan.diagnostics.find((d) => d.code === code)?.detail).toMatchObject(detail)
    return this
  },
})

/** given a source ledger (and optionally header, ancestors, holders) → when planning with facts/ids → then … */
export const givenLedger = (events: ReadonlyArray<RuntimeEvent>, given: Given = {}) => ({
  whenPlanning: (facts: Partial<HostFacts> = {}, ids: Partial<LooseContinuationIds> = {}): Then =>
    then(
      planContinuation(
        {
          source: given.source ?? header(),
          ledger: ledgerOf(events, given.ledger),
          ...(given.ancestors === undefined ? {} : { ancestors: given.ancestors }),
          ...(given.boundaryHolders === undefined ? {} : { boundaryHolders: given.boundaryHolders }),
          ...(given.operationFacts === undefined ? {} : { operationFacts: given.operationFacts }),
          facts: { ...defaultFacts, ...facts },
        },
        continuationIdsUnsafe({ ...freshIds, ...ids }),
      ),
    ),
})
