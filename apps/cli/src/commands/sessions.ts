/**
 * `maka sessions [--json]`: every session with its latest top-level run and an "interrupted" mark.
 * Read-only; a data directory that does not exist yet has no sessions. Exit 0.
 */
import * as E from 'fp-ts/lib/Either.js'
import { BadInputError, ExitCode } from '../ExitCode.js'
import type { GlobalFlags, JsonFlag } from '../CommandFlags.js'
import { ownerLockLiveness } from '@maka/host-inspector'
import { type SessionSummary, listSessionSummaries } from '@maka/sessions'
import { type Style, styleForStdout } from '../Style.js'
import { type Workspace, openDataDir, say, sayJson } from './commandContext.js'

/**
 * The summaries of a checked data directory; an unlistable one is bad input.
 * @category constructors
 */
export const readSummaries = async (workspace: Workspace): Promise<ReadonlyArray<SessionSummary>> => {
  if (!workspace.dataDir.exists) return []
  const summaries = await listSessionSummaries(workspace.stores, ownerLockLiveness)
  if (E.isLeft(summaries)) {
    throw new BadInputError(
      `The sessions of the data directory ${workspace.dataDir.path} cannot be listed (${summaries.left}).`,
    )
  }
  return summaries.right
}

/**
 * One line per session.
 * @category constructors
 */
export const sessionLine = (s: SessionSummary, style: Style): string => {
  const latest = s.latestRun
  const status =
    latest === null
      ? s.unreadableRuns.length === 0
        ? 'no runs'
        : 'no readable run'
      : `${latest.kind} ${latest.runId} ${latest.status}${latest.failureClass === undefined ? '' : ` (${latest.failureClass})`}`
  // A live owner of a run that says `running` needs no second word for it; of any other it is in use.
  const mark = s.interrupted
    ? ` ${style.yellow('[interrupted]')}`
    : s.ownerAlive && latest?.status !== 'running'
      ? ` ${style.cyan('[in use]')}`
      : ''
  const where = s.error !== undefined ? `session.json ${s.error}` : `${s.createdAt ?? '?'} ${s.cwd ?? '?'}`
  // A broken header might be the latest run: say so next to the status instead of counting it away.
  const broken =
    s.unreadableRuns.length === 0
      ? ''
      : ` ${style.red(`[unreadable run${s.unreadableRuns.length === 1 ? '' : 's'}: ${s.unreadableRuns.map((r) => `${r.runId} (${r.error})`).join(', ')}]`)}`
  // A session is named by its first prompt where it has a title (sessions made before titles have none).
  const title = s.title === undefined || s.title === '' ? '' : `  ${JSON.stringify(s.title)}`
  return `${style.bold(s.sessionId)}${title}  ${status}${mark}${broken}  ${style.dim(`${s.runCount} run${s.runCount === 1 ? '' : 's'}, ${where}`)}`
}

/**
 * Lists the sessions.
 * @category constructors
 */
export const sessions = async (flags: JsonFlag, globals: GlobalFlags): Promise<ExitCode> => {
  const workspace = await openDataDir(globals, 'read')
  const summaries = await readSummaries(workspace)
  if (flags.json === true) {
    sayJson({ dataDir: workspace.dataDir.path, sessions: summaries })
    return ExitCode.ok
  }
  const style = styleForStdout()
  if (summaries.length === 0) say(`No sessions in ${workspace.dataDir.path}.`)
  for (const summary of summaries) say(sessionLine(summary, style))
  return ExitCode.ok
}
