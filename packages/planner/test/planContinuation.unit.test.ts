import type { AgentRun, RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe, type LedgerBuilder } from '@maka/events/testing'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { type AncestorRead, MAX_ANCESTOR_DEPTH } from '../src/index.js'
import {
  claim,
  continuationHeader,
  defaultFacts,
  foreignRead,
  givenLedger,
  header,
  ledgerOf,
  rows,
  safeRows,
  unreadableRead,
} from './givenLedger.js'

// -------------------------------------------------------------------------------------
// chain fixtures
// -------------------------------------------------------------------------------------

interface ChainRun {
  readonly header: AgentRun
  readonly events: ReadonlyArray<RuntimeEvent>
}

const idsOf = (n: number) => ({ runId: `run-c${n}`, invocationId: `invocation-c${n}`, turnId: `turn-c${n}` })
const builderFor = (h: AgentRun): LedgerBuilder =>
  makeLedgerBuilderUnsafe({ sessionId: h.sessionId, invocationId: h.invocationId, runId: h.runId, turnId: h.turnId })

/** A normal root run, then `depth` continuations, each pinned at its parent's full ledger. */
const chainOf = (depth: number, rootExtraRows = 0): ReadonlyArray<ChainRun> => {
  const rootHeader = header(idsOf(0))
  const r = builderFor(rootHeader)
  const rootEvents = [
    r.userText('refactor the parser'),
    r.functionCall('call-0', 'read_file', { path: 'parser.ts' }),
    r.functionResponse('call-0', 'read_file', 'source'),
    r.terminal(),
  ]
  const runs: Array<ChainRun> = [{ header: rootHeader, events: rootEvents }]
  for (let n = 1; n <= depth; n += 1) {
    const parent = runs[n - 1]!
    const h = continuationHeader(idsOf(n), parent.header, parent.events.length)
    const l = builderFor(h)
    const events = [
      l.continuationStart(h.continuationSource!),
      l.functionCall(`call-${n}`, 'shell', { cmd: `step ${n}` }),
      l.functionResponse(`call-${n}`, 'shell', `ok ${n}`),
      l.terminal(),
    ]
    runs.push({ header: h, events })
  }
  // Rows appended to the root after its child pinned it never reach the child's history.
  if (rootExtraRows > 0) {
    const extra = Array.from({ length: rootExtraRows }, (_, i) => r.modelText(`late ${i}`))
    runs[0] = { header: rootHeader, events: [...rootEvents, ...extra] }
  }
  return runs
}

const asAncestors = (runs: ReadonlyArray<ChainRun>): ReadonlyArray<AncestorRead> =>
  runs.map((run) => ({ header: run.header, ledger: ledgerOf(run.events) }))

const planChain = (runs: ReadonlyArray<ChainRun>, ancestors: ReadonlyArray<AncestorRead> = asAncestors(runs)) => {
  const source = runs[runs.length - 1]!
  return givenLedger(source.events, { source: source.header, ancestors: ancestors.slice(0, -1) }).whenPlanning()
}

// -------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------

