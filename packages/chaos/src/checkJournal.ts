/**
 * The invariants of the tool journal (Phase 2) that `maka chaos --journal` adds to `checkInvariants`:
 * one response per tool call in every run's history, source ledgers byte-identical across a resume,
 * no second dispatch of an operation whose tool may not run again unless a probe said `not_applied`,
 * and `write_file` effects that hold exactly what the call wrote. Raw bytes and plain JSON only, like
 * the rest of the checker.
 */
import { createHash } from 'node:crypto'
import { type JsonObject, asObject, committedRows, parseObject } from './committedRows.js'
import type { DataDirSnapshot } from './DataDirSnapshot.js'
import { InvariantCode, type Violation } from './Violation.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the journal checks compare.
 * @category models
 */
export interface JournalInvariantInput {
  /** The store before the resume (after recovery): every ledger in it is a source that must not change. */
  readonly beforeResume: DataDirSnapshot
  /** The store once the resume ended (or `beforeResume` again when nothing resumed). */
  readonly after: DataDirSnapshot
  /** The bytes of each `write_file` effect's file by its token (absent: no file), and the content its call wrote. */
  readonly writes: ReadonlyArray<{ readonly token: string; readonly expected: string; readonly actual: Buffer | null }>
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

/** Modes whose operation may run again only when a probe proved the first attempt could no longer take effect. */
const ONCE_MODES: ReadonlyArray<string> = ['reconcile', 'reattach', 'never_auto_retry']

const digestOf = (bytes: Buffer | null): string =>
  bytes === null ? 'none' : createHash('sha256').update(bytes).digest('hex')

/** A run's history: its source's history cut at the pinned high-water, then its own committed rows. */
const historyOf = (snapshot: DataDirSnapshot) => {
  const memo = new Map<string, ReadonlyArray<JsonObject>>()
  const visit = (sessionId: string, runId: string, path: ReadonlySet<string>): ReadonlyArray<JsonObject> => {
    const key = `${sessionId}/${runId}`
    const known = memo.get(key)
    if (known !== undefined) return known
    const run = snapshot.runs.get(key)
    const source = asObject(parseObject(run?.header ?? null)?.['continuationSource'])
    const sourceRunId = source?.['sourceRunId']
    const highWater = source?.['sourceRuntimeEventHighWater']
    const sourceRows =
      typeof sourceRunId === 'string' && typeof highWater === 'number' && !path.has(sourceRunId)
        ? [
            ...ancestorsOf(sessionId, sourceRunId, new Set([...path, runId])),
            ...committedRows(snapshot.runs.get(`${sessionId}/${sourceRunId}`)?.ledger ?? null).slice(0, highWater),
          ]
        : []
    const rows = [...sourceRows, ...committedRows(run?.ledger ?? null)]
    memo.set(key, rows)
    return rows
  }
  // The source's own sources, each cut at the boundary it pinned.
  const ancestorsOf = (sessionId: string, runId: string, path: ReadonlySet<string>): ReadonlyArray<JsonObject> => {
    const own = committedRows(snapshot.runs.get(`${sessionId}/${runId}`)?.ledger ?? null).length
    const whole = visit(sessionId, runId, path)
    return whole.slice(0, whole.length - own)
  }
  return (sessionId: string, runId: string) => visit(sessionId, runId, new Set([runId]))
}

const checkOneResponse = (after: DataDirSnapshot): ReadonlyArray<Violation> => {
  const history = historyOf(after)
  const violations: Array<Violation> = []
  for (const run of after.runs.values()) {
    const counts = new Map<string, number>()
    for (const row of history(run.sessionId, run.runId)) {
      const content = asObject(row['content'])
      if (content?.['kind'] !== 'function_response' || typeof content['id'] !== 'string') continue
      counts.set(content['id'], (counts.get(content['id']) ?? 0) + 1)
    }
    const repeated = [...counts].filter(([, n]) => n > 1)
    if (repeated.length === 0) continue
    violations.push({
      code: InvariantCode.response_repeated,
      sessionId: run.sessionId,
      runId: run.runId,
      message: `the run's history answers tool call${repeated.length === 1 ? '' : 's'} ${repeated.map(([id, n]) => `${id} ×${n}`).join(', ')}.`,
    })
  }
  return violations
}

const checkSourcesUnchanged = (before: DataDirSnapshot, after: DataDirSnapshot): ReadonlyArray<Violation> =>
  [...before.runs].flatMap(([key, run]) => {
    const now = after.runs.get(key)?.ledger ?? null
    return digestOf(run.ledger) === digestOf(now)
      ? []
      : [
          {
            code: InvariantCode.source_ledger_changed,
            sessionId: run.sessionId,
            runId: run.runId,
            message: `the ledger's digest changed across the resume (${now === null ? 'the ledger is gone' : 'its bytes differ'}).`,
          },
        ]
  })

const checkRedispatch = (after: DataDirSnapshot): ReadonlyArray<Violation> => {
  const dispatches = new Map<
    string,
    Array<{ readonly sessionId: string; readonly runId: string; readonly dispatch: JsonObject }>
  >()
  for (const run of after.runs.values()) {
    for (const row of committedRows(run.ledger)) {
      const dispatch = asObject(asObject(row['actions'])?.['toolDispatch'])
      const operationId = dispatch?.['operationId']
      if (dispatch === null || typeof operationId !== 'string') continue
      const key = `${run.sessionId}/${operationId}`
      dispatches.set(key, [...(dispatches.get(key) ?? []), { sessionId: run.sessionId, runId: run.runId, dispatch }])
    }
  }
  const violations: Array<Violation> = []
  for (const [key, list] of [...dispatches].sort(([a], [b]) => a.localeCompare(b))) {
    const ordered = [...list].sort((a, b) => Number(a.dispatch['attempt']) - Number(b.dispatch['attempt']))
    for (const again of ordered.slice(1)) {
      const mode = String(again.dispatch['recoveryMode'])
      if (!ONCE_MODES.includes(mode) || again.dispatch['priorVerdict'] === 'not_applied') continue
      violations.push({
        code: InvariantCode.redispatch_without_not_applied,
        sessionId: again.sessionId,
        runId: again.runId,
        message: `operation ${key.slice(key.indexOf('/') + 1)} (${mode}) was dispatched again (attempt ${String(again.dispatch['attempt'])}) without priorVerdict not_applied.`,
      })
    }
  }
  return violations
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Every journal invariant the state after a resume breaks, in a stable order (by check, then by key).
 * @category constructors
 */
export const checkJournal = (input: JournalInvariantInput): ReadonlyArray<Violation> => {
  const sessionId = [...input.after.runs.values()][0]?.sessionId ?? '?'
  return [
    ...checkOneResponse(input.after),
    ...checkSourcesUnchanged(input.beforeResume, input.after),
    ...checkRedispatch(input.after),
    ...input.writes.flatMap(({ token, expected, actual }) =>
      actual === null || actual.toString('utf8') === expected
        ? []
        : [
            {
              code: InvariantCode.write_effect_wrong,
              sessionId,
              message: `the file of write effect ${token} holds ${actual.length} bytes other than what its call wrote.`,
            },
          ],
    ),
  ]
}
