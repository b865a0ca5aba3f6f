import { type AgentRun, type ContinuationClaim, makeRunIdUnsafe } from '@maka/events'
import { type LedgerSnapshot, type RunListing, type StoreError, unreadable } from '@maka/stores'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { describe, expect, it } from 'vitest'
import {
  type ContinuationPlan,
  type HostFacts,
  type OwnerLiveness,
  makeRuntimeContinuationPlanner,
} from '../src/index.js'
import { materializePlan } from '../src/ContinuationPlan.js'
import {
  continuationIdsUnsafe,
  claim,
  continuationHeader,
  defaultFacts,
  foreignRead,
  header,
  ledgerOf,
  rows,
  safeRows,
  unreadableRead,
} from './givenLedger.js'

// -------------------------------------------------------------------------------------
// in-memory fake ports
// -------------------------------------------------------------------------------------

interface FakeRun {
  /** What `listRuns` shows; defaults to `readRun`'s header. */
  listed?: RunListing
  readRun: E.Either<unknown, AgentRun>
  readLedger: E.Either<unknown, LedgerSnapshot>
}

interface World {
  enabled: boolean
  runs: Map<string, FakeRun>
  listRuns?: unknown
  claims: E.Either<unknown, ReadonlyArray<ContinuationClaim>>
  liveness: E.Either<unknown, OwnerLiveness>
  facts: E.Either<unknown, HostFacts>
  throwing?: 'readRun' | 'observe' | 'listClaims'
}

const runOf = (h: AgentRun, ledger: LedgerSnapshot): FakeRun => ({ readRun: E.right(h), readLedger: E.right(ledger) })

const safeWorld = (): World => ({
  enabled: true,
  runs: new Map([['run-1', runOf(header(), ledgerOf(safeRows()))]]),
  claims: E.right([]),
  liveness: E.right('none'),
  facts: E.right(defaultFacts),
})

const isTypedFailure = (u: unknown): boolean =>
  typeof u === 'object' &&
  u !== null &&
  typeof (u as { readonly _tag?: unknown })._tag === 'string' &&
  typeof (u as { readonly message?: unknown }).message === 'string'

const plannerOf = (world: World, calls: Array<string>) => {
  // A world fails with whatever a case names: a typed failure (a `_tag` and a `message`) is the
  // port's Left; anything else stands for an adapter that rejects with it.
  const logged =
    <A>(name: string, result: () => E.Either<unknown, A>): TE.TaskEither<StoreError, A> =>
    () => {
      calls.push(name)
      if (world.throwing === name) return Promise.reject(new Error(`${name} exploded`))
      const outcome = result()
      if (E.isRight(outcome)) return Promise.resolve(outcome)
      return isTypedFailure(outcome.left)
        ? Promise.resolve(E.left(outcome.left as StoreError))
        : Promise.reject(outcome.left as Error)
    }
  const readLedger = (runId: string) => world.runs.get(runId)?.readLedger ?? E.left(new Error('ENOENT'))
  let idCounter = 0
  return makeRuntimeContinuationPlanner({
    safeBoundaryResumeEnabled: world.enabled,
    store: {
      listRuns: () =>
        logged('listRuns', () =>
          world.listRuns !== undefined
            ? E.left(world.listRuns)
            : E.right(
                [...world.runs.entries()].map(
                  ([runId, run]): RunListing =>
                    run.listed ??
                    (E.isRight(run.readRun)
                      ? { runId: makeRunIdUnsafe(runId), header: run.readRun.right }
                      : {
                          runId: makeRunIdUnsafe(runId),
                          error: unreadable(`${runId}/run.json`, String(run.readRun.left)),
                        }),
                ),
              ),
        ),
      readRun: (_sessionId, runId) =>
        logged('readRun', () => world.runs.get(runId)?.readRun ?? E.left(new Error(`ENOENT ${runId}/run.json`))),
      readLedger: (_sessionId, runId) => logged('readLedger', () => readLedger(runId)),
      // The same reads handed over row by row, as a store that streams its ledgers would.
      foldLedger: (_sessionId, runId, onEvent) =>
        logged('readLedger', () =>
          E.map((ledger: LedgerSnapshot) => {
            for (const event of ledger.events) onEvent(event)
            return {
              rows: ledger.events.length,
              highWater: ledger.highWater,
              tornTail: ledger.tornTail,
              problem: ledger.problem,
            }
          })(readLedger(runId)),
        ),
      listClaims: () => logged('listClaims', () => world.claims),
    },
    host: {
      ownerLiveness: () => logged('ownerLiveness', () => world.liveness),
      observe: () => logged('observe', () => world.facts),
    },
    ids: {
      newContinuationIds: () => {
        idCounter += 1
        return continuationIdsUnsafe({
          invocationId: `invocation-new${idCounter}`,
          runId: `run-new${idCounter}`,
          turnId: `turn-new${idCounter}`,
        })
      },
    },
  })
}

