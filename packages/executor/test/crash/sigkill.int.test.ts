/**
 * Real child processes killed with SIGKILL at the executor's crash points (docs/contract.md §3: "Durable
 * claim", "Startup recovery"; seed: "actual child-process SIGKILL at run-created, continuation-start
 * committed, terminal-event committed, and terminal-header committed boundaries"). Each child runs the
 * BUILT runtime under plain node and hangs at its crash point until killed; the parent then reopens the
 * data dir with new instances, as a restarted host would.
 */
import { join } from 'node:path'
import { type RuntimeEvent, isContinuationStartEvent, isTerminalEvent } from '@maka/events'
import { afterAll, describe, it } from 'vitest'
import type { ContinuationResult, CrashPoint } from '../../src/index.js'
import {
  type World,
  childBase,
  exists,
  interruptTurnAt,
  CHILD_PROCESS_TEST_TIMEOUT_MS,
  killAllChildren,
  listRunIds,
  makeWorld,
  removeWorlds,
  restartedRuntime,
  runDigests,
  snapshotTree,
  spawnAgentChild,
  valueUnsafe,
} from './fixtures/agentChild.js'

afterAll(async () => {
  killAllChildren()
  await removeWorlds()
})

// user text, list_dir call, list_dir response, recovered failed terminal
const SOURCE_HIGH_WATER = 4

interface Expected {
  readonly point: CrashPoint
  readonly status: 'failed' | 'completed'
  readonly startCommitted: boolean
  readonly providerCalled: boolean
  /** What the restarted host's first recovery pass does to the target run. */
  readonly recovery: 'recovered_terminal' | 'header_repaired' | null
}

const CASES: ReadonlyArray<Expected> = [
  {
    point: 'after_run_created',
    status: 'failed',
    startCommitted: false,
    providerCalled: false,
    recovery: 'recovered_terminal',
  },
  {
    point: 'after_continuation_start_committed',
    status: 'failed',
    startCommitted: true,
    providerCalled: false,
    recovery: 'recovered_terminal',
  },
  {
    point: 'after_terminal_event_committed',
    status: 'completed',
    startCommitted: true,
    providerCalled: true,
    recovery: 'header_repaired',
  },
  {
    point: 'after_terminal_header_committed',
    status: 'completed',
    startCommitted: true,
    providerCalled: true,
    recovery: null,
  },
]

/** Interrupts a turn after its tool response, then SIGKILLs a `resume` child at `point`. */
const killContinuationAt = async (world: World, point: CrashPoint) => {
  const sourceRunId = await interruptTurnAt(world, 'after_tool_response')
  const markerPath = world.path('resume.marker')
  const providerMarkerPath = world.path('provider.marker')
  const child = spawnAgentChild({
    ...childBase(world),
    mode: 'resume',
    crashPoint: point,
    sourceRunId,
    markerPath,
    providerMarkerPath,
  })
  const recovered = JSON.parse(await child.line('recovered:')) as {
    readonly recovery: { readonly actions: ReadonlyArray<{ readonly runId?: string; readonly action: string }> }
    readonly source: { readonly header: string | null; readonly ledger: string | null }
  }
  await child.line(`at:${point}`)
  // While the child still lives it owns the session: another host must neither repair nor plan it.
  const beforeAlive = await snapshotTree(world.dataDir)
  const { runtime } = restartedRuntime(world)
  const recoveryWhileAlive = await runtime.recover()
  const planWhileAlive = await runtime.plan({ sessionId: world.sessionId, runId: sourceRunId })
  const untouchedWhileAlive = JSON.stringify(await snapshotTree(world.dataDir)) === JSON.stringify(beforeAlive)
  const signal = await child.kill()
  const targetRunIds = (await listRunIds(world)).filter((id) => id !== sourceRunId)
  return {
    sourceRunId,
    targetRunIds,
    signal,
    recovered,
    recoveryWhileAlive,
    planWhileAlive,
    untouchedWhileAlive,
    finallyRan: await exists(markerPath),
    providerCalled: await exists(providerMarkerPath),
  }
}

const readRun = async (world: World, runId: string) => {
  const { stores } = restartedRuntime(world)
  const header = await valueUnsafe(stores.runs.read(world.sessionId, runId))
  const ledger = await valueUnsafe(stores.events.read(world.sessionId, runId))
  return { header, ledger }
}

const kinds = (events: ReadonlyArray<RuntimeEvent>) =>
  events.map((e) => (isContinuationStartEvent(e) ? 'start' : isTerminalEvent(e) ? `terminal:${e.status}` : e.role))

