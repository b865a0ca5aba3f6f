/**
 * The tool journal under real SIGKILLs (Phase 2): a child process runs a protocol turn over the
 * BUILT runtime and is killed at a journal boundary — the call committed (K1), the dispatch committed
 * (K3), the effect done but its response not (K4), the response committed (K6). A restarted host then
 * recovers, plans twice (deep-equal plans), and its decision matches the spec's table; resuming
 * settles the call before the model's first step, with the effect at most once and exactly one
 * response per call in the history, and the source ledger's bytes unchanged.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { type RuntimeEvent, isFunctionResponseEvent } from '@maka/events'
import { afterAll, describe, expect, it } from 'vitest'
import type { CrashPoint } from '../../src/index.js'
import {
  CHILD_PROCESS_TEST_TIMEOUT_MS,
  childBase,
  exists,
  interruptTurnAt,
  killAllChildren,
  listRunIds,
  makeWorld,
  removeWorlds,
  restartedRuntime,
  runDigests,
  spawnAgentChild,
  valueUnsafe,
} from './fixtures/agentChild.js'

afterAll(async () => {
  killAllChildren()
  await removeWorlds()
})

type KillPoint = CrashPoint | 'after_tool_side_effect'

interface Case {
  readonly tool: 'read_file' | 'write_file'
  readonly point: KillPoint
  /** The plan's action for the call, or the park reason. */
  readonly decision: 'reissue' | 'settle_applied' | 'none'
  /** How many times the effect happened when everything is done (write_file: the file's content). */
  readonly content: string | null
}

const CASES: ReadonlyArray<Case> = [
  { tool: 'read_file', point: 'after_function_call', decision: 'reissue', content: null },
  { tool: 'read_file', point: 'after_tool_dispatch_committed', decision: 'reissue', content: null },
  { tool: 'read_file', point: 'after_tool_side_effect', decision: 'reissue', content: null },
  { tool: 'read_file', point: 'after_tool_response', decision: 'none', content: null },
  { tool: 'write_file', point: 'after_function_call', decision: 'reissue', content: 'new' },
  { tool: 'write_file', point: 'after_tool_dispatch_committed', decision: 'reissue', content: 'new' },
  { tool: 'write_file', point: 'after_tool_side_effect', decision: 'settle_applied', content: 'new' },
  { tool: 'write_file', point: 'after_tool_response', decision: 'none', content: 'new' },
]

const scriptOf = (tool: Case['tool']) => [
  {
    toolCall:
      tool === 'read_file'
        ? { name: 'read_file', args: { path: 'notes.txt' } }
        : { name: 'write_file', args: { path: 'notes.txt', content: 'new' } },
  },
  { text: 'Done.' },
]

const responsesPerCall = (events: ReadonlyArray<RuntimeEvent>) => {
  const counts = new Map<string, number>()
  for (const e of events) if (isFunctionResponseEvent(e)) counts.set(e.content.id, (counts.get(e.content.id) ?? 0) + 1)
  return counts
}

