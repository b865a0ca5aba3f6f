/**
 * Filesystem faults (ENOSPC, EIO, EACCES, EROFS) injected at the stores' filesystem port, at each
 * durable step of a normal turn and of a continuation: the execution ends with the typed store
 * error naming the operation, no provider call follows a failed pre-provider write, no terminal
 * header stands without its terminal event, and startup recovery then leaves a consistent state.
 */
import { describe, expect, it } from 'vitest'
import { isTerminalEvent, type AgentRun } from '@maka/events'
import { makeFaultInjectingFs, makeFileStores, nodeStoreFs, type Fault } from '@maka/store-jsonl'
import type { ContinuationResult, TurnResult } from '../src/index.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { givenApprovedPlan, givenInterruptedRun, ioFailure, trackWorlds, type World } from './support/world.js'

const world = trackWorlds()
const CODES = ['ENOSPC', 'EIO', 'EACCES', 'EROFS'] as const
const TERMINAL = new Set(['completed', 'failed', 'cancelled'])

const faultyStores = (w: World) => {
  const fs = makeFaultInjectingFs(nodeStoreFs)
  return { fs, stores: makeFileStores(w.dataDir, { fs }) }
}

/** Every run of the session: a terminal header only where the ledger (read afresh) holds its terminal event. */
const expectNoTerminalHeaderWithoutTerminalEvent = async (w: World, sessionId: string) => {
  const fresh = makeFileStores(w.dataDir)
  const listed = await fresh.runs.list(sessionId)()
  if (listed._tag === 'Left') throw new Error(listed.left.message)
  for (const entry of listed.right) {
    if (!('header' in entry)) continue
    const ledger = await fresh.events.read(sessionId, entry.runId)()
    if (ledger._tag === 'Left') throw new Error(ledger.left.message)
    const terminals = ledger.right.events.filter(isTerminalEvent)
    if (TERMINAL.has(entry.header.status)) expect(terminals, `${entry.runId} terminal event`).toHaveLength(1)
  }
}

/** After recovery: every run terminal, header and ledger agree, and a second pass changes nothing. */
const expectConsistentAfterRecovery = async (w: World, sessionId: string) => {
  await w.runtime.recover({ sessionIds: [sessionId] })
  const fresh = makeFileStores(w.dataDir)
  const listed = await fresh.runs.list(sessionId)()
  if (listed._tag === 'Left') throw new Error(listed.left.message)
  const headers: Array<AgentRun> = []
  for (const entry of listed.right) {
    if (!('header' in entry)) throw new Error(`${entry.runId} has no readable header`)
    headers.push(entry.header)
    const ledger = await fresh.events.read(sessionId, entry.runId)()
    if (ledger._tag === 'Left') throw new Error(ledger.left.message)
    expect(ledger.right.problem).toBeNull()
    expect(ledger.right.tornTail).toBeNull()
    const terminals = ledger.right.events.filter(isTerminalEvent)
    expect(terminals, `${entry.runId} terminal event`).toHaveLength(1)
    const status = terminals[0]?.status
    expect(entry.header.status).toBe(status === 'aborted' || status === 'cancelled' ? 'cancelled' : status)
  }
  const again = await w.runtime.recover({ sessionIds: [sessionId] })
  expect(again.actions).toEqual([])
  return headers
}

interface TurnCase {
  readonly step: string
  readonly fault: Omit<Fault, 'code'>
  readonly result: Partial<TurnResult> & { readonly _tag: TurnResult['_tag'] }
  readonly operation: string
  readonly subject: (sessionId: string, runId: string) => string
  /** The provider was called before the failing write (only for writes after the model answered). */
  readonly providerCalled: boolean
}

