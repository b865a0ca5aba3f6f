/**
 * Repeated, stale, concurrent and abandoned claims of one boundary: whatever the interleaving,
 * exactly one continuation run ever holds a boundary, and nothing else reaches a model.
 */
import { existsSync } from 'node:fs'
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { describe, expect, it } from 'vitest'
import { isTerminalEvent } from '@maka/events'
import { claimPath, claimsDir, makeFileStores, type FileStores } from '@maka/store-jsonl'
import type { ContinuationResult } from '../src/index.js'
import type { Continuation } from '@maka/planner'
import {
  givenApprovedPlan,
  givenInterruptedRun,
  trackWorlds,
  ioFailure,
  snapshotTree,
  type InterruptedRun,
  type World,
} from './support/world.js'

const world = trackWorlds()

/** The continuation runs (headers with a continuationSource) of a session. */
const continuationRuns = async (w: World, s: InterruptedRun) => {
  const listed = await w.stores.runs.list(s.sessionId)()
  if (E.isLeft(listed)) throw new Error(listed.left.message)
  return listed.right.flatMap((entry) =>
    'header' in entry && entry.header.continuationSource !== undefined ? [entry.header] : [],
  )
}

const claimFiles = async (w: World, s: InterruptedRun) => readdir(claimsDir(w.dataDir, s.sessionId)).catch(() => [])

const split = (results: ReadonlyArray<ContinuationResult>) => ({
  finished: results.filter((r) => r._tag === 'Finished'),
  rejected: results.flatMap((r) => (r._tag === 'Rejected' ? [r] : [])),
})

/** Writes the claim file a crash between the two exclusive creates leaves behind. */
const givenAbandonedClaim = async (w: World, source: InterruptedRun, c: Continuation) => {
  const path = claimPath(w.dataDir, source.sessionId, source.runId, c.sourceRuntimeEventHighWater)
  await mkdir(dirname(path), { recursive: true })
  await writeFile(
    path,
    JSON.stringify({
      sessionId: source.sessionId,
      sourceInvocationId: c.sourceInvocationId,
      sourceRunId: c.sourceRunId,
      sourceTurnId: c.sourceTurnId,
      sourceRuntimeEventHighWater: c.sourceRuntimeEventHighWater,
      targetInvocationId: c.invocationId,
      targetRunId: c.runId,
      targetTurnId: c.turnId,
      claimedAt: '2026-01-01T00:00:00.000Z',
    }),
  )
}

