/**
 * `resolve` in one process (Phase 2, operator adjudication): a turn stops where a tool's effect
 * cannot be judged, a person records what happened, and resuming continues from the adjudication
 * run with that record as the call's one response. Every refusal and every bad input writes nothing.
 */
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { type RuntimeEvent, type ShellRun, makeNonNegativeIntUnsafe } from '@maka/events'
import { currentProcessIdentity, currentProcessStartTime } from '@maka/host-inspector'
import { makeScriptedProvider } from '@maka/providers'
import { type CrashPoint, type ResolveRequest, type Runtime, awaitsExplicitResume } from '../src/index.js'
import { SimulatedCrash, type World, snapshotTree, trackWorlds } from './support/world.js'

const world = trackWorlds()

// A turn that calls `toolCall`, stopped at the first `point`, then recovered.
const crashedAt = async (
  w: World,
  point: CrashPoint,
  toolCall: { readonly name: string; readonly args: Record<string, unknown> } = { name: 'mutate', args: {} },
  runtime: Runtime = w.runtimeWith({
    onCrashPoint: (at) => {
      if (at === point) throw new SimulatedCrash(at)
    },
  }),
) => {
  w.script([{ toolCall }])
  const turn = await runtime.runTurn({ cwd: w.workspace, prompt: 'go' })
  if (turn._tag !== 'Interrupted') throw new Error(`expected an interrupted turn, got ${JSON.stringify(turn)}`)
  await w.runtime.recover({ sessionIds: [turn.sessionId] })
  return { sessionId: turn.sessionId, runId: turn.runId, callId: `${turn.runId}-1`, operationId: `${turn.runId}-o2` }
}

const resolveOf = (
  sessionId: string,
  more: Partial<ResolveRequest> & Pick<ResolveRequest, 'target'>,
): ResolveRequest => ({
  sessionId,
  verdict: 'not_applied',
  actor: 'cli',
  ...more,
})

// The tool messages of the first model call of a run.
const toolMessages = (w: World, runId: string) =>
  (w.requestsOf(runId)[0]?.messages ?? []).flatMap((m) => (m.role === 'tool' ? [m] : []))

const responsesOf = (events: ReadonlyArray<RuntimeEvent>) =>
  events.flatMap((e) => (e.content?.kind === 'function_response' ? [e] : []))

