/**
 * `runtime.resume`, the one resume use case every host calls: plan, resolve the continuation's model
 * from the source header planning read, execute. The resolver is asked after planning and before the
 * guard, the owner lock and the claim, so a model that cannot be built spends nothing.
 */
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { AgentRun } from '@maka/events'
import type { Continuation } from '@maka/planner'
import { makeScriptedProvider } from '@maka/providers'
import type { ContinuationProviderResolver, ResolvedProvider, ResumeObserver } from '../src/index.js'
import { type InterruptedRun, type World, givenInterruptedRun, snapshotTree, trackWorlds } from './support/world.js'

const world = trackWorlds()

/** What a resolver was asked, and what the data dir held when it was asked. */
interface ResolverCall {
  readonly source: AgentRun
  readonly continuation: Continuation
  readonly tree: Record<string, string>
}

/** A resolver that records its calls into `steps` and answers `answer` (a scripted model by default). */
const recordingResolver = (
  w: World,
  steps: Array<string>,
  calls: Array<ResolverCall>,
  answer: (resolved: ResolvedProvider) => E.Either<{ readonly message: string }, ResolvedProvider> = E.right,
): ContinuationProviderResolver => {
  return async ({ source, continuation }) => {
    steps.push('resolve')
    calls.push({ source, continuation, tree: await snapshotTree(w.dataDir) })
    return answer({
      providerFor: (run) => {
        steps.push(`provider ${run.kind} ${run.runId}`)
        return makeScriptedProvider({ steps: [], toolCallIdPrefix: run.runId })
      },
    })
  }
}

/** An observer that records each hook into `steps`. */
const recordingObserver = (steps: Array<string>): ResumeObserver => ({
  onPlanned: (plan) => {
    steps.push(`planned ${plan.disposition}`)
  },
  onProviderNote: (note) => {
    steps.push(`note ${note}`)
  },
  onExecuting: () => {
    steps.push('executing')
  },
})

const givenResumable = async (): Promise<{ readonly w: World; readonly source: InterruptedRun }> => {
  const w = await world()
  return { w, source: await givenInterruptedRun(w) }
}

