/**
 * Which session `resume` and `resume plan` work on: `--session`, else the most recent one (by its
 * `createdAt`, then its id). An unknown `--session` is bad input (exit 2). A data directory with no
 * session at all is not bad input but nothing to resume: the planner's `planNoSession` is the plan
 * (`resume_feature_disabled` without the flag, else `resume_candidate_missing`), so the CLI parks
 * (exit 3) exactly as `/resume` and `/plan` do in a session that has no run yet.
 */
import * as E from 'fp-ts/lib/Either.js'
import { findMostRecentSession } from '@maka/sessions'
import { BadInputError } from '../ExitCode.js'
import { requireSession } from '../hostInput.js'
import type { Workspace } from './commandContext.js'

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
 * The session id to resume or plan; null when the data directory holds no session. Sessions whose
 * `session.json` cannot be read are no session to pick, but when they are all there is, the answer
 * is not "no sessions" (which `maka sessions` would contradict): it is bad input naming them.
 * @category constructors
 */
export const pickSession = async (workspace: Workspace, sessionFlag: string | undefined): Promise<string | null> => {
  if (sessionFlag !== undefined) {
    await requireSession(workspace.stores, workspace.dataDir, sessionFlag)
    return sessionFlag
  }
  const found = workspace.dataDir.exists
    ? await findMostRecentSession(workspace.stores)
    : E.right({ sessionId: undefined, unreadable: [] })
  if (E.isLeft(found)) {
    throw new BadInputError(
      `The sessions of the data directory ${workspace.dataDir.path} cannot be listed (${found.left}).`,
    )
  }
  const { sessionId, unreadable } = found.right
  if (sessionId === undefined && unreadable.length > 0) {
    throw new BadInputError(`${unreadableSentence(unreadable)}, and ${workspace.dataDir.path} holds no other session.`)
  }
  return sessionId ?? null
}
