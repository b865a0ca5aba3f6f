/**
 * Resuming a crash inside a tool (Phase 2), end to end in one process: a protocol turn "crashes" at
 * a journal crash point (`onCrashPoint` throws, as a kill would stop it there), startup recovery
 * closes the run, the planner decides per open operation, and the continuation settles it before
 * its first model call — never running an effect twice, and giving the model exactly one response
 * per call.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { RuntimeEvent } from '@maka/events'
import type { CrashPoint } from '../src/index.js'
import { SimulatedCrash, type World, trackWorlds } from './support/world.js'

const world = trackWorlds()

// A turn that calls `toolCall`, stopped at the first `point`, then recovered.
const crashedAt = async (
  w: World,
  point: CrashPoint,
  toolCall: { readonly name: string; readonly args: Record<string, unknown> },
) => {
  w.script([{ toolCall }])
  const crashing = w.runtimeWith({
    onCrashPoint: (at) => {
      if (at === point) throw new SimulatedCrash(at)
    },
  })
  const turn = await crashing.runTurn({ cwd: w.workspace, prompt: 'go' })
  if (turn._tag !== 'Interrupted') throw new Error(`expected an interrupted turn, got ${JSON.stringify(turn)}`)
  await w.runtime.recover({ sessionIds: [turn.sessionId] })
  return { sessionId: turn.sessionId, runId: turn.runId }
}

const journalOf = (ledger: ReadonlyArray<RuntimeEvent>) =>
  ledger.flatMap((e) =>
    e.actions?.toolDispatch !== undefined
      ? [
          `dispatch #${e.actions.toolDispatch.attempt}${e.actions.toolDispatch.priorVerdict === undefined ? '' : ' not_applied'}`,
        ]
      : e.actions?.toolOutcome !== undefined
        ? [`outcome ${e.actions.toolOutcome.settlementOrigin}`]
        : e.actions?.permissionRequest !== undefined
          ? [`ask ${e.actions.permissionRequest.requestId}`]
          : [],
  )

// The tool messages the continuation's first model call saw, by call id.
const toolAnswersSeen = (w: World, runId: string) =>
  (w.requestsOf(runId)[0]?.messages ?? []).flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []))

describe('resuming a crash inside a tool', () => {
  it('reissues a call that was never dispatched, asking permission again (P1)', async () => {
    const w = await world({ journal: true })
    const source = await crashedAt(w, 'after_function_call', { name: 'mutate', args: { label: 'x' } })
    expect(w.runsOf('mutate')).toBe(0)
    const plan = await w.runtime.plan({ sessionId: source.sessionId })
    expect(plan.disposition).toBe('continue')
    expect(plan.continuation?.settlementPlan).toEqual([
      { operationId: `${source.runId}-o2`, toolCallId: expect.any(String), action: 'reissue' },
    ])
    w.script([{ text: 'Done.' }])
    const result = await w.runtime.execute(plan)
    expect(result).toMatchObject({ _tag: 'Finished', status: 'completed' })
    const target = plan.continuation!.runId
    const ledger = await w.ledger(source.sessionId, target)
    expect(ledger[0]?.actions).toMatchObject({
      runtimeProtocol: { toolBoundary: 't1_after_preflight_v1' },
      settlementPlan: plan.continuation?.settlementPlan,
    })
    expect(ledger[0]?.refs?.sourceRuntimeEventPrefixDigest).toMatch(/^sha256:[0-9a-f]{64}$/)
    const callId = plan.continuation!.settlementPlan![0]!.toolCallId
    expect(journalOf(ledger)).toEqual([`ask perm-${callId}-r1`, 'dispatch #1', 'outcome reissue_t2'])
    expect(w.runsOf('mutate')).toBe(1)
    expect(toolAnswersSeen(w, target)).toEqual([callId])
    const header = await w.header(source.sessionId, target)
    expect(header.continuationSource?.sourceRuntimeEventPrefixDigest).toBe(
      ledger[0]?.refs?.sourceRuntimeEventPrefixDigest,
    )
  })

  it('parks a dispatched never_auto_retry call with tool_outcome_unknown and runs nothing (P2–P4)', async () => {
    const w = await world({ journal: true })
    const source = await crashedAt(w, 'after_tool_dispatch_committed', { name: 'mutate', args: { label: 'x' } })
    const plan = await w.runtime.plan({ sessionId: source.sessionId })
    expect(plan.rejectionReasons).toEqual(['tool_outcome_unknown'])
    expect(plan.openToolOperations).toMatchObject([
      { status: 'dispatched_outcome_unknown', recoveryMode: 'never_auto_retry', reason: 'tool_outcome_unknown' },
    ])
    expect(w.runsOf('mutate')).toBe(0)
  })

  it('settles a write_file whose effect landed before its response (P4: probe applied)', async () => {
    const w = await world({ journal: true, builtins: true })
    const args = { path: 'notes.txt', content: 'hello' }
    const source = await crashedAt(w, 'after_tool_dispatch_committed', { name: 'write_file', args })
    // The effect happened; the crash took the response.
    await writeFile(join(w.workspace, 'notes.txt'), 'hello')
    const plan = await w.runtime.plan({ sessionId: source.sessionId })
    expect(plan.continuation?.settlementPlan?.[0]?.action).toBe('settle_applied')
    expect(plan.continuation?.safetySnapshot.probeVerdicts).toEqual([
      { operationId: `${source.runId}-o2`, verdict: 'applied' },
    ])
    w.script([{ text: 'Written.' }])
    expect(await w.runtime.execute(plan)).toMatchObject({ _tag: 'Finished', status: 'completed' })
    const ledger = await w.ledger(source.sessionId, plan.continuation!.runId)
    expect(journalOf(ledger)).toEqual(['outcome reconcile_applied'])
    expect(ledger[1]?.content).toMatchObject({ kind: 'function_response', result: { path: 'notes.txt', bytes: 5 } })
  })

  it('reissues a write_file whose effect never landed (P2: probe not_applied), with priorVerdict', async () => {
    const w = await world({ journal: true, builtins: true })
    const args = { path: 'notes.txt', content: 'hello' }
    const source = await crashedAt(w, 'after_tool_dispatch_committed', { name: 'write_file', args })
    const plan = await w.runtime.plan({ sessionId: source.sessionId })
    expect(plan.continuation?.settlementPlan?.[0]?.action).toBe('reissue')
    w.script([{ text: 'Written.' }])
    expect(await w.runtime.execute(plan)).toMatchObject({ _tag: 'Finished', status: 'completed' })
    const ledger = await w.ledger(source.sessionId, plan.continuation!.runId)
    const callId = plan.continuation!.settlementPlan![0]!.toolCallId
    expect(journalOf(ledger)).toEqual([`ask perm-${callId}-r1`, 'dispatch #2 not_applied', 'outcome reissue_t2'])
  })

  it('refuses to execute when the probe answers otherwise at execution (reconcile_verdict_changed)', async () => {
    const w = await world({ journal: true, builtins: true })
    const args = { path: 'notes.txt', content: 'hello' }
    const source = await crashedAt(w, 'after_tool_dispatch_committed', { name: 'write_file', args })
    const plan = await w.runtime.plan({ sessionId: source.sessionId })
    expect(plan.continuation?.settlementPlan?.[0]?.action).toBe('reissue')
    await writeFile(join(w.workspace, 'notes.txt'), 'hello')
    const result = await w.runtime.execute(plan)
    expect(result).toMatchObject({ _tag: 'Rejected', codes: ['reconcile_verdict_changed'] })
  })

  it('dispatches nothing when the effect lands while the reissue asks permission again, and the next plan settles it', async () => {
    let landNow = false
    const w = await world({
      journal: true,
      builtins: true,
      permissionMode: 'ask',
      // The effect lands while the continuation's question is open: after revalidation's probe.
      askPermission: async () => {
        if (landNow) await writeFile(join(w.workspace, 'notes.txt'), 'hello')
        return 'allow'
      },
    })
    const args = { path: 'notes.txt', content: 'hello' }
    const source = await crashedAt(w, 'after_tool_dispatch_committed', { name: 'write_file', args })
    const plan = await w.runtime.plan({ sessionId: source.sessionId })
    expect(plan.continuation?.settlementPlan?.[0]?.action).toBe('reissue')
    landNow = true
    w.script([{ text: 'Written.' }])
    expect(await w.runtime.execute(plan)).toMatchObject({
      _tag: 'Failed',
      stage: 'run',
      errorClass: 'reconcile_verdict_changed',
    })
    const stopped = plan.continuation!.runId
    const callId = plan.continuation!.settlementPlan![0]!.toolCallId
    expect(journalOf(await w.ledger(source.sessionId, stopped))).toEqual([`ask perm-${callId}-r1`])
    expect(w.requestsOf(stopped)).toEqual([])
    await w.runtime.recover({ sessionIds: [source.sessionId] })
    const next = await w.runtime.plan({ sessionId: source.sessionId })
    expect(next.openToolOperations).toMatchObject([{ adoptions: 1, attempts: 1, action: 'settle_applied' }])
    expect(await w.runtime.execute(next)).toMatchObject({ _tag: 'Finished', status: 'completed' })
    expect(journalOf(await w.ledger(source.sessionId, next.continuation!.runId))).toEqual(['outcome reconcile_applied'])
  })
})

describe('the source prefix digest at execution', () => {
  it('refuses with source_prefix_digest_changed when the source rows were rewritten, same values, other bytes', async () => {
    const w = await world({ journal: true })
    const source = await crashedAt(w, 'after_function_call', { name: 'mutate', args: { label: 'x' } })
    const plan = await w.runtime.plan({ sessionId: source.sessionId })
    expect(plan.disposition).toBe('continue')
    // The same rows, re-encoded with a space after the first colon of row 1: every value reads
    // back equal, only the stored bytes differ.
    const path = w.ledgerPathOf(source.sessionId, source.runId)
    const text = await readFile(path, 'utf8')
    await writeFile(path, text.replace('":', '": '))
    const result = await w.runtime.execute(plan)
    expect(result).toMatchObject({ _tag: 'Rejected', codes: ['source_prefix_digest_changed'] })
    expect(w.runsOf('mutate')).toBe(0)
  })
})
