/**
 * Fail-closed behaviour of a continuation: a store failure at the claim or at the continuation-start
 * row stops execution before any model call, and startup recovery later closes what was left open.
 */
import { existsSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { describe, expect, it } from 'vitest'
import { isContinuationStartEvent, isTerminalEvent } from '@maka/events'
import { claimPath, runsDir, type FileStores } from '@maka/store-jsonl'
import { givenApprovedPlan, givenInterruptedRun, trackWorlds, ioFailure, squatterHeader } from './support/world.js'

const world = trackWorlds()

const failingContinuationStart = (s: FileStores): FileStores => ({
  ...s,
  events: {
    ...s.events,
    append: (sessionId, runId, event, options) =>
      isContinuationStartEvent(event)
        ? TE.left(ioFailure('append'))
        : s.events.append(sessionId, runId, event, options),
  },
})

/** Records committed writes at the port, in order. */
const recordingWrites =
  (writes: Array<string>) =>
  (s: FileStores): FileStores => ({
    ...s,
    events: {
      ...s.events,
      append: (sessionId, runId, event, options) => async () => {
        const r = await s.events.append(sessionId, runId, event, options)()
        if (E.isRight(r))
          writes.push(`row ${runId} ${isTerminalEvent(event) ? `terminal ${event.status}` : event.role}`)
        return r
      },
    },
    runs: {
      ...s.runs,
      update: (run, options) => async () => {
        const r = await s.runs.update(run, options)()
        if (E.isRight(r)) writes.push(`header ${run.runId} ${run.status}`)
        return r
      },
    },
  })

describe('execute when a durable write fails', () => {
  describe('when the continuation-start row cannot be written', () => {
    it('fails closed at continuation_start, then recovery closes the target and the boundary stays taken', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan, continuation: c } = await givenApprovedPlan(w, source)

      const result = await w.runtimeWith({ wrapStores: failingContinuationStart }).execute(plan)

      expect(result).toMatchObject({
        _tag: 'Failed',
        stage: 'continuation_start',
        targetRunId: c.runId,
        errorClass: 'store_IoFailed',
      })
      // The provider is built (its ids go into the target header) but never called.
      expect(w.requests.filter((r) => r.kind === 'continuation')).toEqual([])
      const target = await w.header(source.sessionId, c.runId)
      expect(target.status).toBe('created')
      expect(target.continuationSource?.sourceRunId).toBe(source.runId)
      expect(await w.ledger(source.sessionId, c.runId)).toEqual([])
      expect(w.lifecycle.map((e) => e.type)).not.toContain('execution_started')
      expect(w.lifecycle[w.lifecycle.length - 1]).toStrictEqual({
        type: 'execution_failed',
        sessionId: source.sessionId,
        sourceRunId: source.runId,
        targetRunId: c.runId,
        errorClass: 'store_IoFailed',
      })

      // Startup recovery: the recovered terminal row first, then the failed header.
      const writes: Array<string> = []
      const report = await w.runtimeWith({ wrapStores: recordingWrites(writes) }).recover()

      expect(writes).toEqual([`row ${c.runId} terminal failed`, `header ${c.runId} failed`])
      expect(report.actions).toContainEqual(expect.objectContaining({ runId: c.runId, action: 'recovered_terminal' }))
      const rows = await w.ledger(source.sessionId, c.runId)
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({
        status: 'failed',
        actions: { endInvocation: true, stateDelta: { recovered: true, failureClass: 'app_restarted' } },
      })
      expect(await w.header(source.sessionId, c.runId)).toMatchObject({
        status: 'failed',
        failureClass: 'app_restarted',
      })

      const again = await w.runtime.plan({ sessionId: source.sessionId, runId: source.runId })
      expect(again.rejectionReasons).toEqual(['continuation_already_exists'])

      // The closed target never reached a model, so the session's latest run continues from it,
      // replaying exactly the source's history — the session is not parked for good.
      const latest = await w.runtime.plan({ sessionId: source.sessionId })
      expect(latest).toMatchObject({ disposition: 'continue', sourceRunId: c.runId, sourceRuntimeEventHighWater: 1 })
      const resumed = await w.runtime.execute(latest)
      expect(resumed).toMatchObject({ _tag: 'Finished', sourceRunId: c.runId, status: 'completed' })
      const replayed = w.requests.filter((r) => r.kind === 'continuation')
      expect(replayed).toHaveLength(1)
      expect(replayed[0]?.request.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool'])
    })
  })

  describe('when the target header cannot be set running after the start row', () => {
    it('fails at run before any model call and stays recoverable', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan, continuation: c } = await givenApprovedPlan(w, source)

      const result = await w
        .runtimeWith({
          wrapStores: (s) => ({
            ...s,
            runs: {
              ...s.runs,
              update: (run, o) =>
                run.runId === c.runId && run.status === 'running'
                  ? TE.left(ioFailure('update'))
                  : s.runs.update(run, o),
            },
          }),
        })
        .execute(plan)

      expect(result).toMatchObject({ _tag: 'Failed', stage: 'run', errorClass: 'store_IoFailed' })
      expect(w.requests.filter((r) => r.kind === 'continuation')).toEqual([])
      expect((await w.header(source.sessionId, c.runId)).status).toBe('created')
      expect((await w.ledger(source.sessionId, c.runId)).map((r) => isContinuationStartEvent(r))).toEqual([true])

      await w.runtime.recover()

      const rows = await w.ledger(source.sessionId, c.runId)
      expect(rows.map((r) => (isTerminalEvent(r) ? r.status : 'start'))).toEqual(['start', 'failed'])
      expect(await w.header(source.sessionId, c.runId)).toMatchObject({
        status: 'failed',
        failureClass: 'app_restarted',
      })
    })
  })

  describe('when the target run id is taken between revalidation and the claim', () => {
    it('rejects with target_run_conflict before any model call', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan, continuation: c } = await givenApprovedPlan(w, source)
      const squatter = await squatterHeader(w, source, c.runId)

      const result = await w
        .runtimeWith({
          wrapStores: (s) => ({
            ...s,
            claims: {
              ...s.claims,
              claimBoundary: (claim, header) => async () => {
                expect(E.isRight(await s.runs.create(squatter)())).toBe(true)
                return s.claims.claimBoundary(claim, header)()
              },
            },
          }),
        })
        .execute(plan)

      expect(result).toMatchObject({ _tag: 'Rejected', codes: ['target_run_conflict'] })
      expect(w.lifecycle[w.lifecycle.length - 1]).toStrictEqual({
        type: 'execution_failed',
        sessionId: source.sessionId,
        sourceRunId: source.runId,
        targetRunId: c.runId,
        errorClass: 'target_run_conflict',
      })
      expect(w.requests.filter((r) => r.kind === 'continuation')).toEqual([])
      expect(await w.header(source.sessionId, c.runId)).toMatchObject({
        invocationId: 'inv-squat',
        status: 'completed',
      })
      expect(await w.ledger(source.sessionId, c.runId)).toEqual([])
    })
  })

  describe('when the boundary claim cannot be created', () => {
    it('fails closed at claim: no model call, no target run, no claim', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan, continuation: c } = await givenApprovedPlan(w, source)
      const runsBefore = await readdir(runsDir(w.dataDir, source.sessionId))

      const result = await w
        .runtimeWith({
          wrapStores: (s) => ({ ...s, claims: { ...s.claims, claimBoundary: () => TE.left(ioFailure('claim')) } }),
        })
        .execute(plan)

      expect(result).toMatchObject({
        _tag: 'Failed',
        stage: 'claim',
        targetRunId: c.runId,
        errorClass: 'store_IoFailed',
      })
      // The provider is built (its ids go into the target header) but never called.
      expect(w.requests.filter((r) => r.kind === 'continuation')).toEqual([])
      expect(await readdir(runsDir(w.dataDir, source.sessionId))).toEqual(runsBefore)
      expect(existsSync(w.runDirOf(source.sessionId, c.runId))).toBe(false)
      expect(existsSync(claimPath(w.dataDir, source.sessionId, source.runId, c.sourceRuntimeEventHighWater))).toBe(
        false,
      )

      // Nothing was taken: the same boundary can still be planned and continued.
      const retried = await w.runtime.resume({ sessionId: source.sessionId, runId: source.runId })
      expect(retried).toMatchObject({ _tag: 'Finished', status: 'completed' })
    })
  })
})