const turnCases: ReadonlyArray<TurnCase> = [
  {
    step: 'owner.lock create',
    fault: { call: 'link', path: /owner\.lock$/ },
    result: { _tag: 'Refused', code: 'store_failed' },
    operation: 'link',
    subject: (s) => `create owner.lock of session ${s}`,
    providerCalled: false,
  },
  {
    step: 'session.json create',
    fault: { call: 'link', path: /session\.json$/ },
    result: { _tag: 'Refused', code: 'store_failed' },
    operation: 'link',
    subject: (s) => `create session.json of session ${s}`,
    providerCalled: false,
  },
  {
    step: 'run header create',
    fault: { call: 'link', path: /run\.json$/ },
    result: { _tag: 'Refused', code: 'store_failed' },
    operation: 'link',
    subject: (s, r) => `create run.json of run ${r} in session ${s}`,
    providerCalled: false,
  },
  {
    step: 'initial user row (fsync)',
    fault: { call: 'fsync', path: /runtime-events\.jsonl$/ },
    result: { _tag: 'Interrupted' },
    operation: 'fsync',
    subject: (s, r) => `append to the ledger of run ${r} in session ${s}`,
    providerCalled: false,
  },
  {
    step: 'header running (rename)',
    fault: { call: 'rename', path: /run\.json$/ },
    result: { _tag: 'Interrupted' },
    operation: 'rename',
    subject: (s, r) => `update run.json of run ${r} in session ${s}`,
    providerCalled: false,
  },
  {
    // Rows: user (durable), model text, terminal (durable): the second fsync is the terminal's.
    step: 'terminal row (fsync)',
    fault: { call: 'fsync', path: /runtime-events\.jsonl$/, skip: 1 },
    result: { _tag: 'Interrupted' },
    operation: 'fsync',
    subject: (s, r) => `append to the ledger of run ${r} in session ${s}`,
    providerCalled: true,
  },
  {
    step: 'terminal row (write)',
    fault: { call: 'write', path: /runtime-events\.jsonl$/, skip: 2 },
    result: { _tag: 'Interrupted' },
    operation: 'append',
    subject: (s, r) => `append to the ledger of run ${r} in session ${s}`,
    providerCalled: true,
  },
  {
    // Renames: header running, then the terminal header.
    step: 'terminal header (rename)',
    fault: { call: 'rename', path: /run\.json$/, skip: 1 },
    result: { _tag: 'Interrupted' },
    operation: 'rename',
    subject: (s, r) => `update run.json of run ${r} in session ${s}`,
    providerCalled: true,
  },
]

describe('a normal turn under filesystem faults', () => {
  for (const c of turnCases) {
    describe(`when the ${c.step} fails`, () => {
      for (const code of CODES) {
        it(`${code}: the turn ends with the typed error, is never reported finished, and recovers consistently`, async () => {
          const w = await world()
          const { fs, stores } = faultyStores(w)
          w.script([{ text: 'done' }])
          fs.arm({ ...c.fault, code })
          const result = await w.runtimeWith({ stores }).runTurn({
            sessionId: 'session-f',
            cwd: w.workspace,
            prompt: 'say done',
          })
          fs.disarm()

          expect(fs.injected).toHaveLength(1)
          expect(result).toMatchObject(c.result)
          const runId = 'runId' in result ? result.runId : 'run-1'
          expect('error' in result ? result.error : undefined).toMatchObject({
            _tag: 'IoFailed',
            code,
            operation: c.operation,
            subject: c.subject('session-f', runId),
          })
          expect(w.requests.length > 0).toBe(c.providerCalled)
          await expectNoTerminalHeaderWithoutTerminalEvent(w, 'session-f')
          if (result._tag === 'Interrupted') {
            const headers = await expectConsistentAfterRecovery(w, 'session-f')
            const header = headers.find((h) => h.runId === result.runId)
            // The terminal row is durable only when the header write failed after it: then the run
            // completed; otherwise recovery closes it as app_restarted.
            expect(header?.status).toBe(c.step === 'terminal header (rename)' ? 'completed' : 'failed')
          }
        })
      }
    })
  }
})