describe('resume', () => {
  describe('when the plan continues and the host gives a provider resolver', () => {
    it('asks it with the source header after planning and before the owner lock and the claim', async () => {
      const { w, source } = await givenResumable()
      const sourceHeader = await w.header(source.sessionId, source.runId)
      const before = await snapshotTree(w.dataDir)
      const steps: Array<string> = []
      const calls: Array<ResolverCall> = []
      const runtime = w.runtimeWith({ resolveContinuationProvider: recordingResolver(w, steps, calls) })

      const result = await runtime.resume({ sessionId: source.sessionId }, recordingObserver(steps))

      const asked = calls[0]
      expect(calls).toHaveLength(1)
      expect(asked?.source).toStrictEqual(sourceHeader)
      expect(asked?.continuation.sourceRunId).toBe(source.runId)
      // Nothing of the continuation existed yet: no owner.lock, no claim, no target run.
      expect(asked?.tree).toEqual(before)
      const targetRunId = asked?.continuation.runId ?? 'missing'
      expect(steps).toEqual(['planned continue', 'resolve', 'executing', `provider continuation ${targetRunId}`])
      expect(result).toMatchObject({ _tag: 'Finished', status: 'completed', sourceRunId: source.runId, targetRunId })
      // The resolved provider served the continuation; the runtime's own `providerFor` was not asked.
      expect(w.providersMade.filter((p) => p.kind === 'continuation')).toEqual([])
    })
  })

  describe('when the resolver says which other model it chose', () => {
    it('hands the note over after the plan and before the execution', async () => {
      const { w, source } = await givenResumable()
      const steps: Array<string> = []
      const runtime = w.runtimeWith({
        resolveContinuationProvider: recordingResolver(w, steps, [], (resolved) =>
          E.right({ ...resolved, note: 'Resuming with another model.' }),
        ),
      })

      const result = await runtime.resume({ sessionId: source.sessionId }, recordingObserver(steps))

      expect(result).toMatchObject({ _tag: 'Finished', status: 'completed' })
      expect(steps.slice(0, 4)).toEqual([
        'planned continue',
        'resolve',
        'note Resuming with another model.',
        'executing',
      ])
    })
  })

  describe('when the resolver names the permission mode the source run recorded', () => {
    it('runs the continuation under that mode and records it, whatever the runtime default', async () => {
      const w = await world({ permissionMode: 'allow' })
      const source = await givenInterruptedRun(w)
      expect((await w.header(source.sessionId, source.runId)).permissionMode).toBe('allow')
      let target = ''
      const runtime = w.runtimeWith({
        permissionMode: 'deny',
        resolveContinuationProvider: async () =>
          E.right({
            providerFor: (run) => {
              target = run.runId
              return makeScriptedProvider({
                steps: [{ toolCall: { name: 'mutate', args: {} } }, { text: 'done' }],
                toolCallIdPrefix: run.runId,
              })
            },
            permissionMode: 'allow',
          }),
      })

      const result = await runtime.resume({ sessionId: source.sessionId })

      expect(result).toMatchObject({ _tag: 'Finished', status: 'completed' })
      expect(w.runsOf('mutate')).toBe(1)
      expect((await w.header(source.sessionId, target)).permissionMode).toBe('allow')
    })
  })

  describe('when the resolver cannot build the model', () => {
    it('returns ProviderUnavailable, writes nothing and leaves the boundary to a later resume', async () => {
      const { w, source } = await givenResumable()
      const before = await snapshotTree(w.dataDir)
      const lifecycleBefore = w.lifecycle.length
      const steps: Array<string> = []
      const runtime = w.runtimeWith({
        resolveContinuationProvider: recordingResolver(w, steps, [], () => E.left({ message: 'No such model here.' })),
      })

      const result = await runtime.resume({ sessionId: source.sessionId }, recordingObserver(steps))

      expect(result).toStrictEqual({
        _tag: 'ProviderUnavailable',
        sourceRunId: source.runId,
        message: 'No such model here.',
      })
      expect(steps).toEqual(['planned continue', 'resolve'])
      // No owner.lock left, no claim file, no target run: the data dir is byte for byte as it was.
      expect(await snapshotTree(w.dataDir)).toEqual(before)
      expect(w.lifecycle.slice(lifecycleBefore).map((e) => e.type)).toEqual(['plan_approved'])
      expect(w.providersMade.filter((p) => p.kind === 'continuation')).toEqual([])

      expect(await w.runtime.resume({ sessionId: source.sessionId })).toMatchObject({
        _tag: 'Finished',
        status: 'completed',
        sourceRunId: source.runId,
      })
    })
  })

  describe('when the plan parks', () => {
    it('never asks the resolver and returns the parked plan it handed over', async () => {
      const w = await world()
      const turn = await w.runtime.runTurn({ cwd: w.workspace, prompt: 'hi' })
      if (turn._tag !== 'Finished') throw new Error(JSON.stringify(turn))
      const steps: Array<string> = []
      const calls: Array<ResolverCall> = []
      const runtime = w.runtimeWith({ resolveContinuationProvider: recordingResolver(w, steps, calls) })

      const result = await runtime.resume({ sessionId: turn.sessionId }, recordingObserver(steps))

      expect(result).toMatchObject({
        _tag: 'Parked',
        plan: { disposition: 'park', rejectionReasons: ['resume_candidate_missing'] },
      })
      expect(calls).toEqual([])
      expect(steps).toEqual(['planned park'])
    })
  })

  describe('when startup recovery could not repair the session', () => {
    it('parks with recovery_unwritable without reading the session or announcing a plan', async () => {
      const { w, source } = await givenResumable()
      const lifecycleBefore = w.lifecycle.length
      const calls: Array<ResolverCall> = []
      const runtime = w.runtimeWith({ resolveContinuationProvider: recordingResolver(w, [], calls) })
      const refusal = { operation: 'open', code: 'EROFS', path: `sessions/${source.sessionId}/owner.lock` }

      const result = await runtime.resume({ sessionId: source.sessionId, recoveryRefusal: refusal })

      expect(result).toMatchObject({
        _tag: 'Parked',
        plan: { disposition: 'park', rejectionReasons: ['recovery_unwritable'], sourceRunId: null },
      })
      expect(calls).toEqual([])
      expect(w.lifecycle.slice(lifecycleBefore)).toEqual([])
    })
  })
})
