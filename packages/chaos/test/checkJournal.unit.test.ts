/**
 * The journal's invariants on snapshots built in memory from raw ledger text: a source and its
 * continuation, each code firing on the lineage that breaks it — a call answered twice across the
 * pinned boundary, a source ledger changed by the resume, a `reconcile` or `reattach` operation
 * dispatched again without the probe's `not_applied`, a write effect holding other bytes — and
 * silent on the healthy lineage beside them. Also the shape of the journal turn's script.
 */
import { describe, expect, it } from 'vitest'
import { type DataDirSnapshot, type RunFiles, checkJournal, journalScriptOf } from '../src/index.js'

const SESSION = 'chaos-1'
const SOURCE = 'run-a'
const NEXT = 'run-b'

type Row = Readonly<Record<string, unknown>>

const row = (runId: string, n: number, fields: Row): Row => ({
  id: `${runId}-e${n}`,
  sessionId: SESSION,
  runId,
  partial: false,
  ...fields,
})

const call = (runId: string, n: number, id: string, name: string): Row =>
  row(runId, n, { role: 'model', content: { kind: 'function_call', id, name, args: {} } })

const response = (runId: string, n: number, id: string, name: string): Row =>
  row(runId, n, { role: 'tool', content: { kind: 'function_response', id, name, result: 'ok' } })

const dispatch = (runId: string, n: number, operationId: string, mode: string, attempt: number, prior?: string): Row =>
  row(runId, n, {
    role: 'system',
    actions: {
      toolDispatch: {
        operationId,
        toolCallId: 'c1',
        toolName: 'write_file',
        recoveryMode: mode,
        attempt,
        ...(prior === undefined ? {} : { priorVerdict: prior }),
      },
    },
  })

const ledger = (rows: ReadonlyArray<Row>): Buffer => Buffer.from(rows.map((r) => `${JSON.stringify(r)}\n`).join(''))

const run = (runId: string, rows: ReadonlyArray<Row>, source?: { runId: string; highWater: number }): RunFiles => ({
  sessionId: SESSION,
  runId,
  header: Buffer.from(
    JSON.stringify({
      runId,
      status: 'completed',
      ...(source === undefined
        ? {}
        : { continuationSource: { sourceRunId: source.runId, sourceRuntimeEventHighWater: source.highWater } }),
    }),
  ),
  ledger: ledger(rows),
})

const snapshot = (...runs: ReadonlyArray<RunFiles>): DataDirSnapshot => ({
  runs: new Map(runs.map((r) => [`${SESSION}/${r.runId}`, r])),
  claims: new Map(),
})

// The source called c1 (dispatched, then killed); the continuation settles it and goes on.
const sourceRows = [call(SOURCE, 1, 'c1', 'write_file'), dispatch(SOURCE, 2, 'op-1', 'reconcile', 1)]
const source = run(SOURCE, sourceRows)
const healthy = run(NEXT, [response(NEXT, 1, 'c1', 'write_file')], { runId: SOURCE, highWater: 2 })

const codesOf = (input: Parameters<typeof checkJournal>[0]) => checkJournal(input).map((v) => v.code)

describe('checkJournal', () => {
  it('finds nothing in a healthy lineage', () => {
    const writes = [{ token: 't', expected: 't\n', actual: Buffer.from('t\n') }]
    expect(checkJournal({ beforeResume: snapshot(source), after: snapshot(source, healthy), writes })).toEqual([])
  })

  it('response_repeated: a call answered in the source and again in the continuation', () => {
    const answered = run(SOURCE, [...sourceRows, response(SOURCE, 3, 'c1', 'write_file')])
    const again = run(NEXT, [response(NEXT, 1, 'c1', 'write_file')], { runId: SOURCE, highWater: 3 })
    expect(codesOf({ beforeResume: snapshot(answered), after: snapshot(answered, again), writes: [] })).toEqual([
      'response_repeated',
    ])
  })

  it('a response past the pinned boundary is not in the continuation history', () => {
    const answered = run(SOURCE, [...sourceRows, response(SOURCE, 3, 'c1', 'write_file')])
    expect(codesOf({ beforeResume: snapshot(answered), after: snapshot(answered, healthy), writes: [] })).toEqual([])
  })

  it('source_ledger_changed: the resume appended to the source', () => {
    const grown = run(SOURCE, [...sourceRows, response(SOURCE, 3, 'x', 'list_dir')])
    expect(codesOf({ beforeResume: snapshot(source), after: snapshot(grown, healthy), writes: [] })).toEqual([
      'source_ledger_changed',
    ])
  })

  it.for([
    ['reconcile', undefined, ['redispatch_without_not_applied']],
    ['reconcile', 'not_applied', []],
    ['reattach', undefined, ['redispatch_without_not_applied']],
    ['never_auto_retry', undefined, ['redispatch_without_not_applied']],
    ['replay_safe', undefined, []],
    ['idempotent', undefined, []],
  ] as const)('a %s operation dispatched again (priorVerdict %s) → %j', ([mode, prior, codes]) => {
    const first = run(SOURCE, [call(SOURCE, 1, 'c1', 'write_file'), dispatch(SOURCE, 2, 'op-1', mode, 1)])
    const second = run(NEXT, [dispatch(NEXT, 1, 'op-1', mode, 2, prior), response(NEXT, 2, 'c1', 'write_file')], {
      runId: SOURCE,
      highWater: 2,
    })
    expect(codesOf({ beforeResume: snapshot(first), after: snapshot(first, second), writes: [] })).toEqual(codes)
  })

  it('write_effect_wrong: a write effect holding other bytes (no file is not a violation here)', () => {
    const writes = [
      { token: 't1', expected: 't1\n', actual: Buffer.from('t') },
      { token: 't2', expected: 't2\n', actual: null },
    ]
    expect(codesOf({ beforeResume: snapshot(source), after: snapshot(source, healthy), writes })).toEqual([
      'write_effect_wrong',
    ])
  })
})

describe('journalScriptOf', () => {
  const steps = [
    { tool: 'list_dir', token: null, seconds: 0 },
    { tool: 'shell', token: 'chaos-00000001-2', seconds: 1.5 },
    { tool: 'write_file', token: 'chaos-00000001-5', seconds: 0 },
  ] as const

  it('thinks 300 ms before each call and before the closing text; a shell step records its effect first', () => {
    const script = journalScriptOf(steps) as ReadonlyArray<Record<string, unknown>>
    expect(script.filter((s) => 'delayMs' in s).map((s) => s['delayMs'])).toEqual([300, 300, 300, 300])
    expect(script.at(-1)).toEqual({ text: 'Chaos turn done.' })
    expect(script[3]).toEqual({
      toolCall: {
        name: 'shell',
        args: { command: "printf '%s\\n' chaos-00000001-2 >> effects.log && sleep 1.5 && echo done" },
      },
    })
    expect(script[5]).toEqual({
      toolCall: { name: 'write_file', args: { path: 'w/chaos-00000001-5', content: 'chaos-00000001-5\n' } },
    })
  })

  it('a self-killing shell step kills the agent named by the supervisor, or its parent without one', () => {
    const script = journalScriptOf(steps, 'chaos-00000001-2') as ReadonlyArray<Record<string, unknown>>
    expect(JSON.stringify(script[3])).toContain('&& kill -9 ${MAKA_AGENT_PID:-$PPID}')
  })
})