interface ContinuationCase {
  readonly step: string
  readonly fault: (targetRunId: string) => Omit<Fault, 'code'>
  readonly stage: 'ownership' | 'claim' | 'continuation_start' | 'run'
  readonly operation: string
  readonly subject: (sessionId: string, sourceRunId: string, highWater: number, targetRunId: string) => string
  readonly providerCalled: boolean
  /** What the target run is after recovery. */
  readonly recovered: 'none' | 'continuation_abandoned_before_start' | 'app_restarted' | 'completed'
}

const continuationCases: ReadonlyArray<ContinuationCase> = [
  {
    step: 'owner.lock create',
    fault: () => ({ call: 'link', path: /owner\.lock$/ }),
    stage: 'ownership',
    operation: 'link',
    subject: (s) => `create owner.lock of session ${s}`,
    providerCalled: false,
    recovered: 'none',
  },
  {
    step: 'claim create',
    fault: () => ({ call: 'link', path: /claims\/.*\.json$/ }),
    stage: 'claim',
    operation: 'link',
    subject: (s, source, hw) => `create the claim ${source}@${hw} of session ${s}`,
    providerCalled: false,
    recovered: 'none',
  },
  {
    step: 'target header create',
    fault: (target) => ({ call: 'link', path: new RegExp(`runs/${target}/run\\.json$`) }),
    stage: 'claim',
    operation: 'link',
    subject: (s, _source, _hw, target) => `create run.json of run ${target} in session ${s}`,
    providerCalled: false,
    recovered: 'continuation_abandoned_before_start',
  },
  {
    step: 'continuation-start row (fsync)',
    fault: (target) => ({ call: 'fsync', path: new RegExp(`runs/${target}/runtime-events\\.jsonl$`) }),
    stage: 'continuation_start',
    operation: 'fsync',
    subject: (s, _source, _hw, target) => `append to the ledger of run ${target} in session ${s}`,
    providerCalled: false,
    recovered: 'app_restarted',
  },
  {
    // Target rows: continuation start (durable), model text, terminal (durable).
    step: 'terminal row (fsync)',
    fault: (target) => ({ call: 'fsync', path: new RegExp(`runs/${target}/runtime-events\\.jsonl$`), skip: 1 }),
    stage: 'run',
    operation: 'fsync',
    subject: (s, _source, _hw, target) => `append to the ledger of run ${target} in session ${s}`,
    providerCalled: true,
    recovered: 'app_restarted',
  },
  {
    // Target header renames: running, then the terminal header.
    step: 'terminal header (rename)',
    fault: (target) => ({ call: 'rename', path: new RegExp(`runs/${target}/run\\.json$`), skip: 1 }),
    stage: 'run',
    operation: 'rename',
    subject: (s, _source, _hw, target) => `update run.json of run ${target} in session ${s}`,
    providerCalled: true,
    recovered: 'completed',
  },
]