const givenSession = (world: World) => {
  const calls: Array<string> = []
  const planner = plannerOf(world, calls)
  // A second planner over the same world answers every request as an outline, with its own ids.
  const outlineCalls: Array<string> = []
  const outliner = plannerOf(world, outlineCalls)
  const rowsOf = (runId: string) => {
    const read = world.runs.get(runId)?.readLedger
    return read !== undefined && E.isRight(read) ? read.right.events : []
  }
  return {
    calls,
    whenPlanning: async (runId?: string) => {
      const request = runId === undefined ? { sessionId: 'session-1' } : { sessionId: 'session-1', runId }
      const planCallsBefore = calls.length
      const plan = await planner.plan(request)()
      // Folding every ledger as it streams plans the same: same plan, same history, same port calls.
      const callsBefore = outlineCalls.length
      const outline = await outliner.outline(request)()
      expect(materializePlan(outline, rowsOf)).toStrictEqual(plan)
      expect(outlineCalls.slice(callsBefore)).toEqual(calls.slice(planCallsBefore))
      return {
        plan,
        calls,
        thenParks(reasons: ReadonlyArray<string>, detail?: Record<string, unknown>) {
          expect(plan.disposition).toBe('park')
          expect(plan.rejectionReasons).toEqual(reasons)
          if (detail !== undefined) expect(plan.diagnostics[0]?.detail).toMatchObject(detail)
          return this
        },
        thenContinues() {
          expect(plan.rejectionReasons).toEqual([])
          expect(plan.disposition).toBe('continue')
          return this
        },
      }
    },
  }
}

const at = (iso: string) => ({ createdAt: iso, updatedAt: iso })

// -------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------

