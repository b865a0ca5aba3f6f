/**
 * The tool journal in a normal turn (Phase 2): the marker on row 1, the call's operation id, the
 * durable dispatch row before the implementation and the durable outcome after it, refusals before
 * T1 as durable error responses, and exactly Phase 1's rows with the journal off.
 */
import { describe, expect, it } from 'vitest'
import { type RuntimeEvent, argsDigest } from '@maka/events'
import type { TurnResult } from '../src/index.js'
import { describeRow, trackWorlds, tracingWrites } from './support/world.js'

const world = trackWorlds()

const finished = (result: TurnResult) => {
  if (result._tag !== 'Finished') throw new Error(`expected Finished, got ${JSON.stringify(result)}`)
  return result
}

const rowKinds = (ledger: ReadonlyArray<RuntimeEvent>) =>
  ledger.map((e) =>
    e.actions?.toolDispatch !== undefined
      ? `dispatch ${e.actions.toolDispatch.recoveryMode} #${e.actions.toolDispatch.attempt}`
      : e.actions?.toolOutcome !== undefined
        ? `outcome ${e.actions.toolOutcome.settlementOrigin}`
        : describeRow(e),
  )

describe('a turn that writes the tool journal', () => {
  it('marks row 1, dispatches durably before the tool runs and answers with the outcome, made durable by the next durable row', async () => {
    const w = await world({ journal: true })
    w.script([{ toolCall: { name: 'mutate', args: { label: 'x' } } }, { text: 'Done.' }])
    const trace: Array<string> = []
    const result = finished(
      await w.runtimeWith({ wrapStores: tracingWrites(trace) }).runTurn({ cwd: w.workspace, prompt: 'go' }),
    )
    expect(result.status).toBe('completed')
    expect(trace).toEqual([
      'header created',
      'row user text (durable)',
      'header running',
      'row model function_call',
      'row permission request',
      'row permission allow',
      'row system no content (durable)',
      // One durable append per call: the response rides on the next durable row (here the terminal).
      'row tool function_response',
      'row model text',
      'row terminal completed (durable)',
      'header completed (durable)',
    ])
    const ledger = await w.ledger(result.sessionId, result.runId)
    expect(ledger[0]?.actions?.runtimeProtocol).toEqual({ toolBoundary: 't1_after_preflight_v1' })
    const call = ledger[1]!
    const operationId = `${result.runId}-o2`
    expect(call.refs).toEqual({
      toolCallId: call.content?.kind === 'function_call' ? call.content.id : '',
      operationId,
    })
    expect(ledger[4]?.actions?.toolDispatch).toEqual({
      protocol: 't1_after_preflight_v1',
      operationId,
      toolCallId: call.refs?.toolCallId,
      toolName: 'mutate',
      argsDigest: argsDigest({ label: 'x' }),
      recoveryMode: 'never_auto_retry',
      attempt: 1,
    })
    expect(ledger[5]?.actions?.toolOutcome).toEqual({
      protocol: 't1_after_preflight_v1',
      operationId,
      settlementOrigin: 'normal_t2',
      attempt: 1,
    })
    expect(w.toolRuns).toEqual([
      expect.objectContaining({ name: 'mutate', operationId, attempt: 1, idempotencyKey: `maka:${operationId}` }),
    ])
  })

  it('answers a denied call with a durable pre_t1_synthetic error and never dispatches it', async () => {
    const w = await world({ journal: true, permissionMode: 'deny' })
    w.script([{ toolCall: { name: 'mutate', args: { label: 'x' } } }, { text: 'Denied.' }])
    const result = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'go' }))
    const ledger = await w.ledger(result.sessionId, result.runId)
    expect(rowKinds(ledger)).toEqual([
      'user text',
      'model function_call',
      'permission request',
      'permission deny',
      'outcome pre_t1_synthetic',
      'model text',
      'terminal completed',
    ])
    expect(ledger[4]?.content).toMatchObject({ kind: 'function_response', isError: true })
    expect(w.runsOf('mutate')).toBe(0)
  })

  it('answers a call of an unknown tool with a pre_t1_synthetic error', async () => {
    const w = await world({ journal: true })
    w.script([{ toolCall: { name: 'no_such_tool', args: {} } }, { text: 'Sorry.' }])
    const result = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'go' }))
    expect(rowKinds(await w.ledger(result.sessionId, result.runId))).toEqual([
      'user text',
      'model function_call',
      'outcome pre_t1_synthetic',
      'model text',
      'terminal completed',
    ])
  })

  it('records the pre-image of a reconcile tool in its dispatch', async () => {
    const w = await world({ journal: true, builtins: true })
    w.script([{ toolCall: { name: 'write_file', args: { path: 'notes.txt', content: 'hi' } } }, { text: 'Written.' }])
    const result = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'write' }))
    const ledger = await w.ledger(result.sessionId, result.runId)
    const dispatch = ledger.find((e) => e.actions?.toolDispatch !== undefined)?.actions?.toolDispatch
    expect(dispatch).toMatchObject({ toolName: 'write_file', recoveryMode: 'reconcile', reconcileBasis: 'absent' })
  })

  it('writes exactly Phase 1 rows with the journal off', async () => {
    const w = await world({ journal: false })
    w.script([{ toolCall: { name: 'mutate', args: { label: 'x' } } }, { text: 'Done.' }])
    const result = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'go' }))
    const ledger = await w.ledger(result.sessionId, result.runId)
    const keys = JSON.stringify(ledger)
    for (const key of ['runtimeProtocol', 'toolDispatch', 'toolOutcome', 'operationId']) expect(keys).not.toContain(key)
    expect(w.toolRuns[0]).not.toHaveProperty('operationId')
  })
})
