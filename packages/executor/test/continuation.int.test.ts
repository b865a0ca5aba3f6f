import { existsSync } from 'node:fs'
import { appendFile, readFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { type OwnerLock, isTerminalEvent } from '@maka/events'
import { currentProcessStartTime } from '@maka/host-inspector'
import type { ContinuationResult } from '../src/index.js'
import { givenApprovedPlan, givenInterruptedRun, trackWorlds, snapshotTree, tracingWrites } from './support/world.js'

const world = trackWorlds()

const finished = (result: ContinuationResult) => {
  if (result._tag !== 'Finished') throw new Error(`expected Finished, got ${JSON.stringify(result)}`)
  return result
}

describe('execute (continuation)', () => {
  describe('when an interrupted run was recovered and planned', () => {
    it('runs a new run from the boundary, replaying history without a new user message or a second tool call', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w, {
        prompt: 'Count for me.',
        toolCalls: [{ name: 'count', args: { label: 'once' } }],
      })
      const toolRunsBefore = w.runsOf('count')
      const sourceHeaderBytes = await readFile(w.headerPathOf(source.sessionId, source.runId))
      const sourceLedgerBytes = await readFile(w.ledgerPathOf(source.sessionId, source.runId))
      const sourceRows = await w.ledger(source.sessionId, source.runId)
      const sourceHeader = await w.header(source.sessionId, source.runId)
      const lifecycleBefore = w.lifecycle.length

      const { plan, continuation: c } = await givenApprovedPlan(w, source)
      const result = finished(await w.runtime.execute(plan))

      // The result and the new identity.
      expect(result).toEqual({
        _tag: 'Finished',
        sessionId: source.sessionId,
        sourceRunId: source.runId,
        targetRunId: c.runId,
        targetTurnId: c.turnId,
        status: 'completed',
      })
      expect(c.runId).not.toBe(source.runId)
      expect(c.invocationId).not.toBe(sourceHeader.invocationId)
      expect(c.turnId).not.toBe(sourceHeader.turnId)

      // The target header: lineage and exactly the four continuationSource fields.
      const target = await w.header(source.sessionId, c.runId)
      expect(target).toMatchObject({
        runId: c.runId,
        invocationId: c.invocationId,
        turnId: c.turnId,
        status: 'completed',
        parentRunId: source.runId,
        parentTurnId: sourceHeader.turnId,
        cwd: sourceHeader.cwd,
        workspaceIdentity: sourceHeader.workspaceIdentity,
      })
      expect(target.continuationSource).toStrictEqual({
        sourceInvocationId: sourceHeader.invocationId,
        sourceRunId: source.runId,
        sourceTurnId: sourceHeader.turnId,
        sourceRuntimeEventHighWater: sourceRows.length,
      })

      // The target ledger: continuation-start first, no user-role row, one completed terminal last.
      const rows = await w.ledger(source.sessionId, c.runId)
      const start = rows[0]
      expect(start).toStrictEqual({
        id: `${c.runId}-e1`,
        sessionId: source.sessionId,
        invocationId: c.invocationId,
        runId: c.runId,
        turnId: c.turnId,
        ts: start?.ts,
        partial: false,
        role: 'system',
        author: 'system',
        actions: { stateDelta: { continuationStart: true } },
        refs: {
          sourceInvocationId: sourceHeader.invocationId,
          sourceRunId: source.runId,
          sourceTurnId: sourceHeader.turnId,
          sourceRuntimeEventHighWater: sourceRows.length,
        },
      })
      expect(rows.filter((r) => r.role === 'user')).toEqual([])
      expect(rows.filter(isTerminalEvent)).toHaveLength(1)
      expect(rows[rows.length - 1]).toMatchObject({ status: 'completed', actions: { endInvocation: true } })

      // The exact provider request: the original user text, the assistant tool call, the tool result — nothing new.
      const requests = w.requestsOf(c.runId)
      expect(requests).toHaveLength(1)
      const call = sourceRows.find((r) => r.content?.kind === 'function_call')
      const callId = call?.content?.kind === 'function_call' ? call.content.id : 'missing'
      expect(requests[0]?.messages).toStrictEqual([
        { role: 'user', text: 'Count for me.' },
        { role: 'assistant', text: '', toolCalls: [{ id: callId, name: 'count', args: { label: 'once' } }] },
        { role: 'tool', toolCallId: callId, name: 'count', result: { count: 1 }, isError: false },
      ])
      expect(requests[0]?.messages.filter((m) => m.role === 'user')).toHaveLength(1)
      // System prompt and tools are rebuilt as for a normal turn.
      const turnRequest = w.requestsOf(source.runId)[0]
      expect(requests[0]?.systemPrompt).toBe(turnRequest?.systemPrompt)
      expect(requests[0]?.tools).toStrictEqual(turnRequest?.tools)
      expect(w.providersMade.filter((p) => p.kind === 'continuation')).toEqual([
        { kind: 'continuation', runId: c.runId },
      ])

      // The completed tool call was never executed again.
      expect(w.runsOf('count')).toBe(toolRunsBefore)
      expect(toolRunsBefore).toBe(1)

      // The source run was only read.
      expect(await readFile(w.headerPathOf(source.sessionId, source.runId))).toEqual(sourceHeaderBytes)
      expect(await readFile(w.ledgerPathOf(source.sessionId, source.runId))).toEqual(sourceLedgerBytes)

      // Lifecycle: identities only.
      expect(w.lifecycle.slice(lifecycleBefore)).toStrictEqual([
        { type: 'plan_approved', sessionId: source.sessionId, sourceRunId: source.runId, targetRunId: c.runId },
        { type: 'execution_started', sessionId: source.sessionId, sourceRunId: source.runId, targetRunId: c.runId },
        { type: 'execution_completed', sessionId: source.sessionId, sourceRunId: source.runId, targetRunId: c.runId },
      ])

      // Planning the same boundary again parks, naming the run that holds it.
      const again = await w.runtime.plan({ sessionId: source.sessionId, runId: source.runId })
      expect(again.disposition).toBe('park')
      expect(again.rejectionReasons).toEqual(['continuation_already_exists'])
      expect(again.diagnostics.find((d) => d.code === 'continuation_already_exists')?.detail).toMatchObject({
        existingRunId: c.runId,
      })
    })

    it('writes in the contract’s order: claim and header, durable start row, running, rows, durable terminal, terminal header', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan } = await givenApprovedPlan(w, source)
      w.script([{ toolCall: { name: 'count' } }, { text: 'done' }])
      const trace: Array<string> = []

      finished(await w.runtimeWith({ wrapStores: tracingWrites(trace) }).execute(plan))

      expect(trace).toEqual([
        'claim + header created',
        'row continuation start (durable)',
        'header running',
        'row model function_call',
        'row tool function_response',
        'row model text',
        'row terminal completed (durable)',
        'header completed (durable)',
      ])
    })

    it('lets a continuation call new tools, which then run once each', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan, continuation: c } = await givenApprovedPlan(w, source)
      w.script([{ toolCall: { name: 'count', args: { label: 'again' } } }, { text: 'done' }])

      finished(await w.runtime.execute(plan))

      expect(w.runsOf('count')).toBe(2)
      expect(w.toolRuns.map((r) => r.runId)).toEqual([source.runId, c.runId])
      const rows = await w.ledger(source.sessionId, c.runId)
      const ids = rows.flatMap((r) => (r.content?.kind === 'function_call' ? [r.content.id] : []))
      expect(ids).toEqual([`${c.runId}-1`])
      // The second request carries the replayed history plus only the continuation's own rows.
      const second = w.requestsOf(c.runId)[1]
      expect(second?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool'])
    })

    it('continues from the latest top-level run when no run is named', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)

      const result = await w.runtime.resume({ sessionId: source.sessionId })

      expect(result).toMatchObject({ _tag: 'Finished', sourceRunId: source.runId, status: 'completed' })
    })
  })

  describe('when the source ledger ends with a torn row', () => {
    it('continues from the committed prefix and leaves the torn bytes where they are', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const path = w.ledgerPathOf(source.sessionId, source.runId)
      await appendFile(path, '{"id":"torn-row","sessionId":"')
      const bytes = await readFile(path)

      const { plan } = await givenApprovedPlan(w, source)
      const result = await w.runtime.execute(plan)

      expect(plan.diagnostics.map((d) => d.code)).toEqual(['ledger_torn_tail'])
      expect(result).toMatchObject({ _tag: 'Finished', status: 'completed' })
      expect(await readFile(path)).toEqual(bytes)
    })
  })

  describe('when another live process owns the session', () => {
    it('parks planning and refuses execution with session_owner_alive; a dead owner’s lock is taken over', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan, continuation: c } = await givenApprovedPlan(w, source)
      const live = {
        pid: process.pid,
        hostname: hostname(),
        startedAt: (await currentProcessStartTime()).toISOString(),
      } as OwnerLock
      expect(E.isRight(await w.stores.ownerLocks.acquire(source.sessionId, live, () => Promise.resolve(false))())).toBe(
        true,
      )

      const parked = await w.runtime.plan({ sessionId: source.sessionId, runId: source.runId })
      const refused = await w.runtime.execute(plan)

      expect(parked.rejectionReasons).toEqual(['session_owner_alive'])
      expect(refused).toMatchObject({ _tag: 'Rejected', codes: ['session_owner_alive'] })
      expect(w.lifecycle[w.lifecycle.length - 1]).toStrictEqual({
        type: 'execution_failed',
        sessionId: source.sessionId,
        sourceRunId: source.runId,
        targetRunId: null,
        errorClass: 'session_owner_alive',
      })
      expect(existsSync(w.runDirOf(source.sessionId, c.runId))).toBe(false)
      expect(w.requests.filter((r) => r.kind === 'continuation')).toEqual([])

      // The owner dies; its lock (same pid, other start time) is stale and is taken over.
      expect(E.isRight(await w.stores.ownerLocks.release(source.sessionId, live)())).toBe(true)
      const stale = { ...live, startedAt: '2020-01-01T00:00:00.000Z' } as OwnerLock
      expect(
        E.isRight(await w.stores.ownerLocks.acquire(source.sessionId, stale, () => Promise.resolve(false))()),
      ).toBe(true)
      expect(await w.runtime.execute(plan)).toMatchObject({ _tag: 'Finished', targetRunId: c.runId })
      const lock = await w.stores.ownerLocks.read(source.sessionId)()
      expect(E.isRight(lock) && lock.right).toBeNull()
    })
  })

  describe('when the feature flag is off', () => {
    it('parks every plan with resume_feature_disabled', async () => {
      const w = await world({ flag: false })
      const turn = await w.runtime.runTurn({ cwd: w.workspace, prompt: 'hi' })
      if (turn._tag !== 'Finished') throw new Error(JSON.stringify(turn))

      const plan = await w.runtime.plan({ sessionId: turn.sessionId, runId: turn.runId })
      const resumed = await w.runtime.resume({ sessionId: turn.sessionId })

      expect(plan).toMatchObject({ disposition: 'park', rejectionReasons: ['resume_feature_disabled'] })
      expect(resumed).toMatchObject({ _tag: 'Parked', plan: { rejectionReasons: ['resume_feature_disabled'] } })
      expect(w.providersMade.filter((p) => p.kind === 'continuation')).toEqual([])
    })
  })

  describe('when a plan approved elsewhere reaches a runtime without the flag', () => {
    it('refuses it with resume_feature_disabled and writes nothing', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan } = await givenApprovedPlan(w, source)
      const flagOff = w.runtimeWith({ safeBoundaryResumeEnabled: false })
      const before = await snapshotTree(w.dataDir)

      const result = await flagOff.execute(plan)

      expect(result).toMatchObject({ _tag: 'Rejected', codes: ['resume_feature_disabled'] })
      expect(await snapshotTree(w.dataDir)).toEqual(before)
      expect(w.requests.filter((r) => r.kind === 'continuation')).toEqual([])
    })
  })

  describe('when the source is itself a continuation', () => {
    it('replays the ancestors’ history too', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w, { prompt: 'first prompt' })
      const { plan: first, continuation: c1 } = await givenApprovedPlan(w, source)
      w.script([{ toolCall: { name: 'count', args: { label: 'second' } } }, { error: 'stream dropped' }])
      const firstResult = finished(await w.runtime.execute(first))
      expect(firstResult).toMatchObject({ status: 'failed', failureClass: 'provider_error' })

      const { plan: second, continuation: c2 } = await givenApprovedPlan(w, { ...source, runId: c1.runId })
      finished(await w.runtime.execute(second))

      const messages = w.requestsOf(c2.runId)[0]?.messages ?? []
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool'])
      expect(messages[0]).toEqual({ role: 'user', text: 'first prompt' })
      expect(w.runsOf('count')).toBe(2)
      expect((await w.header(source.sessionId, c2.runId)).parentRunId).toBe(c1.runId)
    })
  })
})
