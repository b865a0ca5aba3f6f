/**
 * `resolve` under real SIGKILLs and races, on JSONL, SQLite and PostgreSQL (Phase 2, K11–K12). A
 * protocol turn is killed with a `never_auto_retry` call dispatched (K3: its effect never ran), so the
 * plan parks `tool_outcome_unknown`. Then:
 * - K11: a child resolves the call (`not_applied`, the truth this test knows) and is killed at each of
 *   the adjudication run's writes. After recovery, two plans agree; before the response is committed
 *   the operation is still open and resolvable again at the new boundary, after it the adjudication
 *   stands. Either way resume then runs to the end, the effect never happened, and the source's
 *   header and rows are unchanged.
 * - K12: eight children resolve the same call at once: exactly one records it, the others refuse, and
 *   the store holds exactly one adjudication. A resolve racing a resume of a call that never started
 *   (which resume would run again): exactly one of them takes the boundary, and the call gets exactly
 *   one response.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type RuntimeEvent, isFunctionResponseEvent } from '@maka/events'
import type { StorePorts } from '@maka/stores'
import { describe, expect, it } from 'vitest'
import type { CrashPoint, ResolveResult } from '../../src/index.js'
import {
  CHILD_PROCESS_TEST_TIMEOUT_MS,
  type StoreChoice,
  type World,
  childBase,
  exists,
  makeWorld,
  restartedRuntime,
  spawnAgentChild,
  valueUnsafe,
} from './fixtures/agentChild.js'
import { EFFECT_LOG } from './fixtures/testTools.mjs'
import { STORE_KINDS, type StoreKind, fingerprint, untilOwnerGone, useStoreMatrix } from './fixtures/storeMatrix.js'

const { storeChoiceOf, openParentStores } = useStoreMatrix()

const effectLines = async (world: World): Promise<ReadonlyArray<string>> => {
  const path = join(world.workspaceDir, EFFECT_LOG)
  return (await exists(path)) ? (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '') : []
}

// Every response in the store, by operation id.
const responsesByOperation = async (stores: StorePorts, sessionId: string) => {
  const counts = new Map<string, ReadonlyArray<string>>()
  for (const entry of await valueUnsafe(stores.runs.list(sessionId))) {
    const { events } = await valueUnsafe(stores.events.read(sessionId, entry.runId))
    for (const event of events as ReadonlyArray<RuntimeEvent>) {
      const operationId = event.actions?.toolOutcome?.operationId ?? event.refs?.operationId
      if (!isFunctionResponseEvent(event) || operationId === undefined) continue
      counts.set(operationId, [...(counts.get(operationId) ?? []), event.actions?.toolOutcome?.settlementOrigin ?? '?'])
    }
  }
  return counts
}

interface Given {
  readonly world: World
  readonly store: StoreChoice | undefined
  readonly stores: StorePorts
  readonly host: ReturnType<typeof restartedRuntime>
  readonly sourceRunId: string
  readonly operationId: string
  readonly callId: string
}

// A protocol turn over `store` killed at `point` with one append_log call; recovered by a restarted host.
const givenKilledTurn = async (name: string, kind: StoreKind, point: CrashPoint): Promise<Given> => {
  const world = await makeWorld(name)
  const store = storeChoiceOf(kind, world)
  const child = spawnAgentChild({
    ...childBase(world),
    mode: 'turn',
    markerPath: world.path('turn.marker'),
    journal: true,
    testTools: true,
    turnScript: [{ toolCall: { name: 'append_log', args: { line: 'one' } } }, { text: 'Done.' }],
    crashPoint: point,
    ...(store === undefined ? {} : { store }),
  })
  await child.line(`at:${point}`)
  expect(await child.kill()).toBe('SIGKILL')
  expect(await exists(world.path('turn.marker'))).toBe(false)
  const host = restartedRuntime(world, {
    journal: true,
    testTools: true,
    continuationSteps: [{ text: 'All done.' }],
    ...(store === undefined ? {} : { stores: openParentStores(store)! }),
  })
  const stores = host.stores
  if (kind === 'postgres') await untilOwnerGone(stores, world.sessionId)
  await host.runtime.recover({ sessionIds: [world.sessionId] })
  const runs = await valueUnsafe(stores.runs.list(world.sessionId))
  expect(runs).toHaveLength(1)
  const sourceRunId = runs[0]!.runId
  return { world, store, stores, host, sourceRunId, operationId: `${sourceRunId}-o2`, callId: `${sourceRunId}-1` }
}

// -------------------------------------------------------------------------------------
// K11
// -------------------------------------------------------------------------------------

const K11: ReadonlyArray<{ readonly point: CrashPoint; readonly stands: boolean }> = [
  { point: 'after_run_created', stands: false },
  { point: 'after_continuation_start_committed', stands: false },
  { point: 'after_adjudication_committed', stands: true },
  { point: 'after_terminal_event_committed', stands: true },
  { point: 'after_terminal_header_committed', stands: true },
]

const K11_CASES = STORE_KINDS.flatMap((store) => K11.map((c) => ({ store, ...c })))

describe('resolve under SIGKILL at each adjudication write (K11)', () => {
  it.each(K11_CASES)(
    '$store: killed $point → the adjudication stands: $stands',
    async ({ store: kind, point, stands }) => {
      const given = await givenKilledTurn(
        `resolve-k11-${kind}-${point}`.replace(/_/g, '-'),
        kind,
        'after_tool_dispatch_committed',
      )
      const { world, store, stores, host, sourceRunId, operationId, callId } = given
      const parked = await host.runtime.plan({ sessionId: world.sessionId })
      expect(parked.rejectionReasons).toEqual(['tool_outcome_unknown'])
      const before = await fingerprint(stores, world, kind, sourceRunId)

      const resolver = spawnAgentChild({
        ...childBase(world),
        mode: 'resolve',
        markerPath: world.path('resolve.marker'),
        journal: true,
        testTools: true,
        crashPoint: point,
        resolve: { target: { callId }, verdict: 'not_applied' },
        ...(store === undefined ? {} : { store }),
      })
      await resolver.line(`at:${point}`)
      expect(await resolver.kill()).toBe('SIGKILL')
      expect(await exists(world.path('resolve.marker'))).toBe(false)
      if (kind === 'postgres') await untilOwnerGone(stores, world.sessionId)
      await host.runtime.recover({ sessionIds: [world.sessionId] })

      const first = await host.runtime.plan({ sessionId: world.sessionId })
      const second = await host.runtime.plan({ sessionId: world.sessionId })
      const { continuation: c1, ...p1 } = first
      const { continuation: c2, ...p2 } = second
      expect(p2).toEqual(p1)
      expect(c2?.runtimeContext).toEqual(c1?.runtimeContext)
      const runs = (await valueUnsafe(stores.runs.list(world.sessionId))).map((entry) => entry.runId)
      expect(runs).toHaveLength(2)
      const adjudicationRunId = runs.find((runId) => runId !== sourceRunId)!

      if (stands) {
        // The response is committed: the call is settled, and the plan continues from the adjudication run.
        expect(first).toMatchObject({ disposition: 'continue', sourceRunId: adjudicationRunId })
        const again = await host.runtime.resolve({
          sessionId: world.sessionId,
          target: { callId },
          verdict: 'failed',
          actor: 'cli',
        })
        expect(again).toMatchObject({ _tag: 'Refused', codes: ['resolve_call_settled'] })
      } else {
        // Nothing of the verdict was committed: the operation is open at the new boundary, and resolvable.
        expect(first.rejectionReasons).toEqual(['tool_outcome_unknown'])
        expect(first.openToolOperations?.map((op) => op.operationId)).toEqual([operationId])
        const again = await host.runtime.resolve({
          sessionId: world.sessionId,
          target: { operationId },
          verdict: 'not_applied',
          actor: 'cli',
        })
        expect(again).toMatchObject({ _tag: 'Resolved', operationId, sourceRunId: adjudicationRunId })
      }
      expect([...(await responsesByOperation(stores, world.sessionId)).get(operationId)!]).toEqual([
        'operator_adjudication',
      ])
      const resumed = await host.runtime.resume({ sessionId: world.sessionId })
      expect(resumed).toMatchObject({ _tag: 'Finished', status: 'completed' })
      expect(await effectLines(world)).toEqual([])
      expect(await fingerprint(stores, world, kind, sourceRunId)).toEqual(before)
      expect(host.providerRequests.filter((r) => r.startsWith('continuation'))).toHaveLength(1)
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})

// -------------------------------------------------------------------------------------
// K12
// -------------------------------------------------------------------------------------

const RESOLVERS = 8
// Losers refuse with the one-claim rule (the claim is taken, or the call is settled by then) or, while
// the winner holds the session, with the planner's early exit 3 (a live owner).
const LOSER_CODES: ReadonlyArray<string> = [
  'continuation_claim_conflict',
  'resolve_call_settled',
  'session_owner_alive',
]

describe('racing resolvers and a resolve racing a resume (K12)', () => {
  it.each(STORE_KINDS)(
    '%s: of eight resolvers exactly one records the verdict, and the store holds one adjudication',
    async (kind) => {
      const { world, store, stores, sourceRunId, operationId, callId } = await givenKilledTurn(
        `resolve-race-${kind}`,
        kind,
        'after_tool_dispatch_committed',
      )
      const before = await fingerprint(stores, world, kind, sourceRunId)
      const goPath = world.path('go')
      const racers = Array.from({ length: RESOLVERS }, (_, i) =>
        spawnAgentChild({
          ...childBase(world),
          mode: 'resolve',
          markerPath: world.path(`resolver-${i}.marker`),
          journal: true,
          testTools: true,
          goPath,
          resolve: { target: { callId }, verdict: i % 2 === 0 ? 'not_applied' : 'failed' },
          ...(store === undefined ? {} : { store }),
        }),
      )
      await Promise.all(racers.map((r) => r.line('ready:')))
      await writeFile(goPath, 'go\n')
      const results = await Promise.all(
        racers.map(async (racer) => {
          const line = await racer.line('result:')
          const exit = await racer.exited
          if (exit.code !== 0) throw new Error(`a resolver exited with ${JSON.stringify(exit)}: ${racer.stderr()}`)
          return (JSON.parse(line) as { result: ResolveResult }).result
        }),
      )
      const outcomes = results.map((r) => (r._tag === 'Refused' ? `Refused(${r.codes.join(',')})` : r._tag)).join(' | ')
      console.info(`${kind}: ${outcomes}`)
      expect(
        results.filter((r) => r._tag === 'Resolved'),
        outcomes,
      ).toHaveLength(1)
      for (const r of results) {
        if (r._tag === 'Resolved') continue
        expect(r._tag, outcomes).toBe('Refused')
        if (r._tag === 'Refused') for (const code of r.codes) expect(LOSER_CODES, outcomes).toContain(code)
      }
      expect([...(await responsesByOperation(stores, world.sessionId)).get(operationId)!]).toEqual([
        'operator_adjudication',
      ])
      expect(await valueUnsafe(stores.runs.list(world.sessionId))).toHaveLength(2)
      expect(await fingerprint(stores, world, kind, sourceRunId)).toEqual(before)
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )

  it.each(STORE_KINDS)(
    '%s: a resolve racing a resume of a call that never started — one of them takes the boundary',
    async (kind) => {
      // K1: the call is committed and never dispatched, so resume would run it again (reissue).
      const { world, store, stores, sourceRunId, operationId, callId, host } = await givenKilledTurn(
        `resolve-vs-resume-${kind}`,
        kind,
        'after_function_call',
      )
      expect((await host.runtime.plan({ sessionId: world.sessionId })).disposition).toBe('continue')
      const before = await fingerprint(stores, world, kind, sourceRunId)
      const goPath = world.path('go')
      const resolver = spawnAgentChild({
        ...childBase(world),
        mode: 'resolve',
        markerPath: world.path('resolver.marker'),
        journal: true,
        testTools: true,
        goPath,
        resolve: { target: { callId }, verdict: 'not_applied' },
        ...(store === undefined ? {} : { store }),
      })
      const resumer = spawnAgentChild({
        ...childBase(world),
        mode: 'resume',
        sourceRunId,
        markerPath: world.path('resumer.marker'),
        journal: true,
        testTools: true,
        goPath,
        continuationSteps: [{ text: 'All done.' }],
        ...(store === undefined ? {} : { store }),
      })
      await Promise.all([resolver.line('ready:'), resumer.line('recovered:')])
      await writeFile(goPath, 'go\n')
      const [resolved, resumed] = await Promise.all(
        [resolver, resumer].map(async (child) => {
          const line = await child.line('result:')
          const exit = await child.exited
          if (exit.code !== 0) throw new Error(`a racer exited with ${JSON.stringify(exit)}: ${child.stderr()}`)
          return (JSON.parse(line) as { result: { _tag: string } }).result
        }),
      )
      const outcome = `${JSON.stringify(resolved)} | ${JSON.stringify(resumed)}`
      console.info(`${kind}: ${outcome}`)
      const winners = [resolved?._tag === 'Resolved', resumed?._tag === 'Finished'].filter(Boolean)
      expect(winners, outcome).toHaveLength(1)
      // One run holds the source's boundary, and the call has exactly one response.
      const headers = (await valueUnsafe(stores.runs.list(world.sessionId))).flatMap((entry) =>
        'header' in entry ? [entry.header] : [],
      )
      expect(
        headers.filter((h) => h.continuationSource?.sourceRunId === sourceRunId),
        outcome,
      ).toHaveLength(1)
      const responses = (await responsesByOperation(stores, world.sessionId)).get(operationId) ?? []
      expect(responses, outcome).toHaveLength(1)
      expect(responses[0], outcome).toBe(resolved?._tag === 'Resolved' ? 'operator_adjudication' : 'reissue_t2')
      expect((await effectLines(world)).length, outcome).toBe(resolved?._tag === 'Resolved' ? 0 : 1)
      expect(await fingerprint(stores, world, kind, sourceRunId)).toEqual(before)
    },
    CHILD_PROCESS_TEST_TIMEOUT_MS,
  )
})