describe('planContinuation', () => {
  describe('when the source stopped at a safe boundary', () => {
    it('continues with fresh ids, the source boundary and the replay context', () => {
      const events = safeRows()
      const { plan } = givenLedger(events).whenPlanning().thenContinues()
      expect(plan.sourceRunId).toBe('run-1')
      expect(plan.sourceRuntimeEventHighWater).toBe(4)
      expect(plan.continuation).toEqual({
        sessionId: 'session-1',
        invocationId: 'invocation-2',
        runId: 'run-2',
        turnId: 'turn-2',
        sourceInvocationId: 'invocation-1',
        sourceRunId: 'run-1',
        sourceTurnId: 'turn-1',
        sourceRuntimeEventHighWater: 4,
        runtimeContext: events,
        sourceRuntimeContext: events,
        safetySnapshot: {
          workspaceIdentity: defaultFacts.currentWorkspaceIdentity,
          backgroundOperationsSettled: true,
          availableToolNames: ['read_file', 'shell'],
        },
      })
    })

    it('snapshots the tool catalog sorted and without duplicates', () => {
      const { plan } = givenLedger(safeRows())
        .whenPlanning({ availableToolNames: ['write_file', 'read_file', 'shell', 'read_file'] })
        .thenContinues()
      expect(plan.continuation?.safetySnapshot.availableToolNames).toEqual(['read_file', 'shell', 'write_file'])
    })

    it('continues after a failed tool result as well', () => {
      const l = rows()
      givenLedger([
        l.userText('run it'),
        l.functionCall('c1', 'shell'),
        l.functionResponse('c1', 'shell', 'boom', true),
        l.terminal(),
      ])
        .whenPlanning()
        .thenContinues()
    })

    it('reports a torn tail as a warning and still continues', () => {
      const { plan } = givenLedger(safeRows(), { ledger: { tornTail: { offset: 812, length: 40 } } })
        .whenPlanning()
        .thenContinues()
      expect(plan.diagnostics).toEqual([
        {
          code: 'ledger_torn_tail',
          severity: 'warning',
          message: expect.any(String) as string,
          detail: { runId: 'run-1', offset: 812, length: 40 },
        },
      ])
    })
  })

  describe('when the header and the ledger disagree about the end', () => {
    it('parks a running header with a failed terminal event', () => {
      givenLedger(safeRows(), { source: header({ status: 'running' }, ['failureClass']) })
        .whenPlanning()
        .thenParks(['terminal_repair_failed'])
        .thenDetail('terminal_repair_failed', { headerStatus: 'running', terminalEvents: [{ status: 'failed' }] })
    })

    it('parks a failed header with two terminal events', () => {
      const l = rows()
      const events = [...safeRows(l), l.terminal()]
      givenLedger(events).whenPlanning().thenParks(['terminal_repair_failed']).thenDetail('terminal_repair_failed', {
        terminalEventCount: 2,
      })
    })

    it('parks a completed header with a failed terminal event', () => {
      givenLedger(safeRows(), { source: header({ status: 'completed' }, ['failureClass']) })
        .whenPlanning()
        .thenParks(['terminal_repair_failed'])
    })

    it('parks a failed header whose ledger has no terminal event', () => {
      const [user, call, response] = safeRows()
      givenLedger([user!, call!, response!]).whenPlanning().thenParks(['terminal_repair_failed'])
    })

    it('ignores a partial terminal snapshot', () => {
      const l = rows()
      const [user, call, response] = safeRows(l)
      givenLedger([user!, call!, response!, l.partial(l.terminal())])
        .whenPlanning()
        .thenParks(['terminal_repair_failed'])
    })

    it('accepts a cancelled header with an aborted terminal event', () => {
      const l = rows()
      const [user, call, response] = safeRows(l)
      givenLedger([user!, call!, response!, l.terminal({ status: 'aborted' })], {
        source: header({ status: 'cancelled' }, ['failureClass']),
      })
        .whenPlanning()
        .thenContinues()
    })
  })

  describe('when a permission or a tool call is unresolved', () => {
    it('parks a request without a decision, naming it', () => {
      const l = rows()
      givenLedger([
        l.userText('deploy'),
        l.permissionRequest('perm-1', 'shell'),
        l.permissionRequest('perm-2', 'shell'),
        l.permissionDecision('perm-2', 'allow'),
        l.terminal(),
      ])
        .whenPlanning()
        .thenParks(['pending_permission'])
        .thenDetail('pending_permission', { requestIds: ['perm-1'] })
    })

    it('does not count a decision that came before its request', () => {
      const l = rows()
      givenLedger([
        l.userText('x'),
        l.permissionDecision('perm-1', 'deny'),
        l.permissionRequest('perm-1', 'shell'),
        l.terminal(),
      ])
        .whenPlanning()
        .thenParks(['pending_permission'])
    })

    it('continues once every request was decided', () => {
      const l = rows()
      givenLedger([
        l.userText('x'),
        l.permissionRequest('perm-1', 'shell'),
        l.permissionDecision('perm-1', 'deny'),
        l.terminal(),
      ])
        .whenPlanning()
        .thenContinues()
    })

    it('parks an unresolved tool call and keeps it out of the history', () => {
      const l = rows()
      const events = [
        l.userText('x'),
        l.functionCall('c1', 'read_file'),
        l.functionResponse('c1', 'read_file'),
        l.functionCall('c2', 'shell'),
        l.terminal(),
      ]
      givenLedger(events)
        .whenPlanning()
        .thenParks(['dangling_tool_state'])
        .thenDetail('dangling_tool_state', { toolCallIds: ['c2'] })
    })

    it('parks a response that names another tool than its call', () => {
      const l = rows()
      givenLedger([l.userText('x'), l.functionCall('c1', 'shell'), l.functionResponse('c1', 'read_file'), l.terminal()])
        .whenPlanning()
        .thenParks(['dangling_tool_state'])
    })
  })

  describe('when workspace facts differ', () => {
    it('treats a trailing slash as the same cwd', () => {
      givenLedger(safeRows(), { source: header({ cwd: '/work/project/' }) })
        .whenPlanning()
        .thenContinues()
      givenLedger(safeRows()).whenPlanning({ currentCwd: '/work/project/' }).thenContinues()
    })

    it('parks another cwd and names both', () => {
      givenLedger(safeRows())
        .whenPlanning({ currentCwd: '/work/project-copy' })
        .thenParks(['workspace_cwd_mismatch'])
        .thenDetail('workspace_cwd_mismatch', { sourceCwd: '/work/project', currentCwd: '/work/project-copy' })
    })

    it('parks another workspace identity', () => {
      givenLedger(safeRows())
        .whenPlanning({ currentWorkspaceIdentity: 'fs:1:2:/work/project' })
        .thenParks(['workspace_identity_mismatch'])
    })

    it('parks unsettled background work even when the flag says settled, listing it', () => {
      givenLedger(safeRows())
        .whenPlanning({ unsettledOperations: [{ kind: 'child_run', id: 'run-7' }] })
        .thenParks(['background_operation_pending'])
        .thenDetail('background_operation_pending', { unsettledOperations: [{ kind: 'child_run', id: 'run-7' }] })
    })
  })

  describe('when a workspace checkpoint is given', () => {
    it('continues with a restored checkpoint at the same high-water and snapshots it', () => {
      const { plan } = givenLedger(safeRows())
        .whenPlanning({ workspaceCheckpoint: { ref: 'cp-1', restored: true, runtimeEventHighWater: 4 } })
        .thenContinues()
      expect(plan.continuation?.safetySnapshot.workspaceCheckpoint).toEqual({ ref: 'cp-1', runtimeEventHighWater: 4 })
    })

    it('parks a checkpoint without a ref', () => {
      givenLedger(safeRows())
        .whenPlanning({ workspaceCheckpoint: { ref: '', restored: true, runtimeEventHighWater: 4 } })
        .thenParks(['workspace_ref_missing'])
    })

    it('parks a checkpoint that was not restored', () => {
      givenLedger(safeRows())
        .whenPlanning({ workspaceCheckpoint: { ref: 'cp-1', restored: false, runtimeEventHighWater: 4 } })
        .thenParks(['checkpoint_restore_failed'])
    })

    it('parks a checkpoint of another high-water as runtime_offset_mismatch, over the caller expectation', () => {
      givenLedger(safeRows())
        .whenPlanning({
          expectedRuntimeEventHighWater: 4,
          workspaceCheckpoint: { ref: 'cp-1', restored: true, runtimeEventHighWater: 3 },
        })
        .thenParks(['runtime_offset_mismatch'])
        .thenDetail('runtime_offset_mismatch', { expectedHighWater: 3, expectedFrom: 'checkpoint', actualHighWater: 4 })
    })
  })

  describe('when the history needs tools', () => {
    it('parks when a called tool is gone, naming every missing tool once', () => {
      const l = rows()
      givenLedger([
        l.userText('x'),
        l.functionCall('c1', 'grep'),
        l.functionResponse('c1', 'grep'),
        l.functionCall('c2', 'deploy'),
        l.functionResponse('c2', 'deploy'),
        l.functionCall('c3', 'grep'),
        l.functionResponse('c3', 'grep'),
        l.terminal(),
      ])
        .whenPlanning({ availableToolNames: ['shell'] })
        .thenParks(['tool_catalog_mismatch'])
        .thenDetail('tool_catalog_mismatch', { missingToolNames: ['deploy', 'grep'] })
    })

    it('does not require tools of calls that are not replayed', () => {
      const l = rows()
      givenLedger([l.userText('x'), l.functionCall('c1', 'gone_tool'), l.terminal()])
        .whenPlanning()
        .thenParks(['dangling_tool_state'])
    })
  })

  describe('when the continuation ids are not fresh', () => {
    it.each([
      [{ invocationId: 'invocation-1' }, ['invocationId']],
      [{ runId: 'run-1' }, ['runId']],
      [{ turnId: 'turn-1' }, ['turnId']],
      [{ invocationId: 'invocation-1', runId: 'run-1', turnId: 'turn-1' }, ['invocationId', 'runId', 'turnId']],
    ] as const)('parks %o as continuation_identity_reused', (ids, fields) => {
      givenLedger(safeRows())
        .whenPlanning({}, ids)
        .thenParks(['continuation_identity_reused'])
        .thenDetail('continuation_identity_reused', { reusedFields: fields })
    })
  })

  describe('when the source is a continuation (the ancestor walk)', () => {
    it('replays a two-deep chain oldest first', () => {
      const runs = chainOf(1)
      const { plan } = planChain(runs).thenContinues()
      expect(plan.continuation?.runtimeContext.map((e) => e.id)).toEqual([
        'run-c0-e1',
        'run-c0-e2',
        'run-c0-e3',
        'run-c0-e4',
        'run-c1-e1',
        'run-c1-e2',
        'run-c1-e3',
        'run-c1-e4',
      ])
      expect(plan.continuation?.sourceRuntimeContext.map((e) => e.id)).toEqual([
        'run-c1-e1',
        'run-c1-e2',
        'run-c1-e3',
        'run-c1-e4',
      ])
      expect(plan.continuation?.sourceRunId).toBe('run-c1')
    })

    it('replays a three-deep chain oldest first, each ancestor sliced at its pin', () => {
      const runs = chainOf(2, 3)
      expect(runs[0]!.events).toHaveLength(7)
      const { plan } = planChain(runs).thenContinues()
      const ids = plan.continuation?.runtimeContext.map((e) => e.id) ?? []
      expect(ids).toEqual([
        ...['e1', 'e2', 'e3', 'e4'].map((e) => `run-c0-${e}`),
        ...['e1', 'e2', 'e3', 'e4'].map((e) => `run-c1-${e}`),
        ...['e1', 'e2', 'e3', 'e4'].map((e) => `run-c2-${e}`),
      ])
      expect(ids.some((id) => id === 'run-c0-e5')).toBe(false)
    })

    it('drops an ancestor tool call that is unresolved at the pin from the history', () => {
      const root = header(idsOf(0))
      const r = builderFor(root)
      const rootEvents = [r.userText('go'), r.functionCall('c0', 'shell'), r.terminal()]
      const child = continuationHeader(idsOf(1), root, 3)
      const l = builderFor(child)
      const events = [l.continuationStart(child.continuationSource!), l.userText('continue'), l.terminal()]
      const { plan } = planChain([
        { header: root, events: rootEvents },
        { header: child, events },
      ]).thenContinues()
      expect(plan.continuation?.runtimeContext.map((e) => e.id)).not.toContain('run-c0-e2')
    })

    it('accepts a pure lookup instead of a list', () => {
      const runs = chainOf(2)
      const byId = new Map(asAncestors(runs).map((a) => [a.header.runId as string, a]))
      const source = runs[2]!
      givenLedger(source.events, {
        source: source.header,
        ancestors: (runId) => {
          const found = byId.get(runId)
          return found === undefined ? E.left({ stage: 'run', cause: 'missing' }) : E.right(found)
        },
      })
        .whenPlanning()
        .thenContinues()
    })

    it(`accepts ${MAX_ANCESTOR_DEPTH} ancestors`, () => {
      planChain(chainOf(MAX_ANCESTOR_DEPTH)).thenContinues()
    })

    it(`parks ${MAX_ANCESTOR_DEPTH + 1} ancestors as runtime_ledger_unreadable`, () => {
      planChain(chainOf(MAX_ANCESTOR_DEPTH + 1))
        .thenParks(['runtime_ledger_unreadable'])
        .thenDetail('runtime_ledger_unreadable', { reason: 'chain_too_deep', maxDepth: 64 })
    })

    it('parks a cycle', () => {
      // run-x continues run-y, which claims to continue run-x.
      const xIds = { runId: 'run-x', invocationId: 'invocation-x', turnId: 'turn-x' }
      const yIds = { runId: 'run-y', invocationId: 'invocation-y', turnId: 'turn-y' }
      const y = continuationHeader(yIds, header(xIds), 3)
      const x = continuationHeader(xIds, y, 3)
      const ly = builderFor(y)
      const lx = builderFor(x)
      const yEvents = [ly.continuationStart(y.continuationSource!), ly.userText('a'), ly.terminal()]
      const xEvents = [lx.continuationStart(x.continuationSource!), lx.userText('b'), lx.terminal()]
      givenLedger(xEvents, { source: x, ancestors: [{ header: y, ledger: ledgerOf(yEvents) }] })
        .whenPlanning()
        .thenParks(['runtime_ledger_unreadable'])
        .thenDetail('runtime_ledger_unreadable', { reason: 'chain_cycle', runId: 'run-x' })
    })

    it('parks an ancestor shorter than its pin', () => {
      const runs = chainOf(1)
      const [root, child] = runs
      givenLedger(child!.events, {
        source: child!.header,
        ancestors: [{ header: root!.header, ledger: ledgerOf(root!.events.slice(0, 3)) }],
      })
        .whenPlanning()
        .thenParks(['runtime_ledger_unreadable'])
        .thenDetail('runtime_ledger_unreadable', {
          reason: 'ancestor_shorter_than_pin',
          runId: 'run-c0',
          pinnedHighWater: 4,
          highWater: 3,
        })
    })

    it('parks an ancestor that could not be loaded', () => {
      const child = chainOf(1)[1]!
      givenLedger(child.events, { source: child.header, ancestors: [] })
        .whenPlanning()
        .thenParks(['runtime_ledger_unreadable'])
        .thenDetail('runtime_ledger_unreadable', { reason: 'ancestor_unreadable', runId: 'run-c0' })
    })

    it('parks an ancestor whose ledger has an unreadable row, with its line', () => {
      const [root, child] = chainOf(1)
      givenLedger(child!.events, {
        source: child!.header,
        ancestors: [
          {
            header: root!.header,
            ledger: unreadableRead(root!.events, 2, 'bad json'),
          },
        ],
      })
        .whenPlanning()
        .thenParks(['runtime_ledger_unreadable'])
        .thenDetail('runtime_ledger_unreadable', { reason: 'ancestor_ledger_unreadable', runId: 'run-c0', line: 2 })
    })

    it('parks a continuation whose ledger does not open with its continuation-start fact', () => {
      const [root, child] = chainOf(1)
      givenLedger(child!.events.slice(1), { source: child!.header, ancestors: asAncestors([root!]) })
        .whenPlanning()
        .thenParks(['runtime_ledger_unreadable'])
        .thenDetail('runtime_ledger_unreadable', { reason: 'continuation_start_missing', runId: 'run-c1' })
    })

    it('continues past a continuation that never started (only its terminal fact), replaying its source', () => {
      const [root, child] = chainOf(1)
      const l = builderFor(child!.header)
      const closed = l.terminal({
        status: 'failed',
        failureClass: 'continuation_abandoned_before_start',
        message: 'never started',
      })
      const { plan } = givenLedger([closed], { source: child!.header, ancestors: asAncestors([root!]) })
        .whenPlanning()
        .thenContinues()
      const rootReplayIds = root!.events.map((e) => e.id)
      expect(plan.continuation?.runtimeContext.map((e) => e.id)).toEqual([...rootReplayIds, closed.id])
      expect(plan.continuation?.sourceRuntimeContext.map((e) => e.id)).toEqual([closed.id])
      expect(plan.sourceRuntimeEventHighWater).toBe(1)
    })

    it('still parks a continuation without its start fact once it holds anything but terminal facts', () => {
      const [root, child] = chainOf(1)
      const l = builderFor(child!.header)
      givenLedger([l.modelText('answered without a start fact'), l.terminal()], {
        source: child!.header,
        ancestors: asAncestors([root!]),
      })
        .whenPlanning()
        .thenParks(['runtime_ledger_unreadable'])
        .thenDetail('runtime_ledger_unreadable', { reason: 'continuation_start_missing', runId: 'run-c1' })
    })

    it('parks a continuation-start fact whose refs differ from the header', () => {
      const [root, child] = chainOf(1)
      const l = builderFor(child!.header)
      const start = l.continuationStart({
        ...child!.header.continuationSource!,
        sourceRuntimeEventHighWater: 3 as never,
      })
      givenLedger([start, ...child!.events.slice(1)], { source: child!.header, ancestors: asAncestors([root!]) })
        .whenPlanning()
        .thenParks(['runtime_ledger_unreadable'])
    })

    it('parks an ancestor holding a row of another run as runtime_identity_mismatch', () => {
      const [root, child] = chainOf(1)
      const foreign = { ...root!.events[1]!, runId: 'run-zz' } as RuntimeEvent
      const rootEvents = [root!.events[0]!, foreign, ...root!.events.slice(2)]
      givenLedger(child!.events, {
        source: child!.header,
        ancestors: [{ header: root!.header, ledger: ledgerOf(rootEvents) }],
      })
        .whenPlanning()
        .thenParks(['runtime_identity_mismatch'])
        .thenDetail('runtime_identity_mismatch', { runId: 'run-c0', line: 2 })
    })

    it('parks when the history has no user head because the root was itself headless', () => {
      const root = header(idsOf(0))
      const r = builderFor(root)
      const rootEvents = [r.modelText('hi'), r.userText('go'), r.terminal()]
      const child = continuationHeader(idsOf(1), root, 3)
      const l = builderFor(child)
      planChain([
        { header: root, events: rootEvents },
        { header: child, events: [l.continuationStart(child.continuationSource!), l.userText('again'), l.terminal()] },
      ]).thenParks(['provider_resume_head_unsupported'])
    })
  })

  describe('when the source ledger itself is untrustworthy (early exits 6–9)', () => {
    it('parks a header without workspace identity first', () => {
      givenLedger(safeRows(), {
        source: header({}, ['workspaceIdentity']),
        ledger: unreadableRead(safeRows(), 2, 'bad json'),
      })
        .whenPlanning()
        .thenParks(['workspace_identity_missing'])
    })

    it('parks an unreadable row with its line number and no high-water', () => {
      const { plan } = givenLedger(safeRows(), {
        ledger: unreadableRead(safeRows(), 3, 'unknown key'),
      })
        .whenPlanning()
        .thenParks(['runtime_ledger_unreadable'])
        .thenDetail('runtime_ledger_unreadable', { line: 3, cause: 'unknown key' })
      expect(plan.sourceRuntimeEventHighWater).toBeNull()
    })

    it('parks a high-water that differs from the row count', () => {
      givenLedger(safeRows(), { ledger: { highWater: 5 } })
        .whenPlanning()
        .thenParks(['runtime_ledger_unreadable'])
    })

    it('parks a store-reported identity mismatch with its line', () => {
      givenLedger(safeRows(), { ledger: foreignRead(safeRows(), 1, 'runId') })
        .whenPlanning()
        .thenParks(['runtime_identity_mismatch'])
        .thenDetail('runtime_identity_mismatch', { line: 2, field: 'runId' })
    })

    it('parks a row of another session before evaluating any gate', () => {
      const [user, ...rest] = safeRows()
      givenLedger([{ ...user!, sessionId: 'session-9' } as RuntimeEvent, ...rest])
        .whenPlanning({ backgroundOperationsSettled: false })
        .thenParks(['runtime_identity_mismatch'])
        .thenDetail('runtime_identity_mismatch', { line: 1 })
    })

    it('parks a boundary another run already continues, naming it', () => {
      const existing = continuationHeader(
        { runId: 'run-5', invocationId: 'invocation-5', turnId: 'turn-5' },
        header(),
        4,
      )
      givenLedger(safeRows(), { boundaryHolders: { runs: [header(), existing], claims: [] } })
        .whenPlanning()
        .thenParks(['continuation_already_exists'])
        .thenDetail('continuation_already_exists', { existingRunId: 'run-5' })
    })

    it('parks a boundary a claim already holds, naming its target', () => {
      givenLedger(safeRows(), { boundaryHolders: { runs: [], claims: [claim({ targetRunId: 'run-9' })] } })
        .whenPlanning()
        .thenParks(['continuation_already_exists'])
        .thenDetail('continuation_already_exists', { existingRunId: 'run-9' })
    })

    it('continues when holders continue other boundaries', () => {
      const other = continuationHeader({ runId: 'run-5', invocationId: 'invocation-5', turnId: 'turn-5' }, header(), 2)
      givenLedger(safeRows(), {
        boundaryHolders: {
          runs: [other],
          claims: [claim({ sourceRuntimeEventHighWater: 2 }), claim({ sourceRunId: 'run-3' })],
        },
      })
        .whenPlanning()
        .thenContinues()
    })

    it('parks when the holders could not be listed', () => {
      givenLedger(safeRows(), { boundaryHolders: { unavailable: 'EACCES' } })
        .whenPlanning()
        .thenParks(['safety_observation_unavailable'])
    })
  })
})
