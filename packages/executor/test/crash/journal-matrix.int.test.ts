/**
 * The SIGKILL matrix of the tool journal over the three stores (Phase 2, spec §10): a child runs a
 * protocol turn over the BUILT runtime on JSONL, SQLite or PostgreSQL and is killed at a journal
 * boundary — K1 the call committed, K2 the permission request committed (ask mode; the continuation
 * asks again, answered allow and deny), K3 the dispatch committed, K4 the effect done but its
 * response not, K5 `write_file` in the middle of its effect (half written: the probe finds it diverged),
 * K6 the response committed, K7 a torn dispatch row (JSONL) — for `read_file`, `write_file` and two test-only tools:
 * `keyed_append` (idempotent, a keyed effect log) and `append_log` (never_auto_retry, an effect log).
 * A restarted host recovers, plans twice (equal plans) and its decision is `FAILPOINTS_T1`'s for the
 * tool's mode; a plan that continues runs to the end with a model that makes no new call. Then: the
 * never_auto_retry effect happened at most once, the keyed effect once, the history holds exactly one
 * response per operation, the source's rows and header are unchanged, attempts run 1..n, and no
 * legacy run holds a dispatch row. Also: kills inside a continuation (K8 after its start row, until the
 * adoption budget parks; K9 after a reissue's dispatch; K10 after its settlement); a `reconcile` tool
 * whose effect lands after its probe ran (`relay_append`: a courier process delivers it late, and its
 * lagging probe answers `not_applied` meanwhile), killed after handing it off — the effect lands
 * before the execution's re-probe (refused, `reconcile_verdict_changed`) or while the continuation asks
 * permission again (its re-probe right before the dispatch stops it), and the next plan settles it
 * from the fresh verdict: one effect, one response; and a foreground `shell` call (reattach) killed at
 * K1–K6 on every store — K4 a command that makes its effect, kills its agent and ends (settled from its
 * files), K5 one that kills its agent and is still running (parked `tool_still_running`, then settled)
 * — whose command never runs twice.
 */
import { readFile, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  FAILPOINTS_T1,
  type FailpointPlanT1,
  type RecoveryMode,
  type RuntimeEvent,
  isFunctionCallEvent,
  isFunctionResponseEvent,
} from '@maka/events'
import { makeFileStores } from '@maka/store-jsonl'
import type { StorePorts } from '@maka/stores'
import { describe, expect, it } from 'vitest'
import type { CrashPoint } from '../../src/index.js'
import {
  CHILD_PROCESS_TEST_TIMEOUT_MS,
  type StoreChoice,
  type World,
  exists,
  makeWorld,
  restartedRuntime,
  spawnAgentChild,
  childBase,
  valueUnsafe,
} from './fixtures/agentChild.js'
import { EFFECT_LOG, KEYED_LOG, RELAY_LOG, RELAY_OUTBOX, RELAY_RELEASE } from './fixtures/testTools.mjs'
import { type StoreKind, fingerprint, untilOwnerGone, useStoreMatrix } from './fixtures/storeMatrix.js'

const { storeChoiceOf, openParentStores } = useStoreMatrix()

// -------------------------------------------------------------------------------------
// the cases
// -------------------------------------------------------------------------------------

type ToolName = 'read_file' | 'write_file' | 'keyed_append' | 'append_log'
type KillPoint = CrashPoint | 'after_tool_side_effect' | 'mid_tool_effect' | 'torn_dispatch'

const MODE_OF: Readonly<Record<ToolName, RecoveryMode>> = {
  read_file: 'replay_safe',
  write_file: 'reconcile',
  keyed_append: 'idempotent',
  append_log: 'never_auto_retry',
}

const ARGS_OF: Readonly<Record<ToolName, Record<string, unknown>>> = {
  read_file: { path: 'notes.txt' },
  write_file: { path: 'notes.txt', content: 'new' },
  keyed_append: { line: 'one' },
  append_log: { line: 'one' },
}

// Which failpoint of the table a kill point leaves behind, and what write_file's probe then finds
// (the file still holds its old bytes before the effect, half the new ones in its middle, the new
// ones after it).
const FAILPOINT_OF: Readonly<
  Record<string, { readonly id: string; readonly verdict?: 'applied' | 'not_applied' | 'diverged' }>
> = {
  after_function_call: { id: 'P1' },
  after_permission_request_committed: { id: 'P1' },
  // A torn dispatch row is not committed: the prefix is P1's.
  torn_dispatch: { id: 'P1' },
  after_tool_dispatch_committed: { id: 'P2', verdict: 'not_applied' },
  mid_tool_effect: { id: 'P3', verdict: 'diverged' },
  after_tool_side_effect: { id: 'P4', verdict: 'applied' },
  after_tool_response: { id: 'P5' },
}

const failpointOf = (point: KillPoint) => FAILPOINTS_T1.find((f) => f.id === FAILPOINT_OF[point]!.id)!

const expectedPlan = (tool: ToolName, point: KillPoint): FailpointPlanT1 => {
  const mode = MODE_OF[tool] as Exclude<RecoveryMode, 'reattach'>
  const cell = failpointOf(point).decision.plan[mode]
  return 'disposition' in cell ? cell : cell[FAILPOINT_OF[point]!.verdict!]
}

interface Case {
  readonly store: StoreKind
  readonly tool: ToolName
  readonly point: KillPoint
  /** K2: the continuation's answer under `ask`. */
  readonly answer?: 'allow' | 'deny'
  /** A run with the journal off (Phase 1): it parks and holds no dispatch row. */
  readonly legacy?: boolean
}

