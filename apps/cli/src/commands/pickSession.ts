/**
 * Which session `resume` and `resume plan` work on (decision 190): `--session`, else the most recent
 * *interrupted* session whose folder is the current folder, else the most recent interrupted session
 * of any folder (one stderr line says which folder, so the person is never surprised), else the most
 * recent session (by its `createdAt`, then its id), whose plan then says there is nothing to resume.
 * "Most recent" among interrupted sessions is by their latest run's creation. An unknown `--session`
 * is bad input (exit 2). A data directory with no session at all is not bad input but nothing to
 * resume: the planner's `planNoSession` is the plan (`resume_feature_disabled` without the flag, else
 * `resume_candidate_missing`), so the CLI parks (exit 3) exactly as `/resume` and `/plan` do in a
 * session that has no run yet.
 */
import { realpathSync } from 'node:fs'
import { normalizeCwd } from '@maka/planner'
import { type SessionSummary, mostRecentSession } from '@maka/sessions'
import { BadInputError } from '../ExitCode.js'
import { requireSession } from '../hostInput.js'
import type { Workspace } from './commandContext.js'
import { readSummaries } from './sessions.js'

// A data dir can hold many broken sessions; the line names a few.
const NAMED_SESSIONS = 5

const unreadableSentence = (unreadable: ReadonlyArray<{ readonly sessionId: string; readonly error: string }>) => {
  const [only] = unreadable
  if (only !== undefined && unreadable.length === 1)
    return `The session "${only.sessionId}" cannot be read (${only.error})`
  const named = unreadable.slice(0, NAMED_SESSIONS).map((s) => `"${s.sessionId}" (${s.error})`)
  const more = unreadable.length > NAMED_SESSIONS ? ` and ${unreadable.length - NAMED_SESSIONS} more` : ''
  return `The sessions ${named.join(', ')}${more} cannot be read`
}

/**
 * The current folder as sessions record theirs (its real path), or null when it cannot be resolved.
 * @category constructors
 */
export const currentFolder = (cwd: string = process.cwd()): string | null => {
  try {
    return normalizeCwd(realpathSync(cwd))
  } catch {
    return null
  }
}

const instant = (text: string | null | undefined): number => {
  const ms = text === null || text === undefined ? Number.NaN : Date.parse(text)
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms
}

/**
 * Interrupted sessions, the most recently interrupted first (by their latest run's creation, then id).
 * @category constructors
 */
export const interruptedFirst = (summaries: ReadonlyArray<SessionSummary>): ReadonlyArray<SessionSummary> =>
  summaries
    .filter((s) => s.interrupted && s.error === undefined)
    .slice()
    .sort(
      (a, b) =>
        instant(b.latestRun?.createdAt ?? b.createdAt) - instant(a.latestRun?.createdAt ?? a.createdAt) ||
        (a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0),
    )

/**
 * The session id to resume or plan; null when the data directory holds no session. Sessions whose
 * `session.json` cannot be read are no session to pick, but when they are all there is, the answer
 * is not "no sessions" (which `maka sessions` would contradict): it is bad input naming them.
 * @category constructors
 */
export const pickSession = async (
  workspace: Workspace,
  sessionFlag: string | undefined,
  folder: string | null = currentFolder(),
  say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<string | null> => {
  if (sessionFlag !== undefined) {
    await requireSession(workspace.stores, workspace.dataDir, sessionFlag)
    return sessionFlag
  }
  const summaries = await readSummaries(workspace)
  const interrupted = interruptedFirst(summaries)
  const here = interrupted.find((s) => folder !== null && s.cwd === folder)
  if (here !== undefined) return here.sessionId
  const elsewhere = interrupted[0]
  if (elsewhere !== undefined) {
    say(
      `maka: no interrupted session in this folder; resuming ${elsewhere.sessionId}${
        elsewhere.title === undefined ? '' : ` "${elsewhere.title}"`
      } of ${elsewhere.cwd ?? 'an unknown folder'}.`,
    )
    return elsewhere.sessionId
  }
  const readable = summaries.filter((s) => s.error === undefined)
  const latest = mostRecentSession(readable)
  const unreadable = summaries.flatMap((s) =>
    // A folder whose `session.json` was never written is no session, not a broken one.
    s.error === undefined || s.error === 'NotFound' ? [] : [{ sessionId: s.sessionId, error: s.error }],
  )
  if (latest === undefined && unreadable.length > 0) {
    throw new BadInputError(`${unreadableSentence(unreadable)}, and ${workspace.dataDir.path} holds no other session.`)
  }
  return latest?.sessionId ?? null
}