describe('makeFileRuntime under SIGKILL', { timeout: CHILD_PROCESS_TEST_TIMEOUT_MS }, () => {
  describe.concurrent('when a continuation child is killed at a crash point and the host restarts', () => {
    it.for(CASES.map((c): [CrashPoint, Expected] => [c.point, c]))(
      '%s: recovery closes the target once, idempotently, and the boundary stays taken',
      async ([point, expected], { expect }) => {
        const world = await makeWorld(`crash-${CASES.findIndex((c) => c.point === point)}`)
        const killed = await killContinuationAt(world, point)
        expect(killed.signal).toBe('SIGKILL')
        expect(killed.finallyRan).toBe(false)
        expect(killed.providerCalled).toBe(expected.providerCalled)
        expect(killed.recoveryWhileAlive.actions).toEqual([expect.objectContaining({ action: 'session_skipped' })])
        expect(killed.planWhileAlive.rejectionReasons).toEqual(['session_owner_alive'])
        expect(killed.untouchedWhileAlive).toBe(true)
        // The resume child's recovery closed the interrupted source before it planned.
        expect(killed.recovered.recovery.actions).toEqual([
          expect.objectContaining({ runId: killed.sourceRunId, action: 'recovered_terminal' }),
        ])
        expect(killed.targetRunIds).toHaveLength(1)
        const { sourceRunId } = killed
        const targetRunId = killed.targetRunIds[0] as string
        // Nothing the continuation did touched the source after that first recovery.
        expect(await runDigests(world, sourceRunId)).toEqual(killed.recovered.source)
        const targetBeforeRecovery = await runDigests(world, targetRunId)

        const { runtime, providerRequests } = restartedRuntime(world)
        const first = await runtime.recover()
        expect(first.actions.filter((a) => a.runId === targetRunId).map((a) => a.action)).toEqual(
          expected.recovery === null ? [] : [expected.recovery],
        )
        expect(first.actions.filter((a) => a.runId !== targetRunId)).toEqual([])
        const afterFirst = await snapshotTree(world.dataDir)
        const second = await runtime.recover()
        expect(second.actions).toEqual([])
        expect(await snapshotTree(world.dataDir)).toEqual(afterFirst)
        if (expected.recovery === null) expect(await runDigests(world, targetRunId)).toEqual(targetBeforeRecovery)

        const plan = await runtime.plan({ sessionId: world.sessionId, runId: sourceRunId })
        expect(plan.disposition).toBe('park')
        expect(plan.rejectionReasons).toEqual(['continuation_already_exists'])
        expect(plan.diagnostics[0]?.detail).toMatchObject({ existingRunId: targetRunId })
        expect(providerRequests).toEqual([])

        const { header, ledger } = await readRun(world, targetRunId)
        expect(ledger.problem).toBeNull()
        expect(ledger.tornTail).toBeNull()
        expect(ledger.events.filter(isTerminalEvent)).toHaveLength(1)
        expect(isTerminalEvent(ledger.events.at(-1) as RuntimeEvent)).toBe(true)
        expect(header.status).toBe(expected.status)
        expect(header.failureClass).toBe(expected.status === 'failed' ? 'app_restarted' : undefined)
        expect(header.continuationSource).toMatchObject({ sourceRunId, sourceRuntimeEventHighWater: SOURCE_HIGH_WATER })
        expect(kinds(ledger.events)).toEqual(
          expected.status === 'failed'
            ? [...(expected.startCommitted ? ['start'] : []), 'terminal:failed']
            : ['start', 'model', 'terminal:completed'],
        )
        const terminal = ledger.events.at(-1)
        if (expected.status === 'failed') {
          expect(terminal?.actions?.stateDelta).toMatchObject({ recovered: true, failureClass: 'app_restarted' })
        }

        const claimPath = join(
          world.dataDir,
          'sessions',
          world.sessionId,
          'claims',
          `${sourceRunId}@${SOURCE_HIGH_WATER}.json`,
        )
        expect(await exists(claimPath)).toBe(true)
        const claims = await restartedRuntime(world).stores.claims.list(world.sessionId)()
        expect(claims).toEqual(expect.objectContaining({ _tag: 'Right' }))
        if (claims._tag === 'Right') expect(claims.right.map((c) => c.targetRunId)).toEqual([targetRunId])

        expect(await runDigests(world, sourceRunId)).toEqual(killed.recovered.source)
      },
    )
  })

  describe.concurrent('when a continuation child is killed right after its continuation-start row', () => {
    it('has not called the provider, and its ledger holds only the durable start row', async ({ expect }) => {
      const world = await makeWorld('crash-start-only')
      const killed = await killContinuationAt(world, 'after_continuation_start_committed')
      expect(killed.signal).toBe('SIGKILL')
      expect(killed.finallyRan).toBe(false)
      expect(killed.providerCalled).toBe(false)
      expect(killed.targetRunIds).toHaveLength(1)

      const { header, ledger } = await readRun(world, killed.targetRunIds[0] as string)
      expect(header.status).toBe('created')
      expect(ledger.highWater).toBe(1)
      expect(ledger.events).toHaveLength(1)
      const start = ledger.events[0] as RuntimeEvent
      expect(isContinuationStartEvent(start)).toBe(true)
      expect(start.refs).toEqual({
        sourceInvocationId: header.continuationSource?.sourceInvocationId,
        sourceRunId: killed.sourceRunId,
        sourceTurnId: header.continuationSource?.sourceTurnId,
        sourceRuntimeEventHighWater: SOURCE_HIGH_WATER,
      })
    })
  })

  describe.concurrent('when a continuation is itself killed after its own tool response', () => {
    it('recovery closes it, and the next host continues from it without running either tool call again', async ({
      expect,
    }) => {
      const world = await makeWorld('crash-chain')
      const sourceRunId = await interruptTurnAt(world, 'after_tool_response')
      const second = spawnAgentChild({
        ...childBase(world),
        mode: 'resume',
        crashPoint: 'after_tool_response',
        sourceRunId,
        continuationSteps: [{ toolCall: { name: 'read_file', args: { path: 'notes.txt' } } }],
        markerPath: world.path('second.marker'),
      })
      const sourceRecovered = JSON.parse(await second.line('recovered:')) as { readonly source: unknown }
      await second.line('at:after_tool_response')
      expect(await second.kill()).toBe('SIGKILL')
      expect(await exists(world.path('second.marker'))).toBe(false)
      const [firstContinuation, ...others] = (await listRunIds(world)).filter((id) => id !== sourceRunId)
      expect(others).toEqual([])
      if (firstContinuation === undefined) throw new Error('no continuation run')

      const third = spawnAgentChild({
        ...childBase(world),
        mode: 'resume',
        sourceRunId: firstContinuation,
        markerPath: world.path('third.marker'),
      })
      expect((await third.exited).code, third.stderr()).toBe(0)
      // A child that ends normally does run its finally: the marker check above is not vacuous.
      expect(await exists(world.path('third.marker'))).toBe(true)
      const recovered = JSON.parse(await third.line('recovered:')) as {
        readonly recovery: { readonly actions: ReadonlyArray<unknown> }
        readonly source: unknown
      }
      expect(recovered.recovery.actions).toEqual([
        expect.objectContaining({ runId: firstContinuation, action: 'recovered_terminal' }),
      ])
      const { result } = JSON.parse(await third.line('result:')) as { readonly result: ContinuationResult }
      expect(result).toMatchObject({ _tag: 'Finished', sourceRunId: firstContinuation, status: 'completed' })
      if (result._tag !== 'Finished') throw new Error('the second continuation did not finish')

      const first = await readRun(world, firstContinuation)
      expect(kinds(first.ledger.events)).toEqual(['start', 'model', 'tool', 'terminal:failed'])
      expect(first.header.failureClass).toBe('app_restarted')
      const last = await readRun(world, result.targetRunId)
      expect(last.header.continuationSource).toMatchObject({
        sourceRunId: firstContinuation,
        sourceRuntimeEventHighWater: 4,
      })
      // The model was shown the read_file result and answered; no tool ran in the new run.
      expect(kinds(last.ledger.events)).toEqual(['start', 'model', 'terminal:completed'])
      expect(last.ledger.events[1]?.content).toEqual({ kind: 'text', text: 'Continuing after read_file: done.' })

      expect(await runDigests(world, sourceRunId)).toEqual(sourceRecovered.source)
      expect(await runDigests(world, firstContinuation)).toEqual(recovered.source)
      const { runtime } = restartedRuntime(world)
      expect((await runtime.recover()).actions).toEqual([])
    })
  })

  describe.concurrent('when a normal turn is killed after its function call committed but not its response', () => {
    it('recovery fails the run as app_restarted and planning parks on dangling_tool_state, never replaying the call', async ({
      expect,
    }) => {
      const world = await makeWorld('crash-dangling')
      const sourceRunId = await interruptTurnAt(world, 'after_function_call')
      const before = await readRun(world, sourceRunId)
      expect(kinds(before.ledger.events)).toEqual(['user', 'model'])
      expect(before.header.status).toBe('running')

      const { runtime, providerRequests } = restartedRuntime(world)
      const report = await runtime.recover()
      expect(report.actions).toEqual([
        expect.objectContaining({
          runId: sourceRunId,
          action: 'recovered_terminal',
          detail: 'closed as failed (app_restarted)',
        }),
      ])
      const after = await readRun(world, sourceRunId)
      expect(after.header.status).toBe('failed')
      expect(after.header.failureClass).toBe('app_restarted')
      expect(kinds(after.ledger.events)).toEqual(['user', 'model', 'terminal:failed'])
      expect(after.ledger.events.some((e) => e.content?.kind === 'function_response')).toBe(false)
      const recovered = await snapshotTree(world.dataDir)

      const plan = await runtime.plan({ sessionId: world.sessionId, runId: sourceRunId })
      expect(plan.disposition).toBe('park')
      expect(plan.rejectionReasons).toEqual(['dangling_tool_state'])
      expect(plan.continuation).toBeUndefined()
      const resumed = await runtime.resume({ sessionId: world.sessionId })
      expect(resumed._tag).toBe('Parked')
      if (resumed._tag === 'Parked') expect(resumed.plan.rejectionReasons).toEqual(['dangling_tool_state'])

      expect(providerRequests).toEqual([])
      expect(await listRunIds(world)).toEqual([sourceRunId])
      expect(await snapshotTree(world.dataDir)).toEqual(recovered)
    })
  })
})
