/**
 * Several OS processes race to continue ONE boundary (docs/contract.md §3: "Session ownership", "Durable
 * claim"; seed: "repeated, stale, and concurrent continuation claims"). Each child plans while the
 * boundary is free, waits at a barrier, then executes: exactly one continuation may come of it, and
 * only its process may ever call the provider.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { AgentRun, ContinuationClaim } from '@maka/events'
import type { ContinuationPlan } from '@maka/planner'
import { type ExpectStatic, afterAll, describe, it } from 'vitest'
import type { ContinuationResult } from '../../src/index.js'
import {
  childBase,
  interruptTurnAt,
  CHILD_PROCESS_TEST_TIMEOUT_MS,
  killAllChildren,
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

const RACERS = 4
const SOURCE_HIGH_WATER = 4
const CONFLICT_CODES: ReadonlyArray<string> = [
  'continuation_claim_conflict',
  'target_run_conflict',
  'session_owner_alive',
]
// When two racers get past the owner lock together, a loser can also revalidate while the winner's run
// is open (background work) or while its run folder exists before its run.json is linked — then the
// host facts cannot be observed and revalidation fails closed with every facts-based code.
const CONCURRENT_LOSER_CODES: ReadonlyArray<string> = [
  ...CONFLICT_CODES,
  'background_operation_started',
  'source_cwd_changed',
  'workspace_identity_changed',
  'tool_catalog_changed',
]
// The winner's model waits before answering, so the losers execute while it still holds the session.
const CONTINUATION_STEPS = [{ delayMs: 400 }, { text: 'Resumed after the interruption.' }]

interface RacerReport {
  readonly result: ContinuationResult
  readonly providerCalled: boolean
}

interface RaceOutcome {
  readonly sourceRunId: string
  readonly reports: ReadonlyArray<RacerReport>
  readonly outcomes: string
  readonly headers: ReadonlyArray<AgentRun>
  readonly claimFiles: ReadonlyArray<string>
  readonly claims: ReadonlyArray<ContinuationClaim>
  readonly sourceAfterRecovery: unknown
  readonly sourceNow: unknown
  readonly planAgain: ContinuationPlan
  readonly providerRequests: ReadonlyArray<string>
}

/**
 * How the session's owner.lock stands when the racers execute: free; `stale` — the lock of the
 * killed turn is put back, so every racer finds a dead owner's lock to take over; `bypassed` — every
 * racer's lock port grants the lock, so only the boundary claim stands between them.
 */
type OwnerLockSetting = 'free' | 'stale' | 'bypassed'

/** Interrupts and recovers a source run, then lets RACERS children plan it, meet at a barrier and execute. */
const raceOnOneBoundary = async (name: string, ownerLock: OwnerLockSetting): Promise<RaceOutcome> => {
  const world = await makeWorld(name)
  const sourceRunId = await interruptTurnAt(world, 'after_tool_response')
  const lockPath = join(world.dataDir, 'sessions', world.sessionId, 'owner.lock')
  const staleLock = await readFile(lockPath)
  const host = restartedRuntime(world)
  const recovery = await host.runtime.recover()
  if (recovery.actions.length !== 1 || recovery.actions[0]?.action !== 'recovered_terminal') {
    throw new Error(`unexpected recovery: ${JSON.stringify(recovery.actions)}`)
  }
  const sourceAfterRecovery = await runDigests(world, sourceRunId)
  if (ownerLock === 'stale') await writeFile(lockPath, staleLock)

  const goPath = world.path('go')
  const racers = Array.from({ length: RACERS }, (_, i) =>
    spawnAgentChild({
      ...childBase(world),
      mode: 'race',
      sourceRunId,
      goPath,
      continuationSteps: CONTINUATION_STEPS,
      bypassOwnerLock: ownerLock === 'bypassed',
      markerPath: world.path(`racer-${i}.marker`),
    }),
  )
  // Every racer approved its own plan while the boundary was still free.
  const planned = await Promise.all(racers.map((r) => r.line('planned:')))
  if (planned.some((disposition) => disposition !== 'continue')) throw new Error(`planned: ${planned.join(', ')}`)
  await writeFile(goPath, 'go\n')

  const reports = await Promise.all(
    racers.map(async (racer) => {
      const exit = await racer.exited
      if (exit.code !== 0) throw new Error(`a racer exited with ${JSON.stringify(exit)}: ${racer.stderr()}`)
      return JSON.parse(await racer.line('result:')) as RacerReport
    }),
  )
  const outcomes = reports
    .map((r) => (r.result._tag === 'Rejected' ? `Rejected(${r.result.codes.join(',')})` : r.result._tag))
    .join(' | ')
  console.info(`${name}: ${outcomes}`)

  const listed = await valueUnsafe(host.stores.runs.list(world.sessionId))
  const headers = listed.map((entry): AgentRun => {
    if (!('header' in entry)) throw new Error(`run ${entry.runId} is unreadable`)
    return entry.header
  })
  return {
    sourceRunId,
    reports,
    outcomes,
    headers,
    claimFiles: await readdir(join(world.dataDir, 'sessions', world.sessionId, 'claims')),
    claims: await valueUnsafe(host.stores.claims.list(world.sessionId)),
    sourceAfterRecovery,
    sourceNow: await runDigests(world, sourceRunId),
    planAgain: await host.runtime.plan({ sessionId: world.sessionId, runId: sourceRunId }),
    providerRequests: host.providerRequests,
  }
}

