/**
 * `maka show SESSION [--json]`: the session's runs as a lineage tree (continuations under their
 * source, child runs under their parent) and each ledger as a timeline with the Phase 0 status of
 * every tool operation, and each settlement of an earlier run's operation (reissued, reconciled,
 * reattached, adjudicated by a person — with the verdict and the host) on both runs it joins. Read-only. Exit 0; an unknown session is bad input (exit 2); a ledger that
 * changed between its two reads cuts the output off (exit 1, decisions.md #103).
 *
 * Each ledger is folded once before anything is printed and its timeline streamed from a second
 * read while it prints, so a million-row session holds no ledger and no whole output.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { RunOutline, Settlement } from '@maka/sessions'
import { BadInputError, ExitCode, ShowCutOffError } from '../ExitCode.js'
import type { GlobalFlags, JsonFlag } from '../CommandFlags.js'
import { type ChunkedWriter, type TextSink, makeChunkedWriter } from '../chunkedOutput.js'
import { requireSafeId, requireSession } from '../hostInput.js'
import { type SessionOutline, loadSessionOutline } from '../sessionCatalog.js'
import { type Style, styleForStdout } from '../Style.js'
import { openDataDir } from './commandContext.js'

const runHeadline = (run: RunOutline, style: Style): string => {
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

/**
 * How an operation was settled, in words: reissued, reconciled, reattached, or adjudicated by a
 * person (the verdict and the host it was recorded through).
 * @category constructors
 */
export const describeSettlement = (settlement: Settlement): string => {
  switch (settlement.settlementOrigin) {
    case null:
      return `${settlement.action ?? 'settlement'} planned, never written (the run stopped first)`
    case 'reissue_t2':
      return 'reissued (run again)'
    case 'pre_t1_synthetic':
      return 'reissued, then refused before it ran'
    case 'reconcile_applied':
      return 'reconciled: a probe found it applied'
    case 'reattached':
      return 'reattached: the command was watched to its end'
    case 'operator_adjudication':
      return `adjudicated by a person: ${settlement.verdict ?? '?'} (through ${settlement.actor ?? '?'})`
    case 'normal_t2':
      return 'answered'
  }
}

// Streams one run's timeline through `each`; a ledger that changed since the outline was made
// stops the output.
const streamTimeline = async (
  outline: SessionOutline,
  runId: string,
  each: Parameters<SessionOutline['timeline']>[1],
): Promise<void> => {
  const streamed = await outline.timeline(runId, each)
  if (E.isLeft(streamed)) throw new ShowCutOffError(streamed.left)
}

/**
 * The tree, depth-first, each run followed by its timeline, a line at a time.
 * @category constructors
 */