const K1_K3_K4_K6: ReadonlyArray<KillPoint> = [
  'after_function_call',
  'after_tool_dispatch_committed',
  'after_tool_side_effect',
  'after_tool_response',
]
const product = (
  store: StoreKind,
  tools: ReadonlyArray<ToolName>,
  points: ReadonlyArray<KillPoint> = K1_K3_K4_K6,
): Array<Case> => tools.flatMap((tool) => points.map((point) => ({ store, tool, point })))
const k2 = (store: StoreKind): Array<Case> =>
  (['allow', 'deny'] as const).map((answer) => ({
    store,
    tool: 'append_log',
    point: 'after_permission_request_committed',
    answer,
  }))

// journal-sigkill.int.test.ts covers read_file and write_file on JSONL.
const CASES: ReadonlyArray<Case> = [
  ...product('jsonl', ['keyed_append', 'append_log']),
  ...k2('jsonl'),
  ...product('sqlite', ['read_file', 'write_file', 'keyed_append', 'append_log']),
  ...k2('sqlite'),
  { store: 'sqlite', tool: 'append_log', point: 'after_function_call', legacy: true },
  // K5: write_file killed in the middle of its effect, the file truncated and half written.
  { store: 'jsonl', tool: 'write_file', point: 'mid_tool_effect' },
  { store: 'sqlite', tool: 'write_file', point: 'mid_tool_effect' },
  // K7 (JSONL only): a proper prefix of the dispatch row written, then the writer killed.
  { store: 'jsonl', tool: 'append_log', point: 'torn_dispatch' },
  { store: 'jsonl', tool: 'write_file', point: 'torn_dispatch' },
  ...product('postgres', ['keyed_append', 'append_log']),
]

// -------------------------------------------------------------------------------------
// reading the world
// -------------------------------------------------------------------------------------

const lines = async (path: string): Promise<ReadonlyArray<string>> =>
  (await exists(path)) ? (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '') : []

const runIdsOf = async (stores: StorePorts, sessionId: string): Promise<ReadonlyArray<string>> =>
  (await valueUnsafe(stores.runs.list(sessionId))).map((entry) => entry.runId)

const isProtocolRun = (events: ReadonlyArray<RuntimeEvent>): boolean =>
  events[0]?.actions?.runtimeProtocol !== undefined

// -------------------------------------------------------------------------------------
// the matrix
// -------------------------------------------------------------------------------------

const nameOf = (c: Case) =>
  `${c.store}: ${c.tool} killed at ${c.point}${c.answer === undefined ? '' : ` (answered ${c.answer})`}${c.legacy === true ? ' (journal off)' : ''}`

