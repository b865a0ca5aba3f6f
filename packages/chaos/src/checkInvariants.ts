/**
 * The invariant checker of `maka chaos`: given the data directory before and after a phase of
 * SIGKILLed children (and the side effects counted in the workspace), it lists every invariant of
 * the contract that the files on disk break. It judges raw bytes and plain JSON, with no codec of the
 * product, so a bug in the product's reader cannot hide a bug in its writer.
 */
import {
  type JsonObject,
  asObject,
  committedPrefix,
  committedRows,
  parseObject,
  unparsableLines,
} from './committedRows.js'
import type { DataDirSnapshot, EffectCounts, RunFiles } from './DataDirSnapshot.js'
import { InvariantCode, type Violation } from './Violation.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What one check compares.
 * @category models
 */
export interface InvariantInput {
  /** The data dir before the phase (`emptySnapshot` before the first one). */
  readonly before: DataDirSnapshot
  /** The data dir after the phase, once every child has ended. */
  readonly after: DataDirSnapshot
  /** Side effects per token, counted in the workspace. */
  readonly effects: EffectCounts
  /** The side-effect token a tool call's arguments carry, or null for a call that has none. */
  readonly tokenOf: (toolName: string, args: unknown) => string | null
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

type Json = JsonObject

const TERMINAL_RUN_STATUSES: ReadonlyArray<string> = ['completed', 'failed', 'cancelled']

const runStatusOfTerminalEvent = (status: unknown): string | null =>
  status === 'completed'
    ? 'completed'
    : status === 'failed'
      ? 'failed'
      : status === 'aborted' || status === 'cancelled'
        ? 'cancelled'
        : null

const isTerminalRow = (row: Json): boolean =>
  row['partial'] === false &&
  asObject(row['actions'])?.['endInvocation'] === true &&
  runStatusOfTerminalEvent(row['status']) !== null

const boundaryOf = (source: Json | null): string | null => {
  if (source === null) return null
  const runId = source['sourceRunId']
  const highWater = source['sourceRuntimeEventHighWater']
  return typeof runId === 'string' && typeof highWater === 'number' ? `${runId}@${highWater}` : null
}

const startRowBoundary = (rows: ReadonlyArray<Json>): string | null => {
  const first = rows[0]
  if (first === undefined || asObject(asObject(first['actions'])?.['stateDelta'])?.['continuationStart'] !== true) {
    return null
  }
  return boundaryOf(asObject(first['refs']))
}

const checkTerminalHeader = (run: RunFiles, header: Json, rows: ReadonlyArray<Json>): ReadonlyArray<Violation> => {
  const status = header['status']
  if (typeof status !== 'string' || !TERMINAL_RUN_STATUSES.includes(status)) return []
  const ends = rows.filter(isTerminalRow).map((row) => runStatusOfTerminalEvent(row['status']))
  if (ends.includes(status)) return []
  return [
    {
      code: InvariantCode.terminal_header_without_event,
      sessionId: run.sessionId,
      runId: run.runId,
      message:
        ends.length === 0
          ? `run.json says ${status}, but the ledger holds no terminal event.`
          : `run.json says ${status}, but the ledger's terminal event says ${ends.join(', ')}.`,
    },
  ]
}

const isRecoveredRow = (row: Json): boolean =>
  asObject(asObject(row['actions'])?.['stateDelta'])?.['recovered'] === true

const idOf = (row: Json): string => (typeof row['id'] === 'string' ? row['id'] : '?')

/**
 * Signs that two processes wrote one run at once: one run has a single owner, so its ledger holds at
 * most one terminal event, at most one repair, and no row id twice (docs/contract.md §1). Each sign has
 * its own code, so a report says which writers collided, not only that the ledger is now unreadable.
 */
const checkSingleWriter = (run: RunFiles, rows: ReadonlyArray<Json>): ReadonlyArray<Violation> => {
  const violations: Array<Violation> = []
  const where = { sessionId: run.sessionId, runId: run.runId }
  const terminals = rows.filter(isTerminalRow)
  const recovered = terminals.filter(isRecoveredRow)
  if (recovered.length > 1) {
    violations.push({
      code: InvariantCode.duplicate_repair,
      ...where,
      message: `the ledger holds ${recovered.length} recovered terminal events (rows ${recovered.map(idOf).join(', ')}): more than one process repaired the run.`,
    })
  }
  if (terminals.length > 1 && terminals.length > recovered.length) {
    violations.push({
      code: InvariantCode.duplicate_terminal,
      ...where,
      message: `the ledger holds ${terminals.length} terminal events (rows ${terminals.map(idOf).join(', ')}; ${recovered.length} by recovery).`,
    })
  }
  const seen = new Map<string, number>()
  for (const row of rows) if (typeof row['id'] === 'string') seen.set(row['id'], (seen.get(row['id']) ?? 0) + 1)
  const repeated = [...seen].filter(([, n]) => n > 1)
  if (repeated.length > 0) {
    violations.push({
      code: InvariantCode.duplicate_row_id,
      ...where,
      message: `committed row ids repeat: ${repeated.map(([id, n]) => `${id} ×${n}`).join(', ')}.`,
    })
  }
  return violations
}

/** A ledger whose committed rows all parsed before the phase (or that did not exist) and that no longer does. */
const checkStillReadable = (before: DataDirSnapshot, after: DataDirSnapshot): ReadonlyArray<Violation> => {
  const violations: Array<Violation> = []
  for (const [key, run] of after.runs) {
    const bad = unparsableLines(run.ledger)
    if (bad.length === 0 || unparsableLines(before.runs.get(key)?.ledger ?? null).length > 0) continue
    violations.push({
      code: InvariantCode.ledger_unreadable_after_phase,
      sessionId: run.sessionId,
      runId: run.runId,
      message: `committed line${bad.length === 1 ? '' : 's'} ${bad.join(', ')} of the ledger ${bad.length === 1 ? 'is' : 'are'} not a JSON object; every committed line parsed before the phase.`,
    })
  }
  return violations
}

const checkAgainstBefore = (before: DataDirSnapshot, after: DataDirSnapshot): ReadonlyArray<Violation> => {
  const violations: Array<Violation> = []
  for (const [key, old] of before.runs) {
    const now = after.runs.get(key)
    const prefix = committedPrefix(old.ledger)
    const ledgerNow = now?.ledger ?? null
    if (prefix.length > 0 && (ledgerNow === null || !ledgerNow.subarray(0, prefix.length).equals(prefix))) {
      const rows = prefix.toString('utf8').split('\n').length - 1
      violations.push({
        code: InvariantCode.committed_row_changed,
        sessionId: old.sessionId,
        runId: old.runId,
        message:
          ledgerNow === null
            ? `the ledger with ${rows} committed rows is gone.`
            : `the ${rows} rows committed before the phase are no longer byte-identical.`,
      })
    }
    const oldStatus = parseObject(old.header)?.['status']
    if (typeof oldStatus === 'string' && TERMINAL_RUN_STATUSES.includes(oldStatus)) {
      const newStatus = parseObject(now?.header ?? null)?.['status']
      const ledgerSame =
        (old.ledger === null && ledgerNow === null) || (old.ledger !== null && ledgerNow?.equals(old.ledger) === true)
      if (!ledgerSame || newStatus !== oldStatus) {
        violations.push({
          code: InvariantCode.terminal_ledger_changed,
          sessionId: old.sessionId,
          runId: old.runId,
          message: !ledgerSame
            ? `the run was ${oldStatus}, and its ledger changed afterwards.`
            : `the run was ${oldStatus}, and its header now says ${String(newStatus)}.`,
        })
      }
    }
  }
  for (const [key, claim] of before.claims) {
    const now = after.claims.get(key)
    if (now === undefined || !now.bytes.equals(claim.bytes)) {
      violations.push({
        code: InvariantCode.claim_changed,
        sessionId: claim.sessionId,
        message: `the claim ${claim.name} ${now === undefined ? 'disappeared' : 'changed'}.`,
      })
    }
  }
  return violations
}

/**
 * For a run, the tokens of the tool calls answered successfully in the history it continues: the
 * committed rows of its source up to the boundary's high-water, and of the source's own sources.
 */
const answeredInHistory = (
  after: DataDirSnapshot,
  tokenOf: InvariantInput['tokenOf'],
): ((sessionId: string, runId: string) => ReadonlySet<string>) => {
  const memo = new Map<string, ReadonlySet<string>>()
  const answeredIn = (rows: ReadonlyArray<Json>): ReadonlyArray<string> => {
    const tokens = new Map<string, string>()
    const answered: Array<string> = []
    for (const row of rows) {
      const content = asObject(row['content'])
      const id = content?.['id']
      if (content === null || typeof id !== 'string') continue
      if (content['kind'] === 'function_call' && typeof content['name'] === 'string') {
        const token = tokenOf(content['name'], content['args'])
        if (token !== null) tokens.set(id, token)
      } else if (content['kind'] === 'function_response' && content['isError'] !== true) {
        const token = tokens.get(id)
        if (token !== undefined) answered.push(token)
      }
    }
    return answered
  }
  const visit = (sessionId: string, runId: string, path: ReadonlySet<string>): ReadonlySet<string> => {
    const key = `${sessionId}/${runId}`
    const known = memo.get(key)
    if (known !== undefined) return known
    const source = asObject(asObject(parseObject(after.runs.get(key)?.header ?? null))?.['continuationSource'])
    const sourceRunId = source?.['sourceRunId']
    const highWater = source?.['sourceRuntimeEventHighWater']
    const tokens = new Set<string>()
    if (typeof sourceRunId === 'string' && typeof highWater === 'number' && !path.has(sourceRunId)) {
      const rows = committedRows(after.runs.get(`${sessionId}/${sourceRunId}`)?.ledger ?? null).slice(0, highWater)
      for (const token of answeredIn(rows)) tokens.add(token)
      for (const token of visit(sessionId, sourceRunId, new Set([...path, runId]))) tokens.add(token)
    }
    memo.set(key, tokens)
    return tokens
  }
  return (sessionId, runId) => visit(sessionId, runId, new Set([runId]))
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Every invariant the files break, in a stable order (by check, then by key).
 * @category constructors
 */
export const checkInvariants = (input: InvariantInput): ReadonlyArray<Violation> => {
  const { after, effects, tokenOf } = input
  const violations: Array<Violation> = []
  // boundary key → runs that continue it; tool call → its token; succeeded calls
  const holders = new Map<string, Set<string>>()
  const callToken = new Map<string, { readonly sessionId: string; readonly runId: string; readonly token: string }>()
  const succeeded: Array<{ readonly sessionId: string; readonly runId: string; readonly callId: string }> = []
  const hold = (sessionId: string, boundary: string | null, runId: string) => {
    if (boundary === null) return
    const key = `${sessionId}/${boundary}`
    const set = holders.get(key) ?? new Set<string>()
    set.add(runId)
    holders.set(key, set)
  }

  for (const run of after.runs.values()) {
    const header = parseObject(run.header)
    const rows = committedRows(run.ledger)
    if (header !== null) violations.push(...checkTerminalHeader(run, header, rows))
    const pinned = boundaryOf(asObject(header?.['continuationSource']))
    hold(run.sessionId, pinned, run.runId)
    hold(run.sessionId, startRowBoundary(rows), run.runId)
    if (pinned !== null) {
      const claim = parseObject(after.claims.get(`${run.sessionId}/${pinned}.json`)?.bytes ?? null)
      if (claim?.['targetRunId'] !== run.runId) {
        violations.push({
          code: InvariantCode.continuation_without_claim,
          sessionId: run.sessionId,
          runId: run.runId,
          message:
            claim === null
              ? `the run continues ${pinned}, but no claim file holds that boundary.`
              : `the run continues ${pinned}, but its claim names ${String(claim['targetRunId'])}.`,
        })
      }
    }
    for (const row of rows) {
      const content = asObject(row['content'])
      const callId = content?.['id']
      if (content === null || typeof callId !== 'string') continue
      if (content['kind'] === 'function_call' && typeof content['name'] === 'string') {
        const token = tokenOf(content['name'], content['args'])
        if (token !== null)
          callToken.set(`${run.sessionId}/${callId}`, { sessionId: run.sessionId, runId: run.runId, token })
      } else if (content['kind'] === 'function_response' && content['isError'] !== true) {
        succeeded.push({ sessionId: run.sessionId, runId: run.runId, callId })
      }
    }
  }

  for (const [key, runs] of holders) {
    if (runs.size < 2) continue
    violations.push({
      code: InvariantCode.duplicate_continuation,
      sessionId: key.slice(0, key.indexOf('/')),
      message: `the boundary ${key.slice(key.indexOf('/') + 1)} is continued by ${runs.size} runs: ${[...runs].sort().join(', ')}.`,
    })
  }

  const seenInHistory = answeredInHistory(after, tokenOf)
  for (const [token, count] of [...effects].sort(([a], [b]) => a.localeCompare(b))) {
    if (count < 2) continue
    const calls = [...callToken].filter(([, c]) => c.token === token)
    // A call made after its run's history already held a successful answer of the same token is the
    // model asking again with the answer in view — a chaos script written before a concurrent
    // resumer of the same round answered it — not the product executing one call twice.
    const askedAgain = calls.filter(([, c]) => seenInHistory(c.sessionId, c.runId).has(token)).length
    if (count - 1 <= askedAgain) continue
    violations.push({
      code: InvariantCode.side_effect_repeated,
      sessionId: calls[0]?.[1].sessionId ?? '?',
      ...(calls[0] === undefined ? {} : { runId: calls[0][1].runId }),
      message: `the side effect ${token} happened ${count} times (tool calls ${calls.map(([k]) => k.slice(k.indexOf('/') + 1)).join(', ') || 'none committed'}).`,
    })
  }
  for (const call of succeeded) {
    const token = callToken.get(`${call.sessionId}/${call.callId}`)?.token
    if (token === undefined || (effects.get(token) ?? 0) > 0) continue
    violations.push({
      code: InvariantCode.side_effect_missing,
      sessionId: call.sessionId,
      runId: call.runId,
      message: `tool call ${call.callId} has a committed successful response, but its side effect ${token} never happened.`,
    })
  }

  violations.push(...checkAgainstBefore(input.before, after))
  for (const run of after.runs.values()) violations.push(...checkSingleWriter(run, committedRows(run.ledger)))
  violations.push(...checkStillReadable(input.before, after))
  return violations
}
