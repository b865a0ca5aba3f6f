/**
 * The protocol failpoint harness (Phase 2, `FAILPOINTS_T1`), as Phase 0's harness is for
 * `FAILPOINTS`: for every failpoint a child process writes the protocol reference prefix through the
 * real JSONL store — one run per recovery mode — and is SIGKILLed once every append resolved. A
 * restarted host runs startup recovery, then projects and plans each run twice with the pure planner
 * (host facts of a host that writes the journal, and the injected probe verdict or reattach
 * observation), requires deep-equal results, the table's operation status and plan, and the ledger's
 * bytes and digest unchanged by planning. The expectations are read from `FAILPOINTS_T1` itself.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import {
  CommittedPrefixT1,
  FAILPOINTS_T1,
  type FailpointPlanT1,
  type FailpointT1,
  type RecoveryMode,
  type RuntimeEvent,
  makeNonEmptyStringUnsafe,
  makeRunIdUnsafe,
} from '@maka/events'
import { makeLedgerBuilderUnsafe, makeRunHeaderUnsafe } from '@maka/events/testing'
import { type OperationFacts, type PlanningInput, planContinuation } from '@maka/planner'
import { foldSegmentJournal, projectChain } from '@maka/projection'
import { ledgerPath } from '@maka/store-jsonl'
import { builtinTools } from '@maka/tools'
import { afterAll, describe, expect, it } from 'vitest'
import { makeFileRuntime } from '../../src/index.js'
import { CHILD_PROCESS_TEST_TIMEOUT_MS, exists, makeWorld, removeWorlds, valueUnsafe } from './fixtures/agentChild.js'

afterAll(removeWorlds)

const WRITER = fileURLToPath(new URL('./fixtures/prefix-writer.mjs', import.meta.url))
const READY_TIMEOUT_MS = 45_000

// -------------------------------------------------------------------------------------
// the modes, the tool each is declared by, and what the host injects for it
// -------------------------------------------------------------------------------------

type Mode = RecoveryMode
type TableMode = Exclude<Mode, 'reattach'>
const MODES: ReadonlyArray<Mode> = ['replay_safe', 'idempotent', 'reconcile', 'never_auto_retry', 'reattach']
const VERDICTS = ['applied', 'not_applied', 'diverged', 'unreadable'] as const
const OBSERVATIONS = ['exited', 'running', 'lost'] as const

// One tool per mode; the names are what the host's catalog and `toolRecoveryModes` say.
const TOOLS: Readonly<Record<Mode, { readonly name: string; readonly args: unknown }>> = {
  replay_safe: { name: 'read_file', args: { path: 'notes.txt' } },
  idempotent: { name: 'keyed_append', args: { line: 'one' } },
  reconcile: { name: 'write_file', args: { path: 'notes.txt', content: 'new' } },
  never_auto_retry: { name: 'append_log', args: { line: 'one' } },
  reattach: { name: 'shell', args: { command: 'make' } },
}
const TOOL_RECOVERY_MODES = {
  append_log: 'never_auto_retry',
  keyed_append: 'idempotent',
  read_file: 'replay_safe',
  shell: 'by_args',
  write_file: 'reconcile',
} as const

// What the host read about the open operation: its current mode, and the verdict or observation.
interface Variant {
  readonly label: string
  readonly facts: OperationFacts
  readonly verdict?: (typeof VERDICTS)[number]
  readonly observation?: (typeof OBSERVATIONS)[number]
}
const variantsOf = (mode: Mode): ReadonlyArray<Variant> => {
  switch (mode) {
    case 'reconcile':
      return VERDICTS.map((verdict) => ({ label: verdict, verdict, facts: { currentMode: mode, probe: verdict } }))
    case 'reattach':
      return OBSERVATIONS.map((observation) => ({
        label: observation,
        observation,
        facts: { currentMode: mode, observation },
      }))
    default:
      return [{ label: mode, facts: { currentMode: mode } }]
  }
}

// -------------------------------------------------------------------------------------
// the expectation, read from the table
// -------------------------------------------------------------------------------------

// `FAILPOINTS_T1` has no reattach column: a reattach shell plans by its observation (spec §4a and
// the note under §10's table) where the outcome is unknown, and as every other mode elsewhere.
type ExpectedPlan =
  | FailpointPlanT1
  | { readonly disposition: 'continue'; readonly action: 'settle_reattached' }
  | { readonly disposition: 'park'; readonly reason: 'tool_still_running' }
const REATTACH_BY_OBSERVATION: Readonly<Record<(typeof OBSERVATIONS)[number], ExpectedPlan>> = {
  exited: { disposition: 'continue', action: 'settle_reattached' },
  running: { disposition: 'park', reason: 'tool_still_running' },
  lost: { disposition: 'park', reason: 'tool_outcome_unknown' },
}

const isPlan = (value: unknown): value is FailpointPlanT1 =>
  typeof value === 'object' && value !== null && 'disposition' in value

const tablePlan = (failpoint: FailpointT1, mode: TableMode, variant: Variant): FailpointPlanT1 => {
  const cell = failpoint.decision.plan[mode]
  if (isPlan(cell)) return cell
  if (variant.verdict === undefined) throw new Error(`${failpoint.id}: a per-verdict cell needs a verdict`)
  return cell[variant.verdict]
}

const expectedPlan = (failpoint: FailpointT1, mode: Mode, variant: Variant): ExpectedPlan => {
  if (mode !== 'reattach') return tablePlan(failpoint, mode, variant)
  if (failpoint.decision.operationStatus === 'dispatched_outcome_unknown') {
    return REATTACH_BY_OBSERVATION[variant.observation!]
  }
  // Where no probe or observation runs, the table gives every mode one plan; reattach shares it.
  const shared = tablePlan(failpoint, 'never_auto_retry', variant)
  for (const other of ['replay_safe', 'idempotent', 'reconcile'] as const) {
    expect(tablePlan(failpoint, other, variant)).toEqual(shared)
  }
  return shared
}

// -------------------------------------------------------------------------------------
// the world: the reference ledger per mode, a writer child, a restarted host
// -------------------------------------------------------------------------------------

interface RunOf {
  readonly mode: Mode
  readonly sessionId: string
  readonly runId: string
  readonly reference: ReadonlyArray<RuntimeEvent>
}

// `user text + marker → function_call → dispatch → function_response → failed terminal`.
const referenceRun = (failpoint: FailpointT1, mode: Mode): RunOf => {
  const slug = `${failpoint.id}-${mode.replace(/_/g, '-')}`
  const identity = { sessionId: `s-${slug}`, invocationId: `i-${slug}`, runId: `r-${slug}`, turnId: `t-${slug}` }
  const l = makeLedgerBuilderUnsafe(identity)
  const tool = TOOLS[mode]
  const user = l.protocolUserText('go')
  const call = l.protocolCall('call-1', tool.name, tool.args)
  const reference = [
    user,
    call,
    l.dispatch(call, mode),
    l.outcome(call, 'normal_t2', { result: { ok: true } }),
    l.terminal(),
  ]
  expect(reference).toHaveLength(Object.keys(CommittedPrefixT1).length)
  return { mode, sessionId: identity.sessionId, runId: identity.runId, reference }
}

const headerOf = (run: RunOf) =>
  makeRunHeaderUnsafe(
    {
      runId: run.runId,
      sessionId: run.sessionId,
      turnId: run.reference[0]!.turnId,
      invocationId: run.reference[0]!.invocationId,
      status: 'running',
    },
    ['failureClass'],
  )

// Spawns the writer under plain node and resolves once it printed `ready` (every append resolved).
const writePrefixes = (input: unknown): Promise<{ kill: () => Promise<NodeJS.Signals | null> }> =>
  new Promise((resolve, reject) => {
    const env = { ...process.env }
    delete env['NODE_OPTIONS']
    const child = spawn(process.execPath, [WRITER, JSON.stringify(input)], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise<NodeJS.Signals | null>((done) => child.once('exit', (_code, signal) => done(signal)))
    let stdout = ''
    let stderr = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`writer not ready after ${READY_TIMEOUT_MS} ms: ${stderr}`))
    }, READY_TIMEOUT_MS)
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      if (stdout.includes('ready\n')) {
        clearTimeout(timer)
        resolve({
          kill: () => {
            child.kill('SIGKILL')
            return exited
          },
        })
      }
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`writer exited before ready (code ${code}, signal ${signal}): ${stderr}`))
    })
  })

const IDS = {
  invocationId: makeNonEmptyStringUnsafe('i-continuation'),
  runId: makeRunIdUnsafe('r-continuation'),
  turnId: makeNonEmptyStringUnsafe('t-continuation'),
}

// The projection without its `isOpen` closure, so two projections compare by value.
const projected = (runId: string, events: ReadonlyArray<RuntimeEvent>) => {
  const { isOpen: _isOpen, ...rest } = projectChain([foldSegmentJournal(runId, events)])
  return rest
}

// -------------------------------------------------------------------------------------
// the harness
// -------------------------------------------------------------------------------------

describe('the protocol failpoint harness (FAILPOINTS_T1)', () => {
  describe.concurrent('when a writer is killed after committing a failpoint’s protocol prefix', () => {
    it.for(FAILPOINTS_T1.map((failpoint): [string, FailpointT1] => [failpoint.id, failpoint]))(
      '%s: every mode, verdict and observation plans as the table says, twice, without changing a byte',
      { timeout: CHILD_PROCESS_TEST_TIMEOUT_MS },
      async ([, failpoint], { expect }) => {
        const world = await makeWorld(`failpoint-${failpoint.id}`)
        const count = CommittedPrefixT1[failpoint.prefix]
        const runs = MODES.map((mode) => referenceRun(failpoint, mode))
        const markerPath = world.path('finally-marker')
        const child = await writePrefixes({
          dataDir: world.dataDir,
          markerPath,
          runs: runs.map((run) => ({
            session: { sessionId: run.sessionId, cwd: headerOf(run).cwd, createdAt: headerOf(run).createdAt },
            header: headerOf(run),
            // The executor's durable appends: the user row, the dispatch, the response, the terminal.
            rows: run.reference.slice(0, count).map((event, index) => ({ event, durable: index !== 1 })),
          })),
        })
        expect(await child.kill()).toBe('SIGKILL')
        expect(await exists(markerPath)).toBe(false)

        // A restarted host: startup recovery closes every run the writer left open.
        const { stores, runtime } = makeFileRuntime({
          dataDir: world.dataDir,
          tools: builtinTools(),
          safeBoundaryResumeEnabled: true,
          toolJournal: true,
          providerFor: () => {
            throw new Error('planning never asks for a provider')
          },
        })
        await runtime.recover({ sessionIds: runs.map((run) => run.sessionId) })

        for (const run of runs) {
          const header = await valueUnsafe(stores.runs.read(run.sessionId, run.runId))
          expect(header.status).toBe('failed')
          const ledger = await valueUnsafe(stores.events.read(run.sessionId, run.runId))
          expect(ledger.problem).toBeNull()
          expect(ledger.tornTail).toBeNull()
          // The committed prefix is exactly the table's; recovery added a terminal only where none was.
          expect(ledger.events.slice(0, count)).toEqual(run.reference.slice(0, count))
          expect(ledger.highWater).toBe(count === CommittedPrefixT1.after_terminal_event ? count : count + 1)

          const path = ledgerPath(world.dataDir, run.sessionId, run.runId)
          const bytes = await readFile(path)
          const scan = await valueUnsafe(stores.events.fold(run.sessionId, run.runId, () => undefined))
          expect(scan.digest).toBe(createHash('sha256').update(bytes).digest('hex'))

          // The projection: the table's status for the reference operation.
          const projection = projected(run.runId, ledger.events)
          expect(projected(run.runId, ledger.events)).toEqual(projection)
          expect(projection.journaled).toBe(true)
          expect(projection.corruptions).toEqual([])
          const status = failpoint.decision.operationStatus
          if (status === 'none' || status === 'succeeded') {
            expect(projection.openOperations).toEqual([])
            expect(projection.settledCount).toBe(status === 'none' ? 0 : 1)
          } else {
            expect(projection.openOperations.map((op) => [op.toolCallId, op.status])).toEqual([['call-1', status]])
          }

          for (const variant of variantsOf(run.mode)) {
            const operationId = `${run.runId}-o2`
            const input: PlanningInput = {
              source: header,
              ledger,
              facts: {
                currentCwd: header.cwd,
                currentWorkspaceIdentity: header.workspaceIdentity!,
                backgroundOperationsSettled: true,
                unsettledOperations: [],
                availableToolNames: Object.keys(TOOL_RECOVERY_MODES),
                toolJournal: true,
                toolRecoveryModes: TOOL_RECOVERY_MODES,
              },
              operationFacts: new Map([[operationId, variant.facts]]),
            }
            const plan = planContinuation(input, IDS)
            expect(planContinuation(input, IDS), `${run.mode}/${variant.label}`).toEqual(plan)

            const expected = expectedPlan(failpoint, run.mode, variant)
            const where = `${failpoint.id} ${run.mode}/${variant.label}: ${JSON.stringify(plan.rejectionReasons)}`
            expect(plan.disposition, where).toBe(expected.disposition)
            if (expected.disposition === 'continue') {
              expect(plan.rejectionReasons, where).toEqual([])
              expect(plan.continuation?.settlementPlan, where).toEqual(
                expected.action === null ? undefined : [{ operationId, toolCallId: 'call-1', action: expected.action }],
              )
            } else {
              expect(plan.rejectionReasons, where).toEqual([expected.reason])
            }
            if (status === 'none' || status === 'succeeded') {
              expect(plan.openToolOperations, where).toBeUndefined()
            } else {
              expect(plan.openToolOperations, where).toMatchObject([
                { operationId, toolCallId: 'call-1', status, recoveryMode: run.mode, adoptions: 0 },
              ])
            }
          }

          // Planning read; it wrote nothing.
          expect((await readFile(path)).equals(bytes)).toBe(true)
          const again = await valueUnsafe(stores.events.fold(run.sessionId, run.runId, () => undefined))
          expect(again.digest).toBe(scan.digest)
        }
      },
    )
  })
})