describe('the tool journal’s SIGKILL matrix on every store', () => {
  it.each(CASES.map((c) => [nameOf(c), c] as const))(
    '%s',
    async (_name, c) => {
      const journal = c.legacy !== true
      const world = await makeWorld(`m-${c.store}-${c.tool}-${c.point}-${c.answer ?? ''}${journal ? '' : 'legacy'}`)
      const store = storeChoiceOf(c.store, world)
      const markerPath = world.path('turn.marker')
      const child = spawnAgentChild({
        ...childBase(world),
        mode: 'turn',
        markerPath,
        journal,
        testTools: true,
        turnScript: [{ toolCall: { name: c.tool, args: ARGS_OF[c.tool] } }, { text: 'Done.' }],
        ...(c.point === 'after_tool_side_effect'
          ? { hangAfterEffect: true }
          : c.point === 'mid_tool_effect'
            ? { hangMidWrite: true }
            : c.point === 'torn_dispatch'
              ? { tornDispatch: true }
              : { crashPoint: c.point }),
        ...(store === undefined ? {} : { store }),
        ...(c.answer === undefined ? {} : { permissionMode: 'ask' as const }),
      })
      await child.line(`at:${c.point}`)
      expect(await child.kill()).toBe('SIGKILL')
      expect(await exists(markerPath)).toBe(false)

      if (c.point === 'torn_dispatch') {
        // The killed writer left a proper prefix of the dispatch row: a torn tail, not a committed row.
        const files = makeFileStores(world.dataDir)
        const [runId] = await runIdsOf(files, world.sessionId)
        const read = await valueUnsafe(files.events.read(world.sessionId, runId!))
        expect(read.tornTail).not.toBeNull()
        expect(read.events.filter((e) => e.actions?.toolDispatch !== undefined)).toEqual([])
      }
      const host = restartedRuntime(world, {
        journal,
        testTools: true,
        continuationSteps: [{ text: 'All done.' }],
        ...(store === undefined ? {} : { stores: openParentStores(store)! }),
        ...(c.answer === undefined ? {} : { permissionMode: 'ask' as const, permissionAnswer: c.answer }),
      })
      const { stores, runtime } = host
      if (c.store === 'postgres') await untilOwnerGone(stores, world.sessionId)
      await runtime.recover({ sessionIds: [world.sessionId] })
      const runIds = await runIdsOf(stores, world.sessionId)
      expect(runIds).toHaveLength(1)
      const sourceRunId = runIds[0]!
      const before = await fingerprint(stores, world, c.store, sourceRunId)

      const first = await runtime.plan({ sessionId: world.sessionId })
      const second = await runtime.plan({ sessionId: world.sessionId })
      const { continuation: c1, ...p1 } = first
      const { continuation: c2, ...p2 } = second
      expect(p2).toEqual(p1)
      expect(c2?.settlementPlan).toEqual(c1?.settlementPlan)
      expect(c2?.runtimeContext).toEqual(c1?.runtimeContext)

      const operationId = `${sourceRunId}-o2`
      if (!journal) {
        // Phase 1: the call parks as it always did.
        expect(first.rejectionReasons).toEqual(['dangling_tool_state'])
      } else {
        const expected = expectedPlan(c.tool, c.point)
        expect(first.disposition).toBe(expected.disposition)
        const status = failpointOf(c.point).decision.operationStatus
        expect(first.openToolOperations?.map((op) => [op.operationId, op.status, op.recoveryMode])).toEqual(
          status === 'none' || status === 'succeeded' ? undefined : [[operationId, status, MODE_OF[c.tool]]],
        )
        if (c.point === 'after_permission_request_committed') {
          // The request left pending at the crash is asked again, not parked on.
          expect(first.diagnostics.map((d) => d.code)).toContain('permission_reasked')
        }
        if (expected.disposition === 'park') {
          expect(first.rejectionReasons).toEqual([expected.reason])
        } else {
          expect(c1?.settlementPlan?.map((entry) => [entry.operationId, entry.action])).toEqual(
            expected.action === null ? undefined : [[operationId, expected.action]],
          )
        }
      }

      let continuationRunId: string | null = null
      if (first.disposition === 'continue') {
        const result = await runtime.execute(first)
        expect(result).toMatchObject({ _tag: 'Finished', status: 'completed' })
        continuationRunId = c1!.runId
        if (c.answer !== undefined) {
          // The continuation asked again, under its own request id.
          const callId = c1!.settlementPlan![0]!.toolCallId
          expect(host.questions).toEqual([`perm-${callId}-r1`])
        }
      }

      // Every run of the session, oldest first, as stored.
      const ledgers = new Map<string, ReadonlyArray<RuntimeEvent>>()
      for (const runId of await runIdsOf(stores, world.sessionId)) {
        ledgers.set(runId, (await valueUnsafe(stores.events.read(world.sessionId, runId))).events)
      }
      const source = ledgers.get(sourceRunId)!
      const continuation = continuationRunId === null ? [] : ledgers.get(continuationRunId)!
      const history = [...source, ...continuation]

      // The scripted model made no new call: the continuation holds no function_call row.
      expect(continuation.filter(isFunctionCallEvent)).toEqual([])
      // No dispatch row in a legacy run; a protocol run's dispatches of the operation count 1..n.
      for (const events of ledgers.values()) {
        if (!isProtocolRun(events)) expect(events.filter((e) => e.actions?.toolDispatch !== undefined)).toEqual([])
      }
      expect(isProtocolRun(source)).toBe(journal)
      const attempts = history.flatMap((e) =>
        e.actions?.toolDispatch?.operationId === operationId ? [e.actions.toolDispatch.attempt] : [],
      )
      expect(attempts).toEqual(attempts.map((_, index) => index + 1))
      // Exactly one response per call of the history once the plan continued, none while it parks.
      const responses = history.filter(isFunctionResponseEvent)
      const callIds = history.filter(isFunctionCallEvent).map((e) => e.content.id)
      expect(callIds).toHaveLength(1)
      expect(responses.map((e) => e.content.id)).toEqual(first.disposition === 'continue' ? callIds : [])
      if (journal && responses[0] !== undefined) {
        expect(responses[0].refs?.operationId).toBe(operationId)
      }

      // The effects.
      const effects = await lines(join(world.workspaceDir, EFFECT_LOG))
      const keyed = await lines(join(world.workspaceDir, KEYED_LOG))
      const notes = await readFile(join(world.workspaceDir, 'notes.txt'), 'utf8')
      const refused = c.answer === 'deny'
      if (refused) {
        expect(responses[0]?.content.isError).toBe(true)
        expect(responses[0]?.actions?.toolOutcome?.settlementOrigin).toBe('pre_t1_synthetic')
      }
      const ran = first.disposition === 'continue' && !refused
      // never_auto_retry: at most once; exactly once when it answered, or when it parked after its effect.
      const naExpected =
        c.tool !== 'append_log'
          ? 0
          : ran || (c.point === 'after_tool_side_effect' && first.disposition === 'park')
            ? 1
            : 0
      expect(effects).toHaveLength(naExpected)
      // idempotent: once, under the operation's key, however many attempts ran.
      expect(keyed).toEqual(c.tool === 'keyed_append' ? [`maka:${operationId}`] : [])
      expect(notes).toBe(c.tool !== 'write_file' ? 'hello\n' : c.point === 'mid_tool_effect' ? 'n' : 'new')

      // The source was never written after recovery.
      expect(await fingerprint(stores, world, c.store, sourceRunId)).toEqual(before)
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})

// -------------------------------------------------------------------------------------
// K8–K9: kills inside a continuation
// -------------------------------------------------------------------------------------

describe('a continuation killed while it settles (K8, K9)', () => {
  // A keyed_append turn killed after its dispatch (attempt 1, no effect), recovered.
  const dispatchedSource = async (store: StoreKind, name: string) => {
    const world = await makeWorld(name)
    const choice = storeChoiceOf(store, world)
    const child = spawnAgentChild({
      ...childBase(world),
      mode: 'turn',
      markerPath: world.path('turn.marker'),
      journal: true,
      testTools: true,
      crashPoint: 'after_tool_dispatch_committed',
      turnScript: [{ toolCall: { name: 'keyed_append', args: ARGS_OF.keyed_append } }, { text: 'Done.' }],
      ...(choice === undefined ? {} : { store: choice }),
    })
    await child.line('at:after_tool_dispatch_committed')
    expect(await child.kill()).toBe('SIGKILL')
    const host = restartedRuntime(world, {
      journal: true,
      testTools: true,
      continuationSteps: [{ text: 'All done.' }],
      ...(choice === undefined ? {} : { stores: openParentStores(choice)! }),
    })
    await host.runtime.recover({ sessionIds: [world.sessionId] })
    const [sourceRunId] = await runIdsOf(host.stores, world.sessionId)
    return { world, choice, host, sourceRunId: sourceRunId!, operationId: `${sourceRunId!}-o2` }
  }

  // A resumer child (recover, plan, execute) killed at `point` of its continuation.
  const killContinuationAt = async (
    world: World,
    choice: StoreChoice | undefined,
    point: CrashPoint,
    sourceRunId: string,
    n: number,
  ) => {
    const markerPath = world.path(`resume-${n}.marker`)
    const child = spawnAgentChild({
      ...childBase(world),
      mode: 'resume',
      sourceRunId,
      markerPath,
      journal: true,
      testTools: true,
      crashPoint: point,
      continuationSteps: [{ text: 'All done.' }],
      ...(choice === undefined ? {} : { store: choice }),
    })
    await child.line(`at:${point}`)
    expect(await child.kill()).toBe('SIGKILL')
    expect(await exists(markerPath)).toBe(false)
  }

  // Recovers, then plans twice: equal plans.
  const recoverAndPlan = async (host: ReturnType<typeof restartedRuntime>, sessionId: string) => {
    await host.runtime.recover({ sessionIds: [sessionId] })
    const first = await host.runtime.plan({ sessionId })
    const { continuation: c1, ...p1 } = first
    const { continuation: c2, ...p2 } = await host.runtime.plan({ sessionId })
    expect(p2).toEqual(p1)
    expect(c2?.settlementPlan).toEqual(c1?.settlementPlan)
    return first
  }

  it(
    'jsonl: K8 — killed after its start row three times, the 4th plan asks for a person (adoption budget 3)',
    async () => {
      const { world, choice, host, sourceRunId, operationId } = await dispatchedSource('jsonl', 'k8-jsonl')
      const fingerprints = new Map([[sourceRunId, await fingerprint(host.stores, world, 'jsonl', sourceRunId)]])
      for (let adoptions = 0; adoptions < 3; adoptions += 1) {
        const plan = await recoverAndPlan(host, world.sessionId)
        expect(plan.disposition).toBe('continue')
        expect(plan.openToolOperations).toMatchObject([{ operationId, adoptions, action: 'reissue' }])
        await killContinuationAt(world, choice, 'after_continuation_start_committed', plan.sourceRunId!, adoptions + 1)
        await host.runtime.recover({ sessionIds: [world.sessionId] })
        for (const runId of await runIdsOf(host.stores, world.sessionId)) {
          if (!fingerprints.has(runId)) fingerprints.set(runId, await fingerprint(host.stores, world, 'jsonl', runId))
        }
      }
      const fourth = await recoverAndPlan(host, world.sessionId)
      expect(fourth.rejectionReasons).toEqual(['operator_decision_required'])
      expect(fourth.openToolOperations).toMatchObject([
        { operationId, adoptions: 3, action: null, reason: 'operator_decision_required' },
      ])
      // Three continuations each listed the operation and wrote nothing after their start row.
      expect(fingerprints.size).toBe(4)
      for (const [runId, before] of fingerprints) {
        expect(await fingerprint(host.stores, world, 'jsonl', runId)).toEqual(before)
        const events = (await valueUnsafe(host.stores.events.read(world.sessionId, runId))).events
        if (runId !== sourceRunId) {
          expect(events[0]?.actions?.settlementPlan).toEqual([
            { operationId, toolCallId: expect.any(String), action: 'reissue' },
          ])
          expect(events.filter((e) => e.actions?.toolDispatch !== undefined)).toEqual([])
        }
      }
      // The keyed effect never ran: attempt 1 was killed before its implementation started.
      expect(await lines(join(world.workspaceDir, KEYED_LOG))).toEqual([])
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS * 2,
  )

  it.each(['jsonl', 'sqlite'] as const)(
    '%s: K9 — killed after the reissue’s dispatch (attempt 2), the next continuation reissues attempt 3 and the key keeps one effect',
    async (store) => {
      const { world, choice, host, sourceRunId, operationId } = await dispatchedSource(store, `k9-${store}`)
      const before = await fingerprint(host.stores, world, store, sourceRunId)
      const first = await recoverAndPlan(host, world.sessionId)
      expect(first.continuation?.settlementPlan?.map((e) => e.action)).toEqual(['reissue'])
      await killContinuationAt(world, choice, 'after_tool_dispatch_committed', sourceRunId, 1)

      const plan = await recoverAndPlan(host, world.sessionId)
      expect(plan.disposition).toBe('continue')
      expect(plan.openToolOperations).toMatchObject([
        { operationId, status: 'dispatched_outcome_unknown', recoveryMode: 'idempotent', attempts: 2, adoptions: 1 },
      ])
      const interruptedRunId = plan.sourceRunId!
      expect(interruptedRunId).not.toBe(sourceRunId)
      const interrupted = await fingerprint(host.stores, world, store, interruptedRunId)
      expect(await host.runtime.execute(plan)).toMatchObject({ _tag: 'Finished', status: 'completed' })

      const history: Array<RuntimeEvent> = []
      for (const runId of [sourceRunId, interruptedRunId, plan.continuation!.runId]) {
        history.push(...(await valueUnsafe(host.stores.events.read(world.sessionId, runId))).events)
      }
      const attempts = history.flatMap((e) =>
        e.actions?.toolDispatch?.operationId === operationId ? [e.actions.toolDispatch.attempt] : [],
      )
      expect(attempts).toEqual([1, 2, 3])
      expect(history.filter(isFunctionResponseEvent).map((e) => e.actions?.toolOutcome?.settlementOrigin)).toEqual([
        'reissue_t2',
      ])
      expect(await lines(join(world.workspaceDir, KEYED_LOG))).toEqual([`maka:${operationId}`])
      expect(await fingerprint(host.stores, world, store, sourceRunId)).toEqual(before)
      expect(await fingerprint(host.stores, world, store, interruptedRunId)).toEqual(interrupted)
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})

describe('a continuation killed after its settlement (K10)', () => {
  it(
    'jsonl: the next plan finds the operation settled in the killed continuation and only continues the model',
    async () => {
      const world = await makeWorld('k10-jsonl')
      const child = spawnAgentChild({
        ...childBase(world),
        mode: 'turn',
        markerPath: world.path('turn.marker'),
        journal: true,
        testTools: true,
        crashPoint: 'after_tool_dispatch_committed',
        turnScript: [{ toolCall: { name: 'keyed_append', args: ARGS_OF.keyed_append } }, { text: 'Done.' }],
      })
      await child.line('at:after_tool_dispatch_committed')
      expect(await child.kill()).toBe('SIGKILL')
      const host = restartedRuntime(world, {
        journal: true,
        testTools: true,
        continuationSteps: [{ text: 'All done.' }],
      })
      await host.runtime.recover({ sessionIds: [world.sessionId] })
      const [sourceRunId] = await runIdsOf(host.stores, world.sessionId)
      const operationId = `${sourceRunId!}-o2`
      const before = await fingerprint(host.stores, world, 'jsonl', sourceRunId!)

      const resumer = spawnAgentChild({
        ...childBase(world),
        mode: 'resume',
        sourceRunId: sourceRunId!,
        markerPath: world.path('resume.marker'),
        journal: true,
        testTools: true,
        crashPoint: 'after_settlement_committed',
        continuationSteps: [{ text: 'All done.' }],
      })
      await resumer.line('at:after_settlement_committed')
      expect(await resumer.kill()).toBe('SIGKILL')
      expect(await exists(world.path('resume.marker'))).toBe(false)

      await host.runtime.recover({ sessionIds: [world.sessionId] })
      const plan = await host.runtime.plan({ sessionId: world.sessionId })
      const { continuation: c1, ...p1 } = plan
      const { continuation: c2, ...p2 } = await host.runtime.plan({ sessionId: world.sessionId })
      expect(p2).toEqual(p1)
      expect(c2?.runtimeContext).toEqual(c1?.runtimeContext)
      expect(plan.disposition).toBe('continue')
      expect(plan.openToolOperations).toBeUndefined()
      expect(c1?.settlementPlan).toBeUndefined()
      const settledIn = plan.sourceRunId!
      const killed = await fingerprint(host.stores, world, 'jsonl', settledIn)
      expect(await host.runtime.execute(plan)).toMatchObject({ _tag: 'Finished', status: 'completed' })

      const history: Array<RuntimeEvent> = []
      for (const runId of [sourceRunId!, settledIn, c1!.runId]) {
        history.push(...(await valueUnsafe(host.stores.events.read(world.sessionId, runId))).events)
      }
      expect(
        history.flatMap((e) =>
          e.actions?.toolDispatch?.operationId === operationId ? [e.actions.toolDispatch.attempt] : [],
        ),
      ).toEqual([1, 2])
      expect(history.filter(isFunctionResponseEvent).map((e) => e.actions?.toolOutcome?.settlementOrigin)).toEqual([
        'reissue_t2',
      ])
      expect(c1?.runtimeContext.filter(isFunctionResponseEvent)).toHaveLength(1)
      expect(await lines(join(world.workspaceDir, KEYED_LOG))).toEqual([`maka:${operationId}`])
      expect(await fingerprint(host.stores, world, 'jsonl', sourceRunId!)).toEqual(before)
      expect(await fingerprint(host.stores, world, 'jsonl', settledIn)).toEqual(killed)
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})

// -------------------------------------------------------------------------------------
// a reconcile effect that lands after its probe ran
// -------------------------------------------------------------------------------------

// Waits (generous ceiling, no timed assertion) until `done` holds.
const until = async (done: () => Promise<boolean>, what: string): Promise<void> => {
  for (let waited = 0; !(await done()); waited += 1) {
    if (waited > 1200) throw new Error(`still waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

// Every delivery handed to a courier has landed: the relay log holds `n` lines and the outbox is empty.
const deliveriesLanded = async (world: World, n: number): Promise<void> =>
  until(async () => {
    const outbox = join(world.workspaceDir, RELAY_OUTBOX)
    const inFlight = (await exists(outbox)) ? await readdir(outbox) : []
    return inFlight.length === 0 && (await lines(join(world.workspaceDir, RELAY_LOG))).length >= n
  }, 'the relay’s deliveries')

describe('a reconcile effect that lands after its probe ran (relay_append)', () => {
  // The turn hands its line to the courier, which holds it; the agent is killed before its response.
  const handedOff = async (store: StoreKind, name: string) => {
    const world = await makeWorld(name)
    const choice = storeChoiceOf(store, world)
    const markerPath = world.path('turn.marker')
    const child = spawnAgentChild({
      ...childBase(world),
      mode: 'turn',
      markerPath,
      journal: true,
      testTools: true,
      hangAfterEffect: true,
      turnScript: [{ toolCall: { name: 'relay_append', args: { line: 'one' } } }, { text: 'Done.' }],
      ...(choice === undefined ? {} : { store: choice }),
    })
    await child.line('at:after_tool_side_effect')
    expect(await child.kill()).toBe('SIGKILL')
    expect(await exists(markerPath)).toBe(false)
    return { world, choice }
  }

  // Recovers, then plans twice (equal plans): the lagging probe answers `not_applied`, so the plan reissues.
  const planReissue = async (host: ReturnType<typeof restartedRuntime>, world: World, store: StoreKind) => {
    if (store === 'postgres') await untilOwnerGone(host.stores, world.sessionId)
    await host.runtime.recover({ sessionIds: [world.sessionId] })
    const [sourceRunId] = await runIdsOf(host.stores, world.sessionId)
    const operationId = `${sourceRunId!}-o2`
    const first = await host.runtime.plan({ sessionId: world.sessionId })
    const { continuation: c1, ...p1 } = first
    const { continuation: c2, ...p2 } = await host.runtime.plan({ sessionId: world.sessionId })
    expect(p2).toEqual(p1)
    expect(c2?.settlementPlan).toEqual(c1?.settlementPlan)
    expect(first.openToolOperations).toMatchObject([
      { operationId, status: 'dispatched_outcome_unknown', recoveryMode: 'reconcile', action: 'reissue' },
    ])
    expect(c1?.safetySnapshot.probeVerdicts).toEqual([{ operationId, verdict: 'not_applied' }])
    // The delivery is still held: nothing has landed yet.
    expect(await lines(join(world.workspaceDir, RELAY_LOG))).toEqual([])
    return { first, sourceRunId: sourceRunId!, operationId }
  }

  // The plan after the late effect settles it from the probe; the history then holds one response.
  const settleApplied = async (
    host: ReturnType<typeof restartedRuntime>,
    world: World,
    operationId: string,
    adoptions: number,
  ) => {
    await host.runtime.recover({ sessionIds: [world.sessionId] })
    const plan = await host.runtime.plan({ sessionId: world.sessionId })
    const { continuation: c1, ...p1 } = plan
    const { continuation: c2, ...p2 } = await host.runtime.plan({ sessionId: world.sessionId })
    expect(p2).toEqual(p1)
    expect(c2?.settlementPlan).toEqual(c1?.settlementPlan)
    expect(plan.openToolOperations).toMatchObject([{ operationId, adoptions, attempts: 1, action: 'settle_applied' }])
    expect(await host.runtime.execute(plan)).toMatchObject({ _tag: 'Finished', status: 'completed' })
    return c1!.runId
  }

  // Every run's rows, oldest first.
  const historyOf = async (host: ReturnType<typeof restartedRuntime>, world: World) => {
    const history: Array<RuntimeEvent> = []
    for (const runId of await runIdsOf(host.stores, world.sessionId)) {
      history.push(...(await valueUnsafe(host.stores.events.read(world.sessionId, runId))).events)
    }
    return history
  }

  const expectOneEffectAndOneResponse = async (
    host: ReturnType<typeof restartedRuntime>,
    world: World,
    operationId: string,
  ) => {
    await deliveriesLanded(world, 1)
    expect(await lines(join(world.workspaceDir, RELAY_LOG))).toEqual(['one'])
    const history = await historyOf(host, world)
    // Never dispatched again: attempt 1 only.
    expect(
      history.flatMap((e) =>
        e.actions?.toolDispatch?.operationId === operationId ? [e.actions.toolDispatch.attempt] : [],
      ),
    ).toEqual([1])
    const responses = history.filter(isFunctionResponseEvent)
    expect(responses.map((e) => [e.refs?.operationId, e.actions?.toolOutcome?.settlementOrigin])).toEqual([
      [operationId, 'reconcile_applied'],
    ])
    expect(responses[0]?.content.result).toEqual({ delivered: true })
    expect(history.filter(isFunctionCallEvent)).toHaveLength(1)
  }

  it.each(['jsonl', 'sqlite', 'postgres'] as const)(
    '%s: landed before execution — its re-probe refuses the stale reissue (reconcile_verdict_changed), the next plan settles it',
    async (store) => {
      const { world, choice } = await handedOff(store, `relay-before-${store}`)
      const host = restartedRuntime(world, {
        journal: true,
        testTools: true,
        continuationSteps: [{ text: 'All done.' }],
        ...(choice === undefined ? {} : { stores: openParentStores(choice)! }),
      })
      const { first, sourceRunId, operationId } = await planReissue(host, world, store)
      const before = await fingerprint(host.stores, world, store, sourceRunId)
      // The courier delivers now, after the plan's probe.
      await writeFile(join(world.workspaceDir, RELAY_RELEASE), '')
      await deliveriesLanded(world, 1)
      expect(await host.runtime.execute(first)).toMatchObject({
        _tag: 'Rejected',
        codes: ['reconcile_verdict_changed'],
      })
      // Refused before its claim: no run was written.
      expect(await runIdsOf(host.stores, world.sessionId)).toEqual([sourceRunId])
      await settleApplied(host, world, operationId, 0)
      await expectOneEffectAndOneResponse(host, world, operationId)
      expect(await fingerprint(host.stores, world, store, sourceRunId)).toEqual(before)
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )

  it.each(['jsonl', 'sqlite'] as const)(
    '%s: landed while the continuation asked permission again — no dispatch on the stale verdict, the next plan settles it',
    async (store) => {
      const { world, choice } = await handedOff(store, `relay-during-${store}`)
      const host = restartedRuntime(world, {
        journal: true,
        testTools: true,
        continuationSteps: [{ text: 'All done.' }],
        permissionMode: 'ask',
        permissionAnswer: 'allow',
        // The courier delivers while the reissue's question is open: after the claim and its re-probe.
        whileAsking: async () => {
          await writeFile(join(world.workspaceDir, RELAY_RELEASE), '')
          await deliveriesLanded(world, 1)
        },
        ...(choice === undefined ? {} : { stores: openParentStores(choice)! }),
      })
      const { first, sourceRunId, operationId } = await planReissue(host, world, store)
      const before = await fingerprint(host.stores, world, store, sourceRunId)
      // The continuation stops before its dispatch, as if killed there: recovery closes it.
      expect(await host.runtime.execute(first)).toMatchObject({
        _tag: 'Failed',
        stage: 'run',
        errorClass: 'reconcile_verdict_changed',
      })
      expect(host.questions).toEqual([`perm-${first.continuation!.settlementPlan![0]!.toolCallId}-r1`])
      const stopped = first.continuation!.runId
      await host.runtime.recover({ sessionIds: [world.sessionId] })
      const stoppedRows = (await valueUnsafe(host.stores.events.read(world.sessionId, stopped))).events
      expect(stoppedRows.filter((e) => e.actions?.toolDispatch !== undefined || isFunctionResponseEvent(e))).toEqual([])
      const closed = await fingerprint(host.stores, world, store, stopped)
      await settleApplied(host, world, operationId, 1)
      await expectOneEffectAndOneResponse(host, world, operationId)
      expect(await fingerprint(host.stores, world, store, sourceRunId)).toEqual(before)
      expect(await fingerprint(host.stores, world, store, stopped)).toEqual(closed)
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})

// -------------------------------------------------------------------------------------
// a foreground shell call (reattach) at each kill point
// -------------------------------------------------------------------------------------

// K4: the command makes its effect, then kills its own agent and ends. K5: it kills its agent first,
// then makes its effect once the test releases it, so it is still running when the host restarts.
type ShellPoint =
  | 'after_function_call'
  | 'after_permission_request_committed'
  | 'after_tool_dispatch_committed'
  | 'command_ended'
  | 'command_running'
  | 'after_tool_response'

interface ShellCase {
  readonly store: StoreKind
  readonly point: ShellPoint
  readonly answer?: 'allow' | 'deny'
}

const RECORD = 'echo ran >> runs.txt; echo finished'
const COMMAND_OF: Readonly<Record<ShellPoint, string>> = {
  after_function_call: RECORD,
  after_permission_request_committed: RECORD,
  after_tool_dispatch_committed: RECORD,
  command_ended: `${RECORD}; kill -9 $MAKA_AGENT_PID`,
  command_running: `kill -9 $MAKA_AGENT_PID; while [ ! -f release ]; do sleep 0.05; done; ${RECORD}`,
  after_tool_response: RECORD,
}

// What the plan decides once the command's fate is known (K1, K2 and K6 from FAILPOINTS_T1's rows P1 and
// P5, where every mode agrees; K3–K5 from the observation of the supervised command), the response's
// origin, and how many times the command ran in the end.
const SHELL_EXPECTED: Readonly<
  Record<
    ShellPoint,
    {
      readonly plan: FailpointPlanT1 | { readonly disposition: 'continue'; readonly action: 'settle_reattached' }
      readonly origin: string | null
      readonly runs: 0 | 1
    }
  >
> = {
  after_function_call: {
    plan: failpointOf('after_function_call').decision.plan.never_auto_retry,
    origin: 'reissue_t2',
    runs: 1,
  },
  after_permission_request_committed: {
    plan: failpointOf('after_permission_request_committed').decision.plan.never_auto_retry,
    origin: 'reissue_t2',
    runs: 1,
  },
  // No shell-run record: the supervisor never started the command (observation `lost`).
  after_tool_dispatch_committed: {
    plan: { disposition: 'park', reason: 'tool_outcome_unknown' },
    origin: null,
    runs: 0,
  },
  command_ended: { plan: { disposition: 'continue', action: 'settle_reattached' }, origin: 'reattached', runs: 1 },
  command_running: { plan: { disposition: 'continue', action: 'settle_reattached' }, origin: 'reattached', runs: 1 },
  after_tool_response: {
    plan: failpointOf('after_tool_response').decision.plan.never_auto_retry,
    origin: 'normal_t2',
    runs: 1,
  },
}

const SHELL_POINTS: ReadonlyArray<ShellPoint> = [
  'after_function_call',
  'after_tool_dispatch_committed',
  'command_ended',
  'command_running',
  'after_tool_response',
]
const SHELL_CASES: ReadonlyArray<ShellCase> = (['jsonl', 'sqlite', 'postgres'] as const).flatMap((store) => [
  ...SHELL_POINTS.map((point) => ({ store, point })),
  // K2: answered allow on every store, deny on the two local ones.
  ...(store === 'postgres' ? (['allow'] as const) : (['allow', 'deny'] as const)).map((answer) => ({
    store,
    point: 'after_permission_request_committed' as const,
    answer,
  })),
])

const shellNameOf = (c: ShellCase) =>
  `${c.store}: killed at ${c.point}${c.answer === undefined ? '' : ` (answered ${c.answer})`}`

describe('a foreground shell call killed at each point (reattach), on every store', () => {
  it.each(SHELL_CASES.map((c) => [shellNameOf(c), c] as const))(
    '%s — the command never runs twice',
    async (_name, c) => {
      const world = await makeWorld(`m-${c.store}-shell-${c.point}-${c.answer ?? ''}`)
      const choice = storeChoiceOf(c.store, world)
      const markerPath = world.path('turn.marker')
      const byCommand = c.point === 'command_ended' || c.point === 'command_running'
      const child = spawnAgentChild({
        ...childBase(world),
        mode: 'turn',
        markerPath,
        journal: true,
        turnScript: [{ toolCall: { name: 'shell', args: { command: COMMAND_OF[c.point] } } }, { text: 'Done.' }],
        ...(byCommand ? {} : { crashPoint: c.point as CrashPoint }),
        ...(choice === undefined ? {} : { store: choice }),
        ...(c.answer === undefined ? {} : { permissionMode: 'ask' as const }),
      })
      if (byCommand) {
        // The command itself killed its agent.
        expect((await child.exited).signal).toBe('SIGKILL')
      } else {
        await child.line(`at:${c.point}`)
        expect(await child.kill()).toBe('SIGKILL')
      }
      expect(await exists(markerPath)).toBe(false)

      const host = restartedRuntime(world, {
        journal: true,
        continuationSteps: [{ text: 'All done.' }],
        ...(choice === undefined ? {} : { stores: openParentStores(choice)! }),
        ...(c.answer === undefined ? {} : { permissionMode: 'ask' as const, permissionAnswer: c.answer }),
      })
      if (c.store === 'postgres') await untilOwnerGone(host.stores, world.sessionId)
      await host.runtime.recover({ sessionIds: [world.sessionId] })
      const runIds = await runIdsOf(host.stores, world.sessionId)
      expect(runIds).toHaveLength(1)
      const sourceRunId = runIds[0]!
      const operationId = `${sourceRunId}-o2`
      const before = await fingerprint(host.stores, world, c.store, sourceRunId)
      const runs = join(world.workspaceDir, 'runs.txt')

      let first = await host.runtime.plan({ sessionId: world.sessionId })
      if (c.point === 'command_running') {
        // It waits for the release: the plan parks, writes nothing, and the command has not made its effect.
        expect(first.rejectionReasons).toEqual(['tool_still_running'])
        expect(first.openToolOperations).toMatchObject([{ operationId, recoveryMode: 'reattach', action: null }])
        expect(await lines(runs)).toEqual([])
        await writeFile(join(world.workspaceDir, 'release'), '')
      }
      if (byCommand) {
        // Plans again (generous ceiling) until the command has ended and its exit file is there.
        await until(async () => {
          first = await host.runtime.plan({ sessionId: world.sessionId })
          return !first.rejectionReasons.includes('tool_still_running')
        }, 'the command’s end')
      }
      const { continuation: c1, ...p1 } = first
      const { continuation: c2, ...p2 } = await host.runtime.plan({ sessionId: world.sessionId })
      expect(p2).toEqual(p1)
      expect(c2?.settlementPlan).toEqual(c1?.settlementPlan)
      expect(c2?.runtimeContext).toEqual(c1?.runtimeContext)

      const expected = SHELL_EXPECTED[c.point]
      expect(first.disposition).toBe(expected.plan.disposition)
      if (expected.plan.disposition === 'park') {
        expect(first.rejectionReasons).toEqual([expected.plan.reason])
        expect(first.openToolOperations).toMatchObject([
          { operationId, status: 'dispatched_outcome_unknown', recoveryMode: 'reattach', reason: expected.plan.reason },
        ])
      } else {
        expect(c1?.settlementPlan?.map((e) => [e.operationId, e.action])).toEqual(
          expected.plan.action === null ? undefined : [[operationId, expected.plan.action]],
        )
      }
      if (c.point === 'after_permission_request_committed') {
        expect(first.diagnostics.map((d) => d.code)).toContain('permission_reasked')
      }

      let continuationRunId: string | null = null
      if (first.disposition === 'continue') {
        const executed = await host.runtime.execute(first)
        expect(executed, JSON.stringify(executed)).toMatchObject({ _tag: 'Finished', status: 'completed' })
        continuationRunId = c1!.runId
        if (c.answer !== undefined) expect(host.questions).toEqual([`perm-${c1!.settlementPlan![0]!.toolCallId}-r1`])
      }
      const source = (await valueUnsafe(host.stores.events.read(world.sessionId, sourceRunId))).events
      const continuation =
        continuationRunId === null
          ? []
          : (await valueUnsafe(host.stores.events.read(world.sessionId, continuationRunId))).events
      const history = [...source, ...continuation]
      expect(continuation.filter(isFunctionCallEvent)).toEqual([])
      const attempts = history.flatMap((e) =>
        e.actions?.toolDispatch?.operationId === operationId ? [e.actions.toolDispatch.attempt] : [],
      )
      expect(attempts).toEqual(attempts.map((_, index) => index + 1))
      // Exactly one response per call once the plan continued, none while it parks.
      const responses = history.filter(isFunctionResponseEvent)
      const refused = c.answer === 'deny'
      expect(responses.map((e) => [e.refs?.operationId, e.actions?.toolOutcome?.settlementOrigin])).toEqual(
        expected.origin === null ? [] : [[operationId, refused ? 'pre_t1_synthetic' : expected.origin]],
      )
      if (refused) {
        expect(responses[0]?.content.isError).toBe(true)
      } else if (expected.origin !== null) {
        expect(responses[0]?.content.result).toMatchObject({ exitCode: 0, stdout: 'finished\n' })
      }
      // The command ran at most once: once when it answered or was settled, never when it parked or was refused.
      expect(await lines(runs)).toEqual(refused || expected.runs === 0 ? [] : ['ran'])
      expect(await fingerprint(host.stores, world, c.store, sourceRunId)).toEqual(before)
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})
