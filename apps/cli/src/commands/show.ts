/**
 * `maka show SESSION [--json]`: the session's runs as a lineage tree (continuations under their
 * source, child runs under their parent) and each ledger as a timeline with the Phase 0 status of
 * every tool operation. Read-only. Exit 0; an unknown session is bad input (exit 2).
 */
import * as E from 'fp-ts/lib/Either.js'
import { BadInputError, ExitCode } from '../ExitCode.js'
import { requireSafeId, requireSession } from '../hostInput.js'
import type { GlobalFlags, JsonFlag } from '../CommandFlags.js'
import { type RunDetail, type SessionDetail, loadSessionDetail } from '../sessionCatalog.js'
import { type Style, styleForStdout } from '../Style.js'
import { openDataDir, say, sayJson } from './commandContext.js'

const runHeadline = (run: RunDetail, style: Style): string => {
  const header = run.header
  if (header === null) return `${style.bold(run.runId)} ${style.red(`unreadable header (${run.headerError ?? '?'})`)}`
  const status =
    header.status === 'completed'
      ? style.green(header.status)
      : header.status === 'failed'
        ? style.red(header.status)
        : style.yellow(header.status)
  const failure = header.failureClass === undefined ? '' : ` (${header.failureClass})`
  const source = header.continuationSource
  const from = source === undefined ? '' : ` from ${source.sourceRunId} @ ${source.sourceRuntimeEventHighWater}`
  const rows = run.highWater === null ? 'ledger unreadable' : `${run.highWater} row${run.highWater === 1 ? '' : 's'}`
  return `${style.bold(run.runId)} ${run.kind}${from} ${status}${failure} ${style.dim(`${rows}, ${header.providerId}/${header.modelId}, ${header.createdAt}`)}`
}

const timelineLines = (run: RunDetail, style: Style): ReadonlyArray<string> => {
  const lines = run.timeline.map((entry) => {
    const op = entry.operationStatus === undefined ? '' : ` ${style.dim(`[${entry.operationStatus}]`)}`
    return `${String(entry.index).padStart(3)}. ${entry.role.padEnd(6)} ${entry.kind.padEnd(19)} ${entry.text}${op}`.trimEnd()
  })
  if (run.ledgerProblem !== undefined) lines.push(`     ${style.red(`ledger problem: ${run.ledgerProblem}`)}`)
  if (run.tornTail) lines.push(`     ${style.yellow('torn last row (never committed, ignored)')}`)
  return lines
}

/**
 * The tree, depth-first, each run followed by its timeline.
 * @category constructors
 */
export const detailLines = (detail: SessionDetail, style: Style): ReadonlyArray<string> => {
  const byId = new Map(detail.runs.map((run) => [run.runId, run]))
  const lines: Array<string> = [
    `${style.bold(`session ${detail.session.sessionId}`)} ${style.dim(`${detail.session.createdAt} ${detail.session.cwd}`)}`,
  ]
  if (detail.runs.length === 0) lines.push('  (no runs)')
  const visit = (runId: string, depth: number, seen: Set<string>) => {
    const run = byId.get(runId)
    if (run === undefined || seen.has(runId)) return
    seen.add(runId)
    const indent = '  '.repeat(depth + 1)
    lines.push(`${indent}${depth === 0 ? '●' : '└─'} ${runHeadline(run, style)}`)
    for (const line of timelineLines(run, style)) lines.push(`${indent}   ${line}`)
    for (const child of run.children) visit(child, depth + 1, seen)
  }
  const seen = new Set<string>()
  for (const root of detail.roots) visit(root, 0, seen)
  // A cycle of parents leaves runs no root reaches; show them rather than hide them.
  for (const run of detail.runs) visit(run.runId, 0, seen)
  return lines
}

/**
 * Shows one session.
 * @category constructors
 */
export const show = async (sessionId: string, flags: JsonFlag, globals: GlobalFlags): Promise<ExitCode> => {
  requireSafeId('session', sessionId)
  const workspace = await openDataDir(globals, 'read')
  const session = await requireSession(workspace.stores, workspace.dataDir, sessionId)
  const detail = await loadSessionDetail(workspace.stores, session)
  if (E.isLeft(detail)) throw new BadInputError(`The runs of session "${sessionId}" cannot be listed (${detail.left}).`)
  if (flags.json === true) {
    sayJson(detail.right)
    return ExitCode.ok
  }
  for (const line of detailLines(detail.right, styleForStdout())) say(line)
  return ExitCode.ok
}