const thenExactlyOneContinuation = (
  race: RaceOutcome,
  allowedLoserCodes: ReadonlyArray<string>,
  expect: ExpectStatic,
) => {
  const winners = race.reports.filter((r) => r.result._tag === 'Finished')
  expect(winners, race.outcomes).toHaveLength(1)
  const winner = winners[0]?.result
  if (winner?._tag !== 'Finished') throw new Error('no winner')
  expect(winner.status).toBe('completed')
  for (const report of race.reports) {
    // Only the process that won the claim ever reached its provider.
    expect(report.providerCalled, race.outcomes).toBe(report.result._tag === 'Finished')
    if (report.result._tag === 'Finished') continue
    expect(report.result._tag, race.outcomes).toBe('Rejected')
    if (report.result._tag !== 'Rejected') continue
    expect(
      report.result.codes.some((code) => CONFLICT_CODES.includes(code)),
      race.outcomes,
    ).toBe(true)
    for (const code of report.result.codes) expect(allowedLoserCodes, race.outcomes).toContain(code)
  }

  // One run holds the boundary, one claim file names it, and nothing else was created.
  const holders = race.headers.filter((h) => h.continuationSource?.sourceRunId === race.sourceRunId)
  expect(holders.map((h) => h.runId)).toEqual([winner.targetRunId])
  expect(holders[0]?.continuationSource?.sourceRuntimeEventHighWater).toBe(SOURCE_HIGH_WATER)
  expect(race.headers.map((h) => h.runId).sort()).toEqual([race.sourceRunId, winner.targetRunId].sort())
  expect(race.claimFiles).toEqual([`${race.sourceRunId}@${SOURCE_HIGH_WATER}.json`])
  expect(race.claims.map((c) => c.targetRunId)).toEqual([winner.targetRunId])

  expect(race.sourceNow).toEqual(race.sourceAfterRecovery)
  expect(race.planAgain.rejectionReasons).toEqual(['continuation_already_exists'])
  expect(race.providerRequests).toEqual([])
}

describe('makeFileRuntime across processes', { timeout: CHILD_PROCESS_TEST_TIMEOUT_MS }, () => {
  describe('when several processes plan the same boundary and execute at once', () => {
    it('creates exactly one continuation, and only its process calls the provider', async ({ expect }) => {
      const race = await raceOnOneBoundary('claim-race', 'free')
      thenExactlyOneContinuation(race, CONFLICT_CODES, expect)
    })
  })

  describe('when they all find a stale owner.lock to take over', () => {
    it('the boundary claim still lets exactly one of them continue', async ({ expect }) => {
      const race = await raceOnOneBoundary('claim-race-stale-lock', 'stale')
      // Two racers may both take the stale lock over: the store's documented residual race.
      thenExactlyOneContinuation(race, CONCURRENT_LOSER_CODES, expect)
    })
  })

  describe('when no owner.lock stands between them at all', () => {
    it('the exclusive boundary claim alone lets exactly one of them continue', async ({ expect }) => {
      const race = await raceOnOneBoundary('claim-race-no-lock', 'bypassed')
      expect(race.outcomes).not.toContain('session_owner_alive')
      thenExactlyOneContinuation(race, CONCURRENT_LOSER_CODES, expect)
    })
  })
})