describe('the tool journal under SIGKILL', () => {
  it.each(CASES)(
    '$tool killed at $point → $decision',
    async ({ tool, point, decision, content }) => {
      const world = await makeWorld(`journal-${tool}-${point}`.replace(/_/g, '-'))
      await writeFile(`${world.workspaceDir}/notes.txt`, 'old')
      const sourceRunId = await interruptTurnAt(world, point, { journal: true, turnScript: scriptOf(tool) })
      const host = restartedRuntime(world, { journal: true, continuationSteps: [{ text: 'All done.' }] })
      await host.runtime.recover({ sessionIds: [world.sessionId] })
      const before = await runDigests(world, sourceRunId)
      const first = await host.runtime.plan({ sessionId: world.sessionId })
      const second = await host.runtime.plan({ sessionId: world.sessionId })
      const { continuation: c1, ...p1 } = first
      const { continuation: c2, ...p2 } = second
      expect(p1).toEqual(p2)
      expect(c1?.settlementPlan).toEqual(c2?.settlementPlan)
      if (decision === 'none') {
        // The response is committed: Phase 1's boundary, nothing to settle (the model's turn is next).
        expect(first.openToolOperations).toBeUndefined()
      } else {
        expect(first.disposition).toBe('continue')
        expect(c1?.settlementPlan?.map((entry) => entry.action)).toEqual([decision])
        const result = await host.runtime.execute(first)
        expect(result).toMatchObject({ _tag: 'Finished', status: 'completed' })
        const target = c1!.runId
        const ledger = await valueUnsafe(host.stores.events.read(world.sessionId, target))
        // Exactly one response per call across the source's replay and the continuation.
        const counts = responsesPerCall([...(c1?.runtimeContext ?? []), ...ledger.events])
        expect([...counts.values()].every((n) => n === 1)).toBe(true)
        expect(counts.size).toBe(1)
      }
      expect(await runDigests(world, sourceRunId)).toEqual(before)
      const file = await readFile(`${world.workspaceDir}/notes.txt`, 'utf8')
      expect(file).toBe(content ?? 'old')
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})

describe('a foreground command that outlives its agent (reattach)', () => {
  it(
    'parks tool_still_running while it runs, then settles its output once it ended — never running it twice',
    async () => {
      const world = await makeWorld('journal-reattach')
      const release = `${world.workspaceDir}/release`
      // The command kills its own agent, waits for the test to release it, then records one run.
      const command = `kill -9 $MAKA_AGENT_PID; while [ ! -f release ]; do sleep 0.05; done; echo ran >> runs.txt; echo finished`
      const child = spawnAgentChild({
        ...childBase(world),
        mode: 'turn',
        markerPath: world.path('turn.marker'),
        journal: true,
        turnScript: [{ toolCall: { name: 'shell', args: { command } } }, { text: 'Done.' }],
      })
      expect((await child.exited).signal).toBe('SIGKILL')
      expect(await exists(world.path('turn.marker'))).toBe(false)
      const host = restartedRuntime(world, { journal: true, continuationSteps: [{ text: 'All done.' }] })
      await host.runtime.recover({ sessionIds: [world.sessionId] })
      const running = await host.runtime.plan({ sessionId: world.sessionId })
      expect(running.rejectionReasons).toEqual(['tool_still_running'])
      await writeFile(release, '')
      // Wait (generous ceiling) until the command has ended and the plan settles it.
      let settled = running
      for (let i = 0; i < 600 && settled.disposition !== 'continue'; i += 1) {
        await new Promise((done) => setTimeout(done, 50))
        settled = await host.runtime.plan({ sessionId: world.sessionId })
      }
      expect(settled.continuation?.settlementPlan?.map((e) => e.action)).toEqual(['settle_reattached'])
      expect(await host.runtime.execute(settled)).toMatchObject({ _tag: 'Finished', status: 'completed' })
      const ledger = await valueUnsafe(host.stores.events.read(world.sessionId, settled.continuation!.runId))
      const response = ledger.events.find(isFunctionResponseEvent)
      expect(response?.content.result).toMatchObject({ exitCode: 0, stdout: 'finished\n' })
      expect(response?.actions?.toolOutcome?.settlementOrigin).toBe('reattached')
      expect(await readFile(`${world.workspaceDir}/runs.txt`, 'utf8')).toBe('ran\n')
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})

describe('resume waits for a command still running', () => {
  const killedWhileRunning = async (name: string) => {
    const world = await makeWorld(name)
    const command = `kill -9 $MAKA_AGENT_PID; while [ ! -f release ]; do sleep 0.05; done; echo finished`
    const child = spawnAgentChild({
      ...childBase(world),
      mode: 'turn',
      markerPath: world.path('turn.marker'),
      journal: true,
      turnScript: [{ toolCall: { name: 'shell', args: { command } } }, { text: 'Done.' }],
    })
    expect((await child.exited).signal).toBe('SIGKILL')
    const host = restartedRuntime(world, { journal: true, continuationSteps: [{ text: 'All done.' }] })
    await host.runtime.recover({ sessionIds: [world.sessionId] })
    return { world, host }
  }

  it(
    'reports the command while it runs, writes nothing meanwhile, then continues from its end',
    async () => {
      const { world, host } = await killedWhileRunning('journal-wait')
      const seen: Array<string> = []
      const result = await host.runtime.resume(
        { sessionId: world.sessionId, wait: { pollMs: 20 } },
        {
          onWaiting: async (operations) => {
            seen.push(...operations.map((op) => op.toolName))
            // Nothing was written while waiting: still one run in the session.
            expect(await listRunIds(world)).toHaveLength(1)
            await writeFile(`${world.workspaceDir}/release`, '')
          },
        },
      )
      expect(seen[0]).toBe('shell')
      expect(result).toMatchObject({ _tag: 'Finished', status: 'completed' })
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )

  it(
    'parks with tool_still_running when the wait is stopped, and at once without a wait',
    async () => {
      const { world, host } = await killedWhileRunning('journal-nowait')
      const parked = await host.runtime.resume({ sessionId: world.sessionId })
      expect(parked).toMatchObject({ _tag: 'Parked', plan: { rejectionReasons: ['tool_still_running'] } })
      const stop = new AbortController()
      const stopped = await host.runtime.resume(
        { sessionId: world.sessionId, wait: { signal: stop.signal, pollMs: 20 } },
        { onWaiting: () => stop.abort() },
      )
      expect(stopped).toMatchObject({ _tag: 'Parked', plan: { rejectionReasons: ['tool_still_running'] } })
      expect(await listRunIds(world)).toHaveLength(1)
      await writeFile(`${world.workspaceDir}/release`, '')
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})

describe('a background shell call (never_auto_retry)', () => {
  const background = { name: 'shell', args: { command: 'echo ran >> bg.txt', background: true } }

  it(
    'parks tool_outcome_unknown once dispatched: nothing can tell whether it ran',
    async () => {
      const world = await makeWorld('journal-bg-dispatched')
      await interruptTurnAt(world, 'after_tool_dispatch_committed', {
        journal: true,
        turnScript: [{ toolCall: background }, { text: 'Done.' }],
      })
      const host = restartedRuntime(world, { journal: true })
      await host.runtime.recover({ sessionIds: [world.sessionId] })
      const plan = await host.runtime.plan({ sessionId: world.sessionId })
      expect(plan.rejectionReasons).toEqual(['tool_outcome_unknown'])
      expect(plan.openToolOperations).toMatchObject([
        { toolName: 'shell', status: 'dispatched_outcome_unknown', recoveryMode: 'never_auto_retry' },
      ])
      expect(await exists(`${world.workspaceDir}/bg.txt`)).toBe(false)
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )

  it(
    'runs it once when the crash came before its dispatch',
    async () => {
      const world = await makeWorld('journal-bg-called')
      await interruptTurnAt(world, 'after_function_call', {
        journal: true,
        turnScript: [{ toolCall: background }, { text: 'Done.' }],
      })
      const host = restartedRuntime(world, { journal: true, continuationSteps: [{ text: 'All done.' }] })
      await host.runtime.recover({ sessionIds: [world.sessionId] })
      const plan = await host.runtime.plan({ sessionId: world.sessionId })
      expect(plan.continuation?.settlementPlan?.map((e) => e.action)).toEqual(['reissue'])
      expect(await host.runtime.execute(plan)).toMatchObject({ _tag: 'Finished', status: 'completed' })
      // The command runs in the background: wait (generous ceiling) for its one line.
      const path = `${world.workspaceDir}/bg.txt`
      for (let i = 0; i < 600 && !(await exists(path)); i += 1) await new Promise((done) => setTimeout(done, 50))
      expect(await readFile(path, 'utf8')).toBe('ran\n')
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})