describe('resolve', () => {
  describe('when a never_auto_retry call was dispatched and the turn crashed (P2)', () => {
    it('records the verdict in an adjudication run, and resume continues from it with that response', async () => {
      const w = await world({ journal: true })
      const source = await crashedAt(w, 'after_tool_dispatch_committed')
      const parked = await w.runtime.plan({ sessionId: source.sessionId })
      expect(parked.rejectionReasons).toEqual(['tool_outcome_unknown'])
      const sourceBytes = await snapshotTree(w.runDirOf(source.sessionId, source.runId))

      const result = await w.runtime.resolve(resolveOf(source.sessionId, { target: { callId: source.callId } }))
      expect(result).toMatchObject({
        _tag: 'Resolved',
        sessionId: source.sessionId,
        sourceRunId: source.runId,
        operationId: source.operationId,
        toolCallId: source.callId,
        verdict: 'not_applied',
      })
      if (result._tag !== 'Resolved') throw new Error('not resolved')
      const ledger = await w.ledger(source.sessionId, result.targetRunId)
      expect(ledger).toHaveLength(3)
      expect(ledger[0]?.actions?.settlementPlan).toEqual([
        { operationId: source.operationId, toolCallId: source.callId, action: 'adjudicate' },
      ])
      expect(ledger[0]?.actions?.runtimeProtocol).toEqual({ toolBoundary: 't1_after_preflight_v1' })
      expect(ledger[1]).toMatchObject({
        role: 'tool',
        author: 'user',
        content: {
          kind: 'function_response',
          id: source.callId,
          name: 'mutate',
          result: 'An operator confirmed that this call did not take effect. It was not run again.',
          isError: true,
        },
        actions: {
          toolOutcome: {
            operationId: source.operationId,
            settlementOrigin: 'operator_adjudication',
            adjudication: { verdict: 'not_applied', actor: 'cli' },
          },
        },
      })
      expect(ledger[2]).toMatchObject({
        status: 'failed',
        actions: { stateDelta: { failureClass: 'operator_resolved' } },
      })
      const header = await w.header(source.sessionId, result.targetRunId)
      expect(header).toMatchObject({ status: 'failed', failureClass: 'operator_resolved', parentRunId: source.runId })
      expect(header.continuationSource?.sourceRuntimeEventPrefixDigest).toBe(
        ledger[0]?.refs?.sourceRuntimeEventPrefixDigest,
      )
      expect(await snapshotTree(w.runDirOf(source.sessionId, source.runId))).toEqual(sourceBytes)
      expect(w.lifecycle.filter((e) => e.type === 'call_resolved')).toEqual([
        {
          type: 'call_resolved',
          sessionId: source.sessionId,
          sourceRunId: source.runId,
          targetRunId: result.targetRunId,
          operationId: source.operationId,
          verdict: 'not_applied',
          actor: 'cli',
        },
      ])
      // No model was called, and nothing ran (the crash came between the dispatch and the tool).
      expect(w.requestsOf(result.targetRunId)).toEqual([])
      expect(w.runsOf('mutate')).toBe(0)

      // Resume continues from the adjudication run; the model reads the person's record as the response.
      const plan = await w.runtime.plan({ sessionId: source.sessionId })
      expect(plan).toMatchObject({ disposition: 'continue', sourceRunId: result.targetRunId })
      expect(plan.continuation?.settlementPlan).toBeUndefined()
      w.script([{ text: 'Understood.' }])
      const resumed = await w.runtime.resume({ sessionId: source.sessionId })
      expect(resumed).toMatchObject({ _tag: 'Finished', status: 'completed', sourceRunId: result.targetRunId })
      if (resumed._tag !== 'Finished') throw new Error('not finished')
      expect(toolMessages(w, resumed.targetRunId)).toEqual([
        expect.objectContaining({
          toolCallId: source.callId,
          result: 'An operator confirmed that this call did not take effect. It was not run again.',
          isError: true,
        }),
      ])
      expect(w.runsOf('mutate')).toBe(0)
    })

    it('records the --output text as the result instead of the sentence, and never in lifecycle events', async () => {
      const w = await world({ journal: true })
      const source = await crashedAt(w, 'after_tool_dispatch_committed')
      const result = await w.runtime.resolve(
        resolveOf(source.sessionId, {
          target: { operationId: source.operationId },
          verdict: 'applied',
          output: 'published 1.2.3 SECRET-OUTPUT',
          actor: 'tui',
        }),
      )
      if (result._tag !== 'Resolved') throw new Error(JSON.stringify(result))
      const [response] = responsesOf(await w.ledger(source.sessionId, result.targetRunId))
      expect(response?.content).toEqual({
        kind: 'function_response',
        id: source.callId,
        name: 'mutate',
        result: 'published 1.2.3 SECRET-OUTPUT',
      })
      expect(JSON.stringify(w.lifecycle)).not.toContain('SECRET-OUTPUT')
    })

    it('refuses a second resolve of the same call (resolve_call_settled), writing nothing', async () => {
      const w = await world({ journal: true })
      const source = await crashedAt(w, 'after_tool_dispatch_committed')
      const first = await w.runtime.resolve(resolveOf(source.sessionId, { target: { callId: source.callId } }))
      expect(first._tag).toBe('Resolved')
      const before = await snapshotTree(w.dataDir)
      const second = await w.runtime.resolve(
        resolveOf(source.sessionId, { target: { callId: source.callId }, verdict: 'failed' }),
      )
      expect(second).toMatchObject({ _tag: 'Refused', codes: ['resolve_call_settled'] })
      expect(await snapshotTree(w.dataDir)).toEqual(before)
    })
  })

  describe('when a crash stops the adjudication before its response is committed', () => {
    it('leaves the operation open, and a resolve at the new boundary records it', async () => {
      const w = await world({ journal: true })
      const source = await crashedAt(w, 'after_tool_dispatch_committed')
      const crashing = w.runtimeWith({
        onCrashPoint: (at) => {
          if (at === 'after_continuation_start_committed') throw new SimulatedCrash(at)
        },
      })
      const stopped = await crashing.resolve(resolveOf(source.sessionId, { target: { callId: source.callId } }))
      expect(stopped).toMatchObject({ _tag: 'Failed', stage: 'adjudication' })
      const again = await w.runtime.resolve(
        resolveOf(source.sessionId, { target: { callId: source.callId }, verdict: 'failed' }),
      )
      expect(again).toMatchObject({ _tag: 'Resolved', operationId: source.operationId, verdict: 'failed' })
      if (again._tag !== 'Resolved') throw new Error('not resolved')
      expect(again.sourceRunId).not.toBe(source.runId)
      w.script([{ text: 'Noted.' }])
      const resumed = await w.runtime.resume({ sessionId: source.sessionId })
      expect(resumed).toMatchObject({ _tag: 'Finished', status: 'completed' })
      if (resumed._tag !== 'Finished') throw new Error('not finished')
      expect(toolMessages(w, resumed.targetRunId)).toEqual([
        expect.objectContaining({ toolCallId: source.callId, result: 'An operator recorded that this call failed.' }),
      ])
    })
  })

  describe('when the session is a legacy Phase 1 park (dangling_tool_state)', () => {
    it('clears it: resolve, then resume continues and the model reads the adjudication', async () => {
      const w = await world({ journal: true })
      // The turn ran with the journal off, as a Phase 1 binary wrote it.
      const legacy = w.runtimeWith({
        toolJournal: false,
        onCrashPoint: (at) => {
          if (at === 'after_function_call') throw new SimulatedCrash(at)
        },
      })
      const source = await crashedAt(w, 'after_function_call', { name: 'mutate', args: {} }, legacy)
      const parked = await w.runtime.plan({ sessionId: source.sessionId })
      expect(parked.rejectionReasons).toEqual(['dangling_tool_state'])
      const result = await w.runtime.resolve(
        resolveOf(source.sessionId, { target: { callId: source.callId }, verdict: 'failed' }),
      )
      expect(result).toMatchObject({ _tag: 'Resolved', operationId: source.operationId })
      w.script([{ text: 'I will check the workspace.' }])
      const resumed = await w.runtime.resume({ sessionId: source.sessionId })
      expect(resumed).toMatchObject({ _tag: 'Finished', status: 'completed' })
      if (resumed._tag !== 'Finished') throw new Error('not finished')
      expect(toolMessages(w, resumed.targetRunId)).toEqual([
        expect.objectContaining({
          toolCallId: source.callId,
          result: 'An operator recorded that this call failed.',
        }),
      ])
      expect(w.runsOf('mutate')).toBe(0)
    })
  })

  describe('refusals and bad input write nothing', () => {
    it('refuses an unknown call', async () => {
      const w = await world({ journal: true })
      const source = await crashedAt(w, 'after_tool_dispatch_committed')
      const before = await snapshotTree(w.dataDir)
      const result = await w.runtime.resolve(resolveOf(source.sessionId, { target: { callId: 'no-such-call' } }))
      expect(result).toMatchObject({
        _tag: 'Refused',
        codes: ['resolve_call_unknown'],
        messages: ['No tool call with that id was found in the interrupted turn.'],
      })
      expect(await snapshotTree(w.dataDir)).toEqual(before)
    })

    it('refuses applied for a call the journal proves never started', async () => {
      const w = await world({ journal: true })
      const source = await crashedAt(w, 'after_function_call')
      const before = await snapshotTree(w.dataDir)
      const result = await w.runtime.resolve(
        resolveOf(source.sessionId, { target: { callId: source.callId }, verdict: 'applied' }),
      )
      expect(result).toMatchObject({ _tag: 'Refused', codes: ['resolve_verdict_contradicts_journal'] })
      expect(await snapshotTree(w.dataDir)).toEqual(before)
    })

    it('refuses a call whose response is committed (resolve_call_settled)', async () => {
      const w = await world({ journal: true })
      const source = await crashedAt(w, 'after_tool_response')
      const before = await snapshotTree(w.dataDir)
      const result = await w.runtime.resolve(resolveOf(source.sessionId, { target: { callId: source.callId } }))
      expect(result).toMatchObject({ _tag: 'Refused', codes: ['resolve_call_settled'] })
      expect(await snapshotTree(w.dataDir)).toEqual(before)
    })

    it('refuses a tool call id that names two operations of the chain, listing them', async () => {
      const w = await world({ journal: true })
      // One fixed id prefix for every run: the continuation's call gets the source's call id again.
      const sameIds = (steps: ReadonlyArray<unknown>) => () =>
        makeScriptedProvider({ steps: steps as never, toolCallIdPrefix: 'same' })
      const first = w.runtimeWith({
        providerFor: sameIds([{ toolCall: { name: 'count', args: {} } }]),
        onCrashPoint: (at) => {
          if (at === 'after_tool_response') throw new SimulatedCrash(at)
        },
      })
      const turn = await first.runTurn({ cwd: w.workspace, prompt: 'go' })
      if (turn._tag !== 'Interrupted') throw new Error(JSON.stringify(turn))
      await w.runtime.recover({ sessionIds: [turn.sessionId] })
      const second = w.runtimeWith({
        providerFor: sameIds([{ toolCall: { name: 'mutate', args: {} } }]),
        onCrashPoint: (at) => {
          if (at === 'after_tool_dispatch_committed') throw new SimulatedCrash(at)
        },
      })
      const resumed = await second.resume({ sessionId: turn.sessionId })
      expect(resumed._tag).toBe('Failed')
      await w.runtime.recover({ sessionIds: [turn.sessionId] })
      const before = await snapshotTree(w.dataDir)
      const result = await w.runtime.resolve(resolveOf(turn.sessionId, { target: { callId: 'same-1' } }))
      expect(result).toMatchObject({ _tag: 'Refused', codes: ['resolve_call_ambiguous'] })
      if (result._tag !== 'Refused') throw new Error('not refused')
      expect(
        (result.detail as { operations: ReadonlyArray<{ toolName: string }> }).operations.map((o) => o.toolName),
      ).toEqual(['count', 'mutate'])
      expect(await snapshotTree(w.dataDir)).toEqual(before)
    })

    it('refuses while a command of the session may still run (resolve_call_running)', async () => {
      const w = await world({ journal: true })
      const source = await crashedAt(w, 'after_tool_dispatch_committed')
      // A background command of the session that is still alive: this very process, recorded as it is.
      const identity = await currentProcessIdentity()
      const record = {
        shellRunId: 'sh-00000000000e50c1',
        sessionId: source.sessionId,
        runId: source.runId,
        command: 'sleep 120',
        status: 'running',
        pid: makeNonNegativeIntUnsafe(process.pid),
        startedAt: (await currentProcessStartTime()).toISOString(),
        ...(identity === null ? {} : identity),
      } as ShellRun
      expect(E.isRight(await w.stores.shellRuns.write(record)())).toBe(true)
      const before = await snapshotTree(w.dataDir)
      const result = await w.runtime.resolve(resolveOf(source.sessionId, { target: { callId: source.callId } }))
      expect(result).toMatchObject({ _tag: 'Refused', codes: ['resolve_call_running'] })
      expect(await snapshotTree(w.dataDir)).toEqual(before)
    })

    it('answers resolve_unavailable where runs write no journal, naming what is missing', async () => {
      const w = await world({ journal: true })
      const source = await crashedAt(w, 'after_tool_dispatch_committed')
      const before = await snapshotTree(w.dataDir)
      const off = w.runtimeWith({ toolJournal: false })
      const result = await off.resolve(resolveOf(source.sessionId, { target: { callId: source.callId } }))
      expect(result).toMatchObject({ _tag: 'Unavailable', code: 'resolve_unavailable' })
      if (result._tag !== 'Unavailable') throw new Error('available')
      expect(result.message).toContain('MAKA_RUNTIME_TOOL_JOURNAL=0')
      const flagOff = w.runtimeWith({ safeBoundaryResumeEnabled: false })
      const alsoOff = await flagOff.resolve(resolveOf(source.sessionId, { target: { callId: source.callId } }))
      expect(alsoOff).toMatchObject({ _tag: 'Unavailable', code: 'resolve_unavailable' })
      expect(await snapshotTree(w.dataDir)).toEqual(before)
    })

    it.each([
      ['a verdict it does not know', { verdict: 'maybe' }, 'invalid_verdict'],
      ['both a call and an operation', { target: { callId: 'a', operationId: 'b' } }, 'invalid_target'],
      ['no call at all', { target: {} }, 'invalid_target'],
      ['an output over 64 KiB', { output: 'x'.repeat(64 * 1024 + 1) }, 'invalid_output'],
      ['an output that is not UTF-8', { output: 'bad \uD800 surrogate' }, 'invalid_output'],
    ])('refuses %s as invalid input', async (_name, more, code) => {
      const w = await world({ journal: true })
      const source = await crashedAt(w, 'after_tool_dispatch_committed')
      const before = await snapshotTree(w.dataDir)
      const result = await w.runtime.resolve({
        ...resolveOf(source.sessionId, { target: { callId: source.callId } }),
        ...(more as Partial<ResolveRequest>),
      })
      expect(result).toMatchObject({ _tag: 'Invalid', code })
      expect(await snapshotTree(w.dataDir)).toEqual(before)
    })
  })
})