describe('a continuation under filesystem faults', () => {
  for (const c of continuationCases) {
    describe(`when the ${c.step} fails`, () => {
      for (const code of CODES) {
        it(`${code}: Failed at ${c.stage} with the typed error; recovery leaves a consistent state`, async () => {
          const w = await world()
          const source = await givenInterruptedRun(w)
          const { plan, continuation: target } = await givenApprovedPlan(w, source)
          const { fs, stores } = faultyStores(w)
          fs.arm({ ...c.fault(target.runId), code })
          const result: ContinuationResult = await w.runtimeWith({ stores }).execute(plan)
          fs.disarm()

          expect(fs.injected).toHaveLength(1)
          expect(result).toMatchObject({ _tag: 'Failed', stage: c.stage, targetRunId: target.runId })
          expect(result._tag === 'Failed' ? result.error : undefined).toMatchObject({
            _tag: 'IoFailed',
            code,
            operation: c.operation,
            subject: c.subject(source.sessionId, source.runId, target.sourceRuntimeEventHighWater, target.runId),
          })
          const calls = w.requests.filter((r) => r.kind === 'continuation')
          expect(calls.length > 0).toBe(c.providerCalled)
          expect(w.lifecycle.map((e) => e.type)).toContain('execution_failed')
          // An execution whose ownership, claim or start row failed never started.
          if (c.stage !== 'run') expect(w.lifecycle.map((e) => e.type)).not.toContain('execution_started')
          expect(w.lifecycle.map((e) => e.type)).not.toContain('execution_completed')
          await expectNoTerminalHeaderWithoutTerminalEvent(w, source.sessionId)

          const headers = await expectConsistentAfterRecovery(w, source.sessionId)
          const recovered = headers.find((h) => h.runId === target.runId)
          if (c.recovered === 'none') expect(recovered).toBeUndefined()
          else if (c.recovered === 'completed') expect(recovered?.status).toBe('completed')
          else expect(recovered).toMatchObject({ status: 'failed', failureClass: c.recovered })
          // The source is never written by any of this.
          expect(headers.find((h) => h.runId === source.runId)).toMatchObject({
            status: 'failed',
            failureClass: 'app_restarted',
          })
        })
      }
    })
  }

  describe('when owner.lock cannot be created for want of space', () => {
    it('is a failure naming the write, never "another running process owns this session"', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const { plan } = await givenApprovedPlan(w, source)
      const { fs, stores } = faultyStores(w)
      fs.arm({ call: 'link', path: /owner\.lock$/, code: 'ENOSPC' })
      const result = await w.runtimeWith({ stores }).execute(plan)
      expect(result._tag).toBe('Failed')
      expect(result).not.toMatchObject({ _tag: 'Rejected', codes: ['session_owner_alive'] })
      expect(result._tag === 'Failed' ? result.error?.message : undefined).toBe(
        `could not create owner.lock of session ${source.sessionId}: no space left on device (ENOSPC at link)`,
      )
    })
  })
})

describe('execute when the owner-lock port fails with an IoFailed', () => {
  it('ends as Failed at ownership carrying the error, with no claim and no provider call', async () => {
    const w = await world()
    const source = await givenInterruptedRun(w)
    const { plan, continuation: target } = await givenApprovedPlan(w, source)
    const failure = ioFailure('create owner.lock')
    const result = await w
      .runtimeWith({
        wrapStores: (s) => ({ ...s, ownerLocks: { ...s.ownerLocks, acquire: () => TE.left(failure) } }),
      })
      .execute(plan)
    expect(result).toMatchObject({ _tag: 'Failed', stage: 'ownership', errorClass: 'store_IoFailed', error: failure })
    expect(w.requests.filter((r) => r.kind === 'continuation')).toEqual([])
    const claims = await w.stores.claims.list(source.sessionId)()
    expect(claims._tag === 'Right' ? claims.right : null).toEqual([])
    const targetHeader = await w.stores.runs.read(source.sessionId, target.runId)()
    expect(targetHeader._tag === 'Left' ? targetHeader.left._tag : 'exists').toBe('NotFound')
  })
})

describe('startup recovery under filesystem faults', () => {
  it('reports the failed write as a typed error on its action, and a later pass completes the repair', async () => {
    const w = await world()
    const source = await givenInterruptedRun(w)
    const { plan, continuation: target } = await givenApprovedPlan(w, source)
    const { fs, stores } = faultyStores(w)
    // The target header never appears: recovery must create it and its terminal row.
    fs.arm({ call: 'link', path: new RegExp(`runs/${target.runId}/run\\.json$`), code: 'ENOSPC' })
    await w.runtimeWith({ stores }).execute(plan)
    fs.arm({ call: 'fsync', path: new RegExp(`runs/${target.runId}/runtime-events\\.jsonl$`), code: 'EIO' })
    const report = await w.runtimeWith({ stores }).recover({ sessionIds: [source.sessionId] })
    fs.disarm()
    const failed = report.actions.find((a) => a.error !== undefined)
    expect(failed).toMatchObject({
      runId: target.runId,
      action: 'left_untouched',
      error: { _tag: 'IoFailed', code: 'EIO', operation: 'fsync' },
    })
    await expectNoTerminalHeaderWithoutTerminalEvent(w, source.sessionId)
    await expectConsistentAfterRecovery(w, source.sessionId)
  })
})