describe('execute with repeated, stale and concurrent claims', () => {
  describe('when the same approved plan is executed twice', () => {
    it('rejects the second with continuation_claim_conflict and target_run_conflict', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan, continuation: c } = await givenApprovedPlan(w, source)

      const first = await w.runtime.execute(plan)
      const requestsAfterFirst = w.requests.length
      const second = await w.runtime.execute(plan)

      expect(first).toMatchObject({ _tag: 'Finished', targetRunId: c.runId })
      // The first run now holds the boundary in its header (claim conflict) and it *is* the plan's
      // target id (target conflict): a stale plan fails both checks.
      expect(second).toMatchObject({ _tag: 'Rejected', codes: ['continuation_claim_conflict', 'target_run_conflict'] })
      expect(w.requests.length).toBe(requestsAfterFirst)
      expect((await continuationRuns(w, source)).map((h) => h.runId)).toEqual([c.runId])
      expect((await w.header(source.sessionId, c.runId)).status).toBe('completed')
    })
  })

  describe('when a second plan for the boundary is executed after the first finished', () => {
    it('rejects it with continuation_claim_conflict only (its own target id is free)', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan: a } = await givenApprovedPlan(w, source)
      const { plan: b, continuation: cb } = await givenApprovedPlan(w, source)

      expect(await w.runtime.execute(a)).toMatchObject({ _tag: 'Finished' })
      const stale = await w.runtime.execute(b)

      expect(stale).toMatchObject({ _tag: 'Rejected', codes: ['continuation_claim_conflict'] })
      expect(existsSync(w.runDirOf(source.sessionId, cb.runId))).toBe(false)
    })
  })

  describe('when two plans for one boundary run concurrently in one runtime', () => {
    it('finishes exactly one; the other is refused by the in-process guard', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan: a } = await givenApprovedPlan(w, source)
      const { plan: b } = await givenApprovedPlan(w, source)

      const results = await Promise.all([w.runtime.execute(a), w.runtime.execute(b)])

      const { finished, rejected } = split(results)
      expect(finished).toHaveLength(1)
      expect(rejected).toHaveLength(1)
      // execute marks the boundary in flight before its first await, so the second claim of the
      // same session is named for what it is.
      expect(rejected[0]?.codes).toEqual(['continuation_in_progress'])
      expect(await continuationRuns(w, source)).toHaveLength(1)
      expect(await claimFiles(w, source)).toHaveLength(1)
      expect(w.requests.filter((r) => r.kind === 'continuation').map((r) => r.runId)).toEqual(
        finished.map((r) => (r._tag === 'Finished' ? r.targetRunId : '')),
      )
    })

    it('refuses a normal turn while a continuation is active', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan } = await givenApprovedPlan(w, source)
      w.script([{ delayMs: 50 }, { text: 'slow' }])

      const [continued, turn] = await Promise.all([
        w.runtime.execute(plan),
        w.runtime.runTurn({ cwd: w.workspace, prompt: 'meanwhile' }),
      ])

      expect(continued).toMatchObject({ _tag: 'Finished' })
      expect(turn).toMatchObject({ _tag: 'Refused', code: 'another_run_active' })
    })
  })

  describe('when two runtimes over one data dir race for the boundary', () => {
    it('leaves exactly one continuation run', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const one = w.runtimeWith({ stores: makeFileStores(w.dataDir) })
      const two = w.runtimeWith({ stores: makeFileStores(w.dataDir) })
      const { plan: a } = await givenApprovedPlan(w, source, one)
      const { plan: b } = await givenApprovedPlan(w, source, two)

      const results = await Promise.all([one.execute(a), two.execute(b)])

      const { finished, rejected } = split(results)
      expect(finished).toHaveLength(1)
      expect(rejected).toHaveLength(1)
      // Either the loser found the session owned (both runtimes are this process, and a lock is never
      // re-entered) or, had it come later, the boundary held.
      expect(['session_owner_alive', 'continuation_claim_conflict']).toContain(rejected[0]?.codes[0])
      expect(await continuationRuns(w, source)).toHaveLength(1)
      expect(await claimFiles(w, source)).toHaveLength(1)
      expect(w.requests.filter((r) => r.kind === 'continuation').map((r) => r.runId)).toHaveLength(1)
    })

    it('still lets exactly one through when both pass revalidation before either claims', async () => {
      // Owner locks are per host; here the lock port is wrapped to grant both, and the claim port
      // waits until both runtimes arrived, so only the exclusive boundary claim can decide.
      const w = await world()
      const source = await givenInterruptedRun(w)
      let arrived = 0
      let release: () => void = () => undefined
      const bothArrived = new Promise<void>((resolve) => {
        release = resolve
      })
      const racing = (s: FileStores): FileStores => ({
        ...s,
        ownerLocks: { ...s.ownerLocks, acquire: () => TE.right(undefined), release: () => TE.right(undefined) },
        claims: {
          ...s.claims,
          claimBoundary: (claim, header) => async () => {
            arrived += 1
            if (arrived === 2) release()
            await Promise.race([bothArrived, new Promise((r) => setTimeout(r, 30_000))])
            return s.claims.claimBoundary(claim, header)()
          },
        },
      })
      const one = w.runtimeWith({ stores: makeFileStores(w.dataDir), wrapStores: racing })
      const two = w.runtimeWith({ stores: makeFileStores(w.dataDir), wrapStores: racing })
      const { plan: a } = await givenApprovedPlan(w, source, one)
      const { plan: b } = await givenApprovedPlan(w, source, two)

      const results = await Promise.all([one.execute(a), two.execute(b)])

      expect(arrived).toBe(2)
      const { finished, rejected } = split(results)
      expect(finished).toHaveLength(1)
      expect(rejected.map((r) => r.codes)).toEqual([['continuation_claim_conflict']])
      // The loser is reported like any other refused execution, whichever check caught it.
      const winner = finished[0]?._tag === 'Finished' ? finished[0].targetRunId : ''
      const loser = [a, b].map((p) => p.continuation?.runId).find((id) => id !== winner)
      expect(w.lifecycle.filter((e) => e.type === 'execution_failed')).toStrictEqual([
        {
          type: 'execution_failed',
          sessionId: source.sessionId,
          sourceRunId: source.runId,
          targetRunId: loser,
          errorClass: 'continuation_claim_conflict',
        },
      ])
      expect(await continuationRuns(w, source)).toHaveLength(1)
      expect(await claimFiles(w, source)).toHaveLength(1)
      expect(w.requests.filter((r) => r.kind === 'continuation').map((r) => r.runId)).toHaveLength(1)
    })
  })

  describe('when a claim was written but its target run never appeared', () => {
    it('recovery closes it as continuation_abandoned_before_start; a second pass changes nothing', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan, continuation: c } = await givenApprovedPlan(w, source)
      await givenAbandonedClaim(w, source, c)
      expect(existsSync(w.runDirOf(source.sessionId, c.runId))).toBe(false)

      const report = await w.runtime.recover()

      expect(report.actions).toContainEqual(
        expect.objectContaining({ sessionId: source.sessionId, runId: c.runId, action: 'continuation_abandoned' }),
      )
      const target = await w.header(source.sessionId, c.runId)
      expect(target).toMatchObject({
        runId: c.runId,
        invocationId: c.invocationId,
        turnId: c.turnId,
        status: 'failed',
        failureClass: 'continuation_abandoned_before_start',
        parentRunId: source.runId,
        continuationSource: {
          sourceInvocationId: c.sourceInvocationId,
          sourceRunId: c.sourceRunId,
          sourceTurnId: c.sourceTurnId,
          sourceRuntimeEventHighWater: c.sourceRuntimeEventHighWater,
        },
      })
      const rows = await w.ledger(source.sessionId, c.runId)
      expect(rows).toHaveLength(1)
      expect(rows.filter(isTerminalEvent)).toHaveLength(1)
      expect(rows[0]).toMatchObject({
        status: 'failed',
        content: { kind: 'error', code: 'continuation_abandoned_before_start' },
        actions: { stateDelta: { recovered: true, failureClass: 'continuation_abandoned_before_start' } },
      })

      const replanned = await w.runtime.plan({ sessionId: source.sessionId, runId: source.runId })
      expect(replanned.rejectionReasons).toEqual(['continuation_already_exists'])
      expect(await w.runtime.execute(plan)).toMatchObject({ _tag: 'Rejected' })
      expect(w.requests.filter((r) => r.kind === 'continuation')).toEqual([])

      const before = await snapshotTree(w.dataDir)
      const second = await w.runtime.recover()
      expect(second.actions).toEqual([])
      expect(await snapshotTree(w.dataDir)).toEqual(before)
    })

    it('leaves a session that resumes from the closed target (decisions #9): the target keeps the workspace identity', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { continuation: c } = await givenApprovedPlan(w, source)
      await givenAbandonedClaim(w, source, c)

      await w.runtime.recover({ sessionIds: [source.sessionId] })

      const sourceHeader = await w.header(source.sessionId, source.runId)
      expect(sourceHeader.workspaceIdentity).toBeDefined()
      expect((await w.header(source.sessionId, c.runId)).workspaceIdentity).toBe(sourceHeader.workspaceIdentity)
      // The "latest" entry picks the closed target and continues from its own boundary.
      const latest = await w.runtime.plan({ sessionId: source.sessionId })
      expect(latest.rejectionReasons).toEqual([])
      expect(latest).toMatchObject({ disposition: 'continue', sourceRunId: c.runId, sourceRuntimeEventHighWater: 1 })

      w.script([{ text: 'Continued after the abandoned claim.' }])
      const resumed = await w.runtime.resume({ sessionId: source.sessionId })

      expect(resumed).toMatchObject({ _tag: 'Finished' })
      const fresh = (await continuationRuns(w, source)).filter((h) => h.runId !== c.runId)
      expect(fresh).toHaveLength(1)
      expect(fresh[0]).toMatchObject({
        status: 'completed',
        workspaceIdentity: sourceHeader.workspaceIdentity,
        continuationSource: { sourceRunId: c.runId, sourceRuntimeEventHighWater: 1 },
      })
      expect(w.requests.filter((r) => r.kind === 'continuation').map((r) => r.runId)).toEqual([fresh[0]?.runId])
    })

    it('leaves the claim untouched when the source header cannot be read (no target without its identity)', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { continuation: c } = await givenApprovedPlan(w, source)
      await givenAbandonedClaim(w, source, c)
      await writeFile(w.headerPathOf(source.sessionId, source.runId), '{"runId": broken')

      const report = await w.runtime.recover({ sessionIds: [source.sessionId] })

      expect(report.actions).toContainEqual(
        expect.objectContaining({ sessionId: source.sessionId, runId: c.runId, action: 'left_untouched' }),
      )
      expect(report.actions.map((a) => a.action)).not.toContain('continuation_abandoned')
      expect(existsSync(w.runDirOf(source.sessionId, c.runId))).toBe(false)
      expect(await claimFiles(w, source)).toHaveLength(1)
    })

    it('does not report the target closed when its terminal row could not be written', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { continuation: c } = await givenApprovedPlan(w, source)
      await givenAbandonedClaim(w, source, c)
      const failingTarget = (s: FileStores): FileStores => ({
        ...s,
        events: {
          ...s.events,
          append: (sessionId, runId, event, o) =>
            runId === c.runId ? TE.left(ioFailure('append')) : s.events.append(sessionId, runId, event, o),
        },
      })

      const report = await w.runtimeWith({ wrapStores: failingTarget }).recover()

      const forTarget = report.actions.filter((a) => a.runId === c.runId)
      expect(forTarget.map((a) => a.action)).not.toContain('continuation_abandoned')
      expect(forTarget.map((a) => a.action)).toContain('left_untouched')
      // No terminal header without its terminal event.
      expect(await w.header(source.sessionId, c.runId)).toMatchObject({ status: 'created' })
      expect(await w.ledger(source.sessionId, c.runId)).toEqual([])
      // The boundary is taken either way.
      const replanned = await w.runtime.plan({ sessionId: source.sessionId, runId: source.runId })
      expect(replanned.rejectionReasons).toEqual(['continuation_already_exists'])
    })
  })
})