describe('makeRuntimeContinuationPlanner', () => {
  describe('when everything is in order', () => {
    it('continues the named run with ids from the id port', async () => {
      const { plan } = (await givenSession(safeWorld()).whenPlanning('run-1')).thenContinues()
      expect(plan.continuation).toMatchObject({
        sessionId: 'session-1',
        runId: 'run-new1',
        invocationId: 'invocation-new1',
        turnId: 'turn-new1',
        sourceRunId: 'run-1',
        sourceRuntimeEventHighWater: 4,
      })
    })

    it('plans the same data twice to equal plans except the fresh ids', async () => {
      const session = givenSession(safeWorld())
      const first = (await session.whenPlanning('run-1')).plan
      const second = (await session.whenPlanning('run-1')).plan
      const withoutIds = (p: ContinuationPlan) => ({
        ...p,
        continuation: { ...p.continuation, invocationId: '', runId: '', turnId: '' },
      })
      expect(withoutIds(first)).toEqual(withoutIds(second))
    })
  })

  describe('when one early exit fails', () => {
    const cases: ReadonlyArray<{
      readonly exit: number
      readonly name: string
      readonly world: (w: World) => World
      readonly latest?: true
      readonly reason: string
      readonly detail?: Record<string, unknown>
    }> = [
      { exit: 1, name: 'the flag is off', world: (w) => ({ ...w, enabled: false }), reason: 'resume_feature_disabled' },
      {
        exit: 2,
        name: 'the latest top-level run completed',
        world: (w) => ({
          ...w,
          runs: new Map([
            ...w.runs,
            [
              'run-2',
              runOf(
                header({ runId: 'run-2', status: 'completed', ...at('2026-01-02T00:00:00.000Z') }, ['failureClass']),
                ledgerOf([]),
              ),
            ],
          ]),
        }),
        latest: true,
        reason: 'resume_candidate_missing',
        detail: { reason: 'latest_run_completed', runId: 'run-2' },
      },
      {
        exit: 3,
        name: 'the owner is alive',
        world: (w) => ({ ...w, liveness: E.right('alive') }),
        reason: 'session_owner_alive',
      },
      {
        exit: 4,
        name: 'the host cannot observe',
        world: (w) => ({ ...w, facts: E.left({ _tag: 'RealpathFailed', message: 'ENOENT /work/project' }) }),
        reason: 'safety_observation_unavailable',
        detail: { stage: 'observe', cause: 'RealpathFailed: ENOENT /work/project' },
      },
      {
        exit: 5,
        name: 'run.json cannot be read',
        world: (w) => ({
          ...w,
          runs: new Map([['run-1', { ...w.runs.get('run-1')!, readRun: E.left(new Error('EISDIR')) }]]),
        }),
        reason: 'source_run_unreadable',
        detail: { runId: 'run-1', cause: 'EISDIR' },
      },
      {
        exit: 6,
        name: 'the header has no workspace identity',
        world: (w) => ({
          ...w,
          runs: new Map([['run-1', runOf(header({}, ['workspaceIdentity']), ledgerOf(safeRows()))]]),
        }),
        reason: 'workspace_identity_missing',
      },
      {
        exit: 7,
        name: 'the ledger has an unreadable row',
        world: (w) => ({
          ...w,
          runs: new Map([['run-1', runOf(header(), unreadableRead(safeRows(), 3, 'Unexpected token'))]]),
        }),
        reason: 'runtime_ledger_unreadable',
        detail: { line: 3, cause: 'Unexpected token' },
      },
      {
        exit: 8,
        name: 'a row belongs to another run',
        world: (w) => ({
          ...w,
          runs: new Map([['run-1', runOf(header(), foreignRead(safeRows(), 1, 'runId'))]]),
        }),
        reason: 'runtime_identity_mismatch',
        detail: { line: 2, field: 'runId' },
      },
      {
        exit: 9,
        name: 'a continuation run already holds the boundary',
        world: (w) => {
          const existing = continuationHeader(
            { runId: 'run-3', invocationId: 'invocation-3', turnId: 'turn-3' },
            header(),
            4,
            {
              status: 'failed',
            },
          )
          return { ...w, runs: new Map([...w.runs, ['run-3', runOf(existing, ledgerOf([]))]]) }
        },
        reason: 'continuation_already_exists',
        detail: { existingRunId: 'run-3' },
      },
      {
        exit: 9,
        name: 'a claim already holds the boundary',
        world: (w) => ({ ...w, claims: E.right([claim({ targetRunId: 'run-8' })]) }),
        reason: 'continuation_already_exists',
        detail: { existingRunId: 'run-8' },
      },
    ]

    it.each(cases)('exit $exit: $name → $reason', async ({ world, reason, detail, latest }) => {
      const runId = latest === true ? undefined : 'run-1'
      ;(await givenSession(world(safeWorld())).whenPlanning(runId)).thenParks([reason], detail)
    })
  })

  describe('when several early exits would fail', () => {
    it('reports only the first, in the spec order 1–9', async () => {
      const source = header()
      const holder = claim({ targetRunId: 'run-8' })
      // Every exit fails at first; each step repairs the exit that was just reported.
      const world: World = {
        enabled: false,
        runs: new Map([
          [
            'run-1',
            {
              listed: { runId: makeRunIdUnsafe('run-1'), header: source },
              readRun: E.right(header({ runId: 'run-7' })),
              readLedger: E.left(new Error('EIO')),
            },
          ],
          [
            'run-2',
            runOf(header({ runId: 'run-2', status: 'completed', ...at('2026-01-03T00:00:00.000Z') }), ledgerOf([])),
          ],
        ]),
        claims: E.right([holder]),
        liveness: E.right('alive'),
        facts: E.left('no realpath'),
      }
      const run1 = () => world.runs.get('run-1')!
      const repairs: ReadonlyArray<readonly [string, () => void]> = [
        ['resume_feature_disabled', () => (world.enabled = true)],
        ['resume_candidate_missing', () => world.runs.delete('run-2')],
        ['session_owner_alive', () => (world.liveness = E.right('stale'))],
        ['safety_observation_unavailable', () => (world.facts = E.right(defaultFacts))],
        ['source_run_unreadable', () => (run1().readRun = E.right(header({}, ['workspaceIdentity'])))],
        ['workspace_identity_missing', () => (run1().readRun = E.right(source))],
        ['runtime_ledger_unreadable', () => (run1().readLedger = E.right(foreignRead(safeRows(), 0, 'sessionId')))],
        ['runtime_identity_mismatch', () => (run1().readLedger = E.right(ledgerOf(safeRows())))],
        ['continuation_already_exists', () => (world.claims = E.right([]))],
      ]
      for (const [reason, repair] of repairs) {
        ;(await givenSession(world).whenPlanning()).thenParks([reason])
        repair()
      }
      ;(await givenSession(world).whenPlanning()).thenContinues()
    })

    it('asks nothing of the ports when the flag is off', async () => {
      const { plan, calls } = await givenSession({ ...safeWorld(), enabled: false }).whenPlanning()
      expect(plan).toEqual({
        disposition: 'park',
        rejectionReasons: ['resume_feature_disabled'],
        diagnostics: [
          {
            code: 'resume_feature_disabled',
            severity: 'error',
            message: expect.stringContaining('MAKA_RUNTIME_SAFE_BOUNDARY_RESUME') as string,
            detail: { flag: 'MAKA_RUNTIME_SAFE_BOUNDARY_RESUME' },
          },
        ],
        sourceRunId: null,
        sourceRuntimeEventHighWater: null,
        sourceRuntimeEventPrefixDigest: null,
      })
      expect(calls).toEqual([])
    })

    it('does not observe the host once the owner is alive', async () => {
      const { calls } = (
        await givenSession({ ...safeWorld(), liveness: E.right('alive') }).whenPlanning('run-1')
      ).thenParks(['session_owner_alive'])
      expect(calls).toEqual(['ownerLiveness'])
    })

    it('reports an unreadable header without observing for it, even if observing would fail', async () => {
      const w = safeWorld()
      const world: World = { ...w, facts: E.left('boom'), runs: new Map() }
      const { calls } = (await givenSession(world).whenPlanning('run-1')).thenParks(['source_run_unreadable'])
      expect(calls).not.toContain('observe')
    })
  })

  describe('when choosing the latest candidate', () => {
    const world = (runs: ReadonlyArray<AgentRun>): World => ({
      ...safeWorld(),
      runs: new Map(runs.map((h) => [h.runId as string, runOf(h, ledgerOf(safeRows(rows())))])),
    })

    it('takes the newest top-level run and ignores child runs', async () => {
      const older = header({ runId: 'run-1', ...at('2026-01-01T00:00:00.000Z') })
      const newer = header({ runId: 'run-b', ...at('2026-01-02T00:00:00.000Z') })
      const child = header(
        { runId: 'run-c', parentRunId: 'run-b', status: 'running', ...at('2026-01-03T00:00:00.000Z') },
        ['failureClass'],
      )
      const { plan } = await givenSession(world([older, child, newer])).whenPlanning()
      expect(plan.sourceRunId).toBe('run-b')
    })

    it('breaks a createdAt tie by run id', async () => {
      const a = header({ runId: 'run-a' })
      const b = header({ runId: 'run-b' })
      const { plan } = await givenSession(world([b, a])).whenPlanning()
      expect(plan.sourceRunId).toBe('run-b')
    })

    it('orders by instant, not by string', async () => {
      const fractional = header({ runId: 'run-a', ...at('2026-01-01T00:00:00.500Z') })
      const whole = header({ runId: 'run-b', ...at('2026-01-01T00:00:00Z') })
      const { plan } = await givenSession(world([whole, fractional])).whenPlanning()
      expect(plan.sourceRunId).toBe('run-a')
    })

    it('takes a continuation run as a top-level candidate', async () => {
      const source = header({ ...at('2026-01-01T00:00:00.000Z') })
      const cont = continuationHeader({ runId: 'run-k', invocationId: 'invocation-k', turnId: 'turn-k' }, source, 4, {
        ...at('2026-01-02T00:00:00.000Z'),
      })
      const { plan } = await givenSession(world([source, cont])).whenPlanning()
      expect(plan.sourceRunId).toBe('run-k')
    })

    it('parks when the only runs are child runs', async () => {
      const child = header({ runId: 'run-c', parentRunId: 'run-x' })
      ;(await givenSession(world([child])).whenPlanning()).thenParks(['resume_candidate_missing'], {
        reason: 'no_top_level_run',
      })
    })

    it('parks when the session has no run', async () => {
      ;(await givenSession(world([])).whenPlanning()).thenParks(['resume_candidate_missing'])
    })

    it('parks when the runs cannot be listed', async () => {
      ;(await givenSession({ ...safeWorld(), listRuns: new Error('EACCES') }).whenPlanning()).thenParks(
        ['resume_candidate_missing'],
        { reason: 'run_listing_failed', cause: 'EACCES' },
      )
    })

    it('parks with source_run_unreadable when a listed header is unreadable: it might be the latest', async () => {
      const w = world([header()])
      w.runs.set('run-z', { readRun: E.left('corrupt'), readLedger: E.left('corrupt') })
      w.runs.set('run-y', { readRun: E.left('corrupt'), readLedger: E.left('corrupt') })
      const { plan, calls } = (await givenSession(w).whenPlanning()).thenParks(['source_run_unreadable'], {
        reason: 'listed_run_unreadable',
        runId: 'run-z',
        runIds: ['run-z', 'run-y'],
      })
      expect(plan).toMatchObject({ sourceRunId: 'run-z', sourceRuntimeEventHighWater: null })
      expect(calls).toEqual(['listRuns'])
    })

    it('still plans an explicitly named run past an unreadable listing entry (the host facts judge the rest)', async () => {
      const w = world([header()])
      w.runs.set('run-z', { readRun: E.left('corrupt'), readLedger: E.left('corrupt') })
      ;(await givenSession(w).whenPlanning('run-1')).thenContinues()
    })
  })

  describe('when a port misbehaves', () => {
    it('treats a failed owner check as an unavailable observation', async () => {
      ;(await givenSession({ ...safeWorld(), liveness: E.left('ps failed') }).whenPlanning('run-1')).thenParks(
        ['safety_observation_unavailable'],
        { stage: 'ownerLiveness' },
      )
    })

    it('proceeds past a stale owner lock', async () => {
      ;(await givenSession({ ...safeWorld(), liveness: E.right('stale') }).whenPlanning('run-1')).thenContinues()
    })

    it.each([
      ['readRun', 'source_run_unreadable'],
      ['observe', 'safety_observation_unavailable'],
      ['listClaims', 'safety_observation_unavailable'],
    ] as const)('turns a rejected %s into %s', async (port, reason) => {
      ;(await givenSession({ ...safeWorld(), throwing: port }).whenPlanning('run-1')).thenParks([reason])
    })

    it('parks a ledger that cannot be read at all', async () => {
      const w = safeWorld()
      w.runs.set('run-1', { readRun: E.right(header()), readLedger: E.left(new Error('EIO')) })
      ;(await givenSession(w).whenPlanning('run-1')).thenParks(['runtime_ledger_unreadable'], { cause: 'EIO' })
    })

    it('parks a header that names another run', async () => {
      const w = safeWorld()
      w.runs.set('run-1', runOf(header({ runId: 'run-6' }), ledgerOf(safeRows())))
      ;(await givenSession(w).whenPlanning('run-1')).thenParks(['source_run_unreadable'])
    })
  })

  describe('when the source is a continuation', () => {
    const chainWorld = () => {
      const root = header({
        runId: 'run-r',
        invocationId: 'invocation-r',
        turnId: 'turn-r',
        ...at('2026-01-01T00:00:00.000Z'),
      })
      const rootRows = safeRows(
        makeLedgerBuilderUnsafe({
          sessionId: 'session-1',
          invocationId: 'invocation-r',
          runId: 'run-r',
          turnId: 'turn-r',
        }),
      )
      const cont = continuationHeader({ runId: 'run-k', invocationId: 'invocation-k', turnId: 'turn-k' }, root, 4, {
        ...at('2026-01-02T00:00:00.000Z'),
      })
      const l = makeLedgerBuilderUnsafe({
        sessionId: 'session-1',
        invocationId: 'invocation-k',
        runId: 'run-k',
        turnId: 'turn-k',
      })
      const contRows = [l.continuationStart(cont.continuationSource!), l.userText('and now?'), l.terminal()]
      const w: World = {
        ...safeWorld(),
        runs: new Map([
          ['run-r', runOf(root, ledgerOf(rootRows))],
          ['run-k', runOf(cont, ledgerOf(contRows))],
        ]),
      }
      return { w, root, cont }
    }

    it('loads the ancestors through the store and replays them first', async () => {
      const { w } = chainWorld()
      const { plan } = (await givenSession(w).whenPlanning()).thenContinues()
      expect(plan.continuation?.runtimeContext.map((e) => e.id)).toEqual([
        'run-r-e1',
        'run-r-e2',
        'run-r-e3',
        'run-r-e4',
        'run-k-e1',
        'run-k-e2',
        'run-k-e3',
      ])
    })

    it('parks an ancestor whose header cannot be read', async () => {
      const { w } = chainWorld()
      w.runs.set('run-r', { readRun: E.left('gone'), readLedger: E.left('gone') })
      ;(await givenSession(w).whenPlanning('run-k')).thenParks(['runtime_ledger_unreadable'], {
        reason: 'ancestor_unreadable',
        runId: 'run-r',
        stage: 'run',
      })
    })

    it('parks an ancestor whose ledger cannot be read', async () => {
      const { w, root } = chainWorld()
      w.runs.set('run-r', { readRun: E.right(root), readLedger: E.left('EIO') })
      ;(await givenSession(w).whenPlanning('run-k')).thenParks(['runtime_ledger_unreadable'], {
        reason: 'ancestor_unreadable',
        stage: 'ledger',
      })
    })
  })
})