export const writeOutlineLines = async (sink: TextSink, outline: SessionOutline, style: Style): Promise<void> => {
  const out = makeChunkedWriter(sink)
  const line = (text: string) => out.emit(`${text}\n`)
  const byId = new Map(outline.runs.map((run) => [run.runId, run]))
  await line(
    `${style.bold(`session ${outline.session.sessionId}`)}${
      outline.session.title === undefined || outline.session.title === ''
        ? ''
        : ` ${JSON.stringify(outline.session.title)}`
    } ${style.dim(`${outline.session.createdAt} ${outline.session.cwd}`)}`,
  )
  if (outline.runs.length === 0) await line('  (no runs)')
  const seen = new Set<string>()
  const visit = async (runId: string, depth: number): Promise<void> => {
    const run = byId.get(runId)
    if (run === undefined || seen.has(runId)) return
    seen.add(runId)
    const indent = '  '.repeat(depth + 1)
    await line(`${indent}${depth === 0 ? '●' : '└─'} ${runHeadline(run, style)}`)
    for (const settlement of run.settlements ?? []) {
      await line(
        `${indent}   settles call ${settlement.toolCallId} (operation ${settlement.operationId}): ${describeSettlement(settlement)}`,
      )
    }
    // A batch's lines go out in one emit, not an await per row.
    await streamTimeline(outline, runId, (entries) => {
      let text = ''
      for (const entry of entries) {
        const marks = [
          ...(entry.operationStatus === undefined ? [] : [entry.operationStatus]),
          ...(entry.settlement === undefined ? [] : [`settles operation ${entry.settlement.operationId}`]),
          ...(entry.settledBy === undefined
            ? []
            : [`settled in ${entry.settledBy.runId}: ${describeSettlement(entry.settledBy)}`]),
        ]
        const op = marks.length === 0 ? '' : ` ${style.dim(`[${marks.join('; ')}]`)}`
        text += `${indent}   ${`${String(entry.index).padStart(3)}. ${entry.role.padEnd(6)} ${entry.kind.padEnd(19)} ${entry.text}${op}`.trimEnd()}\n`
      }
      return out.emit(text)
    })
    if (run.ledgerProblem !== undefined)
      await line(`${indent}        ${style.red(`ledger problem: ${run.ledgerProblem}`)}`)
    if (run.tornTail) await line(`${indent}        ${style.yellow('torn last row (never committed, ignored)')}`)
    for (const child of run.children) await visit(child, depth + 1)
  }
  for (const root of outline.roots) await visit(root, 0)
  // A cycle of parents leaves runs no root reaches; show them rather than hide them.
  for (const run of outline.runs) await visit(run.runId, 0)
  await out.flush()
}

// A marker that cannot occur in JSON text (a raw NUL is always escaped by JSON.stringify).
const marker = (n: number): string => JSON.stringify(`\u0000timeline ${n}\u0000`)

// One run's timeline as `JSON.stringify(…, null, 2)` prints an array of objects at this depth.
const writeTimelineJson = async (out: ChunkedWriter, outline: SessionOutline, runId: string, indent: number) => {
  const itemIndent = `\n${' '.repeat(indent + 2)}`
  let first = true
  await out.emit('[')
  await streamTimeline(outline, runId, (entries) => {
    let text = ''
    for (const entry of entries) {
      text += `${first ? '' : ','}${itemIndent}${JSON.stringify(entry, null, 2).replaceAll('\n', itemIndent)}`
      first = false
    }
    return out.emit(text)
  })
  await out.emit(first ? ']' : `\n${' '.repeat(indent)}]`)
}

/**
 * The outline as the indented JSON of `{ session, roots, runs }`, each run with its `timeline`
 * array, streamed: the same text `JSON.stringify(…, null, 2)` gives the same value.
 * @category constructors
 */
export const writeOutlineJson = async (sink: TextSink, outline: SessionOutline): Promise<void> => {
  const out = makeChunkedWriter(sink)
  const { session, roots, runs } = outline
  let rest = JSON.stringify(
    { session, roots, runs: runs.map((run, n) => ({ ...run, timeline: `\u0000timeline ${n}\u0000` })) },
    null,
    2,
  )
  for (const [n, run] of runs.entries()) {
    const at = rest.indexOf(marker(n))
    const lineStart = rest.lastIndexOf('\n', at) + 1
    await out.emit(rest.slice(0, at))
    await writeTimelineJson(out, outline, run.runId, rest.slice(lineStart).search(/\S/))
    rest = rest.slice(at + marker(n).length)
  }
  await out.emit(`${rest}\n`)
  await out.flush()
}

/**
 * Shows one session.
 * @category constructors
 */
export const show = async (sessionId: string, flags: JsonFlag, globals: GlobalFlags): Promise<ExitCode> => {
  requireSafeId('session', sessionId)
  const workspace = await openDataDir(globals, 'read')
  const session = await requireSession(workspace.stores, workspace.dataDir, sessionId)
  const outline = await loadSessionOutline(workspace.stores, session)
  if (E.isLeft(outline))
    throw new BadInputError(`The runs of session "${sessionId}" cannot be listed (${outline.left}).`)
  if (flags.json === true) await writeOutlineJson(process.stdout, outline.right)
  else await writeOutlineLines(process.stdout, outline.right, styleForStdout())
  return ExitCode.ok
}