describe('awaitsExplicitResume', () => {
  it('is true once the latest run is an adjudication run, even when a crash closed it as app_restarted', async () => {
    const w = await world({ journal: true })
    const source = await crashedAt(w, 'after_tool_dispatch_committed')
    expect(await awaitsExplicitResume(w.stores, source.sessionId)).toBe(false)
    const crashing = w.runtimeWith({
      onCrashPoint: (at) => {
        if (at === 'after_adjudication_committed') throw new SimulatedCrash(at)
      },
    })
    const stopped = await crashing.resolve(resolveOf(source.sessionId, { target: { callId: source.callId } }))
    expect(stopped).toMatchObject({ _tag: 'Failed' })
    await w.runtime.recover({ sessionIds: [source.sessionId] })
    expect(await awaitsExplicitResume(w.stores, source.sessionId)).toBe(true)
    // The adjudication stands: the call is settled, and resume continues from the run.
    const again = await w.runtime.resolve(resolveOf(source.sessionId, { target: { callId: source.callId } }))
    expect(again).toMatchObject({ _tag: 'Refused', codes: ['resolve_call_settled'] })
    w.script([{ text: 'Fine.' }])
    expect(await w.runtime.resume({ sessionId: source.sessionId })).toMatchObject({ _tag: 'Finished' })
    expect(await awaitsExplicitResume(w.stores, source.sessionId)).toBe(false)
  })
})
